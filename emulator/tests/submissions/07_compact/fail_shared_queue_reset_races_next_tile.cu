// step: 07_compact/03_unordered.cu
// emulated: CRASH
//
// Buggy: a two-level queue (shared atomicAdd into a block-local queue, one global atomicAdd per
// tile, coalesced copy-out) in a grid-stride loop, whose reset of the shared queue length has
// no barrier after it: thread 0 sets `queued = 0` while threads that already passed the
// previous barrier start the next tile and atomicAdd into it. A plain store racing with shared
// atomics: increments are lost (two elements in one slot), or the reset wipes them.
// Seen only when a block runs two tiles: the emulated device has one SM, so one_wave_grid's
// blocks go round the loop at the emulated sizes. The race is reported (MEMORY_ERROR) on most
// cases; the step's verdict is CRASH, from the cases where lost increments overflow the queue.
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
        __syncthreads();                   // every read of queued, base and staged before the reset
        if (threadIdx.x == 0) queued = 0;  // BUG: the next tile's atomics may come first
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
