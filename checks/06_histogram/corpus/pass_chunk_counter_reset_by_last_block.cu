// step: 06_histogram/03_block_private.cu
// emulated: PASS
//
// Correct: step 3 with dynamic work distribution. A one-wave grid of persistent blocks takes
// chunks of 4096 keys from a global counter (`next_chunk`, thread 0's atomicAdd, handed to the
// block through shared memory) until the chunks run out. The counters live in __device__
// variables that must start at 0 at every call, so the last block to retire resets them, as
// the CUDA sample threadFenceReduction resets its retirementCount: each block's thread 0 makes
// its last atomicAdd on next_chunk, __threadfence(), then atomicInc(&retired); the block that
// draws gridDim.x - 1 knows every other block is past its last atomic on next_chunk and stores
// 0 into both counters with plain stores. The next launch (a later kernel) sees those zeros.
// Privatization as in step 3: zero, barrier, count, barrier, merge.
#include "histogram.cuh"

constexpr unsigned int kBlock = 256;
constexpr unsigned int kChunk = 4096;  // keys per chunk

__device__ unsigned int next_chunk = 0;
__device__ unsigned int retired = 0;

__global__ void __launch_bounds__(kBlock)
    chunked_kernel(const unsigned int* __restrict__ keys, unsigned int* bins, size_t n,
                   unsigned int num_bins) {
    extern __shared__ unsigned int counts[];
    __shared__ unsigned int chunk;
    for (unsigned int b = threadIdx.x; b < num_bins; b += blockDim.x) counts[b] = 0;

    const size_t chunks = (n + kChunk - 1) / kChunk;
    for (;;) {
        if (threadIdx.x == 0) chunk = atomicAdd(&next_chunk, 1u);
        __syncthreads();  // chunk is set (and, the first time, the counters are zero)
        const size_t c = chunk;
        if (c >= chunks) break;  // the same value for every thread: the whole block leaves
        const size_t end = (c + 1) * kChunk < n ? (c + 1) * kChunk : n;
        for (size_t i = c * kChunk + threadIdx.x; i < end; i += blockDim.x)
            atomicAdd(&counts[keys[i]], 1u);
        __syncthreads();  // everyone has read `chunk` before thread 0 overwrites it
    }

    // The loop left right after a barrier, with every count made before it.
    for (unsigned int b = threadIdx.x; b < num_bins; b += blockDim.x)
        if (counts[b] != 0) atomicAdd(&bins[b], counts[b]);

    if (threadIdx.x == 0) {
        __threadfence();  // this block's atomics on next_chunk come before its retirement
        const unsigned int ticket = atomicInc(&retired, gridDim.x);
        if (ticket == gridDim.x - 1) {  // the last block: nobody touches the counters any more
            __threadfence();
            next_chunk = 0;
            retired = 0;
        }
    }
}

extern "C" cudaError_t histogram(const unsigned int* keys, unsigned int* bins, size_t n,
                                 unsigned int num_bins, cudaStream_t stream) {
    if (num_bins == 0 || num_bins > kMaxSharedBins) return cudaErrorInvalidValue;
    cudaError_t err = cudaMemsetAsync(bins, 0, num_bins * sizeof(unsigned int), stream);
    if (err != cudaSuccess) return err;
    const size_t shared_bytes = num_bins * sizeof(unsigned int);
    unsigned int grid = 0;
    err = one_wave_grid(kBlock, shared_bytes + sizeof(unsigned int), (n + kChunk - 1) / kChunk,
                        &grid);
    if (err != cudaSuccess) return err;
    chunked_kernel<<<grid, kBlock, shared_bytes, stream>>>(keys, bins, n, num_bins);
    return cudaGetLastError();
}
