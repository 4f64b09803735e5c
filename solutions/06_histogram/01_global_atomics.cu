// Lesson 06, step 1 — one global atomic per key (solution).
//
// Teaches: a histogram is a scatter with conflicts. Every thread adds 1 to the bin its key
// names, with atomicAdd on the bins in global memory. Atomics make it correct: two threads
// that hit the same bin at the same moment both count. But an atomic on global memory is done
// in L2, by the slice that owns the address, and the updates of one address are applied one
// after another. So the time depends on the *data*: uniform keys spread the updates over all
// the bins, all-same keys send every update to one address, and the queue there is n long.
// The SASS shows `REDG.E.ADD.STRONG.GPU` (a fire-and-forget reduction in L2) for the atomic.
// The checker times this step at n = 2^24, on four key distributions.
//
// Check:  ./cudalings check 06_histogram/01_global_atomics
// Stuck:  ./cudalings hint 06_histogram/01_global_atomics

#include "histogram.cuh"

constexpr unsigned int kBlockSize = 256;

__global__ void histogram_kernel(const unsigned int* __restrict__ keys, unsigned int* bins,
                                 size_t n) {
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += stride) {
        // The result of the atomic is not used, so it needs no round trip back to the SM: the
        // SM sends the update to L2 and moves on. What limits it is the L2 slice that has to
        // apply the updates of one address one by one.
        atomicAdd(&bins[keys[i]], 1u);
    }
}

extern "C" cudaError_t histogram(const unsigned int* keys, unsigned int* bins, size_t n,
                                 unsigned int num_bins, cudaStream_t stream) {
    if (num_bins == 0 || num_bins > kMaxBins) return cudaErrorInvalidValue;
    // The atomics add *into* the bins, which hold garbage when we are called. On the same
    // stream, the memset is done before the kernel starts; no synchronisation needed.
    cudaError_t err = cudaMemsetAsync(bins, 0, num_bins * sizeof(unsigned int), stream);
    if (err != cudaSuccess) return err;

    unsigned int grid = 0;
    err = one_wave_grid(kBlockSize, 0, (n + kBlockSize - 1) / kBlockSize, &grid);
    if (err != cudaSuccess) return err;
    histogram_kernel<<<grid, kBlockSize, 0, stream>>>(keys, bins, n);
    return cudaGetLastError();
}
