// step: 06_histogram/03_block_private.cu
// emulated: MEMORY_ERROR
// reason: race
//
// Buggy: step 3 whose merge adds the block's counters to the global bins with a plain
// `bins[b] += counts[b]`, as if privatization had made the bins private: every block of the grid
// merges into the same num_bins words, so the read-modify-writes of two blocks race and one
// block's counts can be lost. The shared phases (zero, count with shared atomics) are right.
#include "histogram.cuh"

constexpr unsigned int kBlock = 256;

__global__ void __launch_bounds__(kBlock)
    histogram_kernel(const unsigned int* __restrict__ keys, unsigned int* bins, size_t n,
                     unsigned int num_bins) {
    extern __shared__ unsigned int counts[];
    for (unsigned int b = threadIdx.x; b < num_bins; b += blockDim.x) counts[b] = 0;
    __syncthreads();
    for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
         i += size_t{gridDim.x} * blockDim.x)
        atomicAdd(&counts[keys[i]], 1u);
    __syncthreads();
    for (unsigned int b = threadIdx.x; b < num_bins; b += blockDim.x)
        bins[b] += counts[b];  // BUG: other blocks add into bins[b] at the same time
}

extern "C" cudaError_t histogram(const unsigned int* keys, unsigned int* bins, size_t n,
                                 unsigned int num_bins, cudaStream_t stream) {
    if (num_bins == 0 || num_bins > kMaxSharedBins) return cudaErrorInvalidValue;
    cudaError_t err = cudaMemsetAsync(bins, 0, num_bins * sizeof(unsigned int), stream);
    if (err != cudaSuccess) return err;
    const size_t shared_bytes = num_bins * sizeof(unsigned int);
    unsigned int grid = 0;
    err = one_wave_grid(kBlock, shared_bytes, (n + kBlock - 1) / kBlock, &grid);
    if (err != cudaSuccess) return err;
    histogram_kernel<<<grid, kBlock, shared_bytes, stream>>>(keys, bins, n, num_bins);
    return cudaGetLastError();
}
