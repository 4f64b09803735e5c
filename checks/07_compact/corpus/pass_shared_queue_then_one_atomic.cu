// step: 07_compact/03_unordered.cu
// emulated: PASS
//
// Correct (unordered): a two-level queue. Each keeping thread takes a slot in a block-local
// queue with a shared-memory atomicAdd and stages its element there; after a barrier thread 0
// reads the queue's length (plainly: the barrier orders it after every shared atomic) and
// reserves that many slots in the output with one global atomicAdd; after a second barrier the
// block copies the staged elements out, consecutive threads to consecutive addresses. The
// queue is reset for the next tile of the grid-stride loop only after a barrier that follows
// every read of it. Tiles of 1024 (256 threads x 4 elements).
#include "compact.cuh"

constexpr unsigned int kBlock = 256;
constexpr unsigned int kTileItems = 4 * kBlock;

__global__ void queue_kernel(const float* __restrict__ in, size_t n, float threshold,
                             float* __restrict__ out, unsigned int* count) {
    __shared__ float staged[kTileItems];
    __shared__ unsigned int queued, base;
    const size_t tiles = (n + kTileItems - 1) / kTileItems;
    if (threadIdx.x == 0) queued = 0;
    __syncthreads();
    for (size_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        for (unsigned int k = threadIdx.x; k < kTileItems; k += kBlock) {
            const size_t i = tile * kTileItems + k;
            if (i < n && in[i] > threshold) staged[atomicAdd(&queued, 1u)] = in[i];
        }
        __syncthreads();
        const unsigned int length = queued;
        if (threadIdx.x == 0 && length != 0) base = atomicAdd(count, length);
        __syncthreads();
        for (unsigned int k = threadIdx.x; k < length; k += kBlock) out[base + k] = staged[k];
        __syncthreads();  // every read of queued, base and staged before the reset
        if (threadIdx.x == 0) queued = 0;
        __syncthreads();
    }
}

extern "C" cudaError_t compact_unordered(const float* in, float* out, unsigned int* count, size_t n,
                                         float threshold, void* workspace, size_t workspace_bytes,
                                         cudaStream_t stream) {
    (void)workspace, (void)workspace_bytes;
    cudaError_t err = cudaMemsetAsync(count, 0, sizeof(unsigned int), stream);
    if (err != cudaSuccess) return err;
    const size_t tiles = (n + kTileItems - 1) / kTileItems;
    if (tiles == 0) return cudaGetLastError();
    unsigned int grid = 0;
    err = one_wave_grid(kBlock, tiles, &grid);
    if (err != cudaSuccess) return err;
    queue_kernel<<<grid, kBlock, 0, stream>>>(in, n, threshold, out, count);
    return cudaGetLastError();
}
