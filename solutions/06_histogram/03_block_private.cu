// Lesson 06, step 3 — one private copy of the bins per block, in shared memory (solution).
//
// Teaches: privatization. Each block counts into its own copy of the histogram in shared
// memory, then adds its copy into the global bins once. The contention moves from one L2 slice
// shared by the whole GPU into each block's shared memory, and the global bins see only
// blocks x bins updates instead of n. Three phases, each separated by a barrier:
//
//   zero:   the block's num_bins counters = 0          (block-stride loop: num_bins may be
//   ------ __syncthreads()                               more, or fewer, than the threads)
//   count:  atomicAdd(&counts[key], 1) in shared memory, grid-stride over the keys
//   ------ __syncthreads()
//   merge:  atomicAdd(&bins[b], counts[b]) for every non-zero counter (block-stride loop)
//
// The size of the copy is known only at run time (num_bins), so it is *dynamic* shared memory:
// `extern __shared__ unsigned int counts[];` in the kernel, and its size in bytes as the third
// launch parameter. Read the SASS (README, "What the compiler does with a +1"): the shared
// atomic whose result is unused becomes `ATOMS.POPC.INC.32`, which counts all the lanes of a
// warp that hit one address in one go. That is why this step's time no longer depends on the
// key distribution.
//
// Check:  ./cudalings check 06_histogram/03_block_private
// Stuck:  ./cudalings hint 06_histogram/03_block_private

#include "histogram.cuh"

constexpr unsigned int kBlockSize = 256;

__global__ void __launch_bounds__(kBlockSize)
    histogram_kernel(const unsigned int* __restrict__ keys, unsigned int* bins, size_t n,
                     unsigned int num_bins) {
    extern __shared__ unsigned int counts[];  // num_bins counters (the launch's shared bytes)

    // Zero: a block-stride loop covers any num_bins, 1 or 4096. `if (threadIdx.x < num_bins)`
    // would leave the counters from blockDim.x up holding whatever was there before.
    for (unsigned int b = threadIdx.x; b < num_bins; b += blockDim.x) counts[b] = 0;
    // No thread may count before every counter is zero.
    __syncthreads();

    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        atomicAdd(&counts[keys[i]], 1u);
    // No thread may read a counter before every thread of the block has finished counting.
    __syncthreads();

    // Merge: one global atomic per non-zero counter. Other blocks add into the same bins at the
    // same time, so this must be an atomic too. Skipping zeros saves most of the merge when the
    // keys are skewed (all-same: one atomic per block).
    for (unsigned int b = threadIdx.x; b < num_bins; b += blockDim.x) {
        const unsigned int c = counts[b];
        if (c != 0) atomicAdd(&bins[b], c);
    }
}

extern "C" cudaError_t histogram(const unsigned int* keys, unsigned int* bins, size_t n,
                                 unsigned int num_bins, cudaStream_t stream) {
    if (num_bins == 0 || num_bins > kMaxSharedBins) return cudaErrorInvalidValue;
    cudaError_t err = cudaMemsetAsync(bins, 0, num_bins * sizeof(unsigned int), stream);
    if (err != cudaSuccess) return err;

    // At most kMaxSharedBins counters: 16 KiB, below the 48 KiB a block may use without asking.
    const size_t shared_bytes = num_bins * sizeof(unsigned int);
    // One wave: every block merges num_bins counters, so more blocks than the GPU holds at once
    // would only add merge work.
    unsigned int grid = 0;
    err = one_wave_grid(kBlockSize, shared_bytes, (n + kBlockSize - 1) / kBlockSize, &grid);
    if (err != cudaSuccess) return err;
    histogram_kernel<<<grid, kBlockSize, shared_bytes, stream>>>(keys, bins, n, num_bins);
    return cudaGetLastError();
}
