// Lesson 06, step 3 — one private copy of the bins per block, in shared memory.
//
// Teaches: privatization. Each block counts into its own copy of the histogram in shared
// memory, then adds its copy into the global bins once. Three phases, each separated by a
// barrier:
//
//   zero:   the block's num_bins counters = 0
//   ------ __syncthreads()
//   count:  atomicAdd(&counts[key], 1) in shared memory, grid-stride over the keys
//   ------ __syncthreads()
//   merge:  atomicAdd(&bins[b], counts[b]) for every non-zero counter
//
// The copy's size is known only at run time, so it is dynamic shared memory: the launcher
// (given) passes num_bins * 4 bytes as the third launch parameter, and the kernel declares
// `extern __shared__ unsigned int counts[];`. num_bins may be 1, 257 or 4096: never assume it
// equals the block size.
//
// Read "Step 3" in lessons/06_histogram/README.md first, then look at the SASS of your build.
//
// Check:  ./cudalings check 06_histogram/03_block_private
// Stuck:  ./cudalings hint 06_histogram/03_block_private
//
// As given, this file compiles and runs but only zeroes the global bins, so every test fails.

#include "histogram.cuh"

constexpr unsigned int kBlockSize = 256;

__global__ void __launch_bounds__(kBlockSize)
    histogram_kernel(const unsigned int* __restrict__ keys, unsigned int* bins, size_t n,
                     unsigned int num_bins) {
    extern __shared__ unsigned int counts[];  // num_bins counters (the launch's shared bytes)

    // TODO(1 of 3, ~3 lines): zero the num_bins counters with a block-stride loop
    //   (b = threadIdx.x; b < num_bins; b += blockDim.x), then __syncthreads(): no thread may
    //   count before every counter is zero. Not `if (threadIdx.x < num_bins)`: that leaves the
    //   counters from blockDim.x up as they were.

    // TODO(2 of 3, ~3 lines): a grid-stride loop over the keys (size_t index) doing
    //   atomicAdd(&counts[keys[i]], 1u) in shared memory. Delete the (void) line.
    (void)keys, (void)n;

    // TODO(3 of 3, ~5 lines): __syncthreads() (every thread must have finished counting), then
    //   merge with a block-stride loop over the counters: if counts[b] is not zero,
    //   atomicAdd(&bins[b], counts[b]). Other blocks add into the same bins at the same time.
    (void)bins, (void)num_bins;
}

extern "C" cudaError_t histogram(const unsigned int* keys, unsigned int* bins, size_t n,
                                 unsigned int num_bins, cudaStream_t stream) {
    if (num_bins == 0 || num_bins > kMaxSharedBins) return cudaErrorInvalidValue;
    cudaError_t err = cudaMemsetAsync(bins, 0, num_bins * sizeof(unsigned int), stream);
    if (err != cudaSuccess) return err;

    // At most kMaxSharedBins counters: 16 KiB, below the 48 KiB a block may use without asking.
    const size_t shared_bytes = num_bins * sizeof(unsigned int);
    unsigned int grid = 0;
    err = one_wave_grid(kBlockSize, shared_bytes, (n + kBlockSize - 1) / kBlockSize, &grid);
    if (err != cudaSuccess) return err;
    histogram_kernel<<<grid, kBlockSize, shared_bytes, stream>>>(keys, bins, n, num_bins);
    return cudaGetLastError();
}
