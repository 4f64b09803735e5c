// Lesson 06, step 1 — one global atomic per key.
//
// Teaches: a histogram is a scatter with conflicts. Every thread adds 1 to the bin its key
// names, with atomicAdd on the bins in global memory. Atomics make it correct; how fast they
// are depends on the data: the updates of one address are applied one after another in L2.
// The checker times this step at n = 2^24 on four key distributions (uniform, all-same, half
// on one hot bin, Zipf): compare the four columns.
//
// What to do:
//   1. In the launcher: zero the bins on the stream before the kernel runs.
//   2. In the kernel: a grid-stride loop that adds 1 to bins[keys[i]] with atomicAdd.
// Read "Step 1" in lessons/06_histogram/README.md first.
//
// Check:  ./cudalings check 06_histogram/01_global_atomics
// Stuck:  ./cudalings hint 06_histogram/01_global_atomics
//
// As given, this file compiles and runs but never writes the bins, so every test fails.

#include "histogram.cuh"

constexpr unsigned int kBlockSize = 256;

__global__ void histogram_kernel(const unsigned int* __restrict__ keys, unsigned int* bins,
                                 size_t n) {
    // TODO(2 of 2, ~4 lines): a grid-stride loop (lesson 01, step 2) over i in [0, n), with a
    //   size_t index, doing atomicAdd(&bins[keys[i]], 1u). A plain bins[keys[i]]++ would be a
    //   race: two threads with the same key read the same old count and one update is lost.
    //   Delete the (void) line when you are done.
    (void)keys, (void)bins, (void)n;
}

extern "C" cudaError_t histogram(const unsigned int* keys, unsigned int* bins, size_t n,
                                 unsigned int num_bins, cudaStream_t stream) {
    if (num_bins == 0 || num_bins > kMaxBins) return cudaErrorInvalidValue;
    cudaError_t err = cudaSuccess;
    // TODO(1 of 2, ~2 lines): the atomics add *into* the bins, and the bins hold garbage when
    //   you are called. Zero all num_bins counters with cudaMemsetAsync(bins, 0, bytes, stream)
    //   and return its error if it fails. (A plain cudaMemset runs on another stream: no.)

    unsigned int grid = 0;
    err = one_wave_grid(kBlockSize, 0, (n + kBlockSize - 1) / kBlockSize, &grid);
    if (err != cudaSuccess) return err;
    histogram_kernel<<<grid, kBlockSize, 0, stream>>>(keys, bins, n);
    return cudaGetLastError();
}
