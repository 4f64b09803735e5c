// step: 06_histogram/03_block_private.cu
// emulated: PASS
//
// Correct: step 3 with 512-thread blocks, and the shared counters zeroed and merged four at a
// time: the zero phase stores uint4 zeros over the first num_bins / 4 quads (dynamic shared
// memory is 16-byte aligned: it is declared as uint4) and scalar zeros over the last
// num_bins % 4 counters; the merge reads a uint4 of four counters, after the barrier, and adds
// each non-zero one to the global bins. The 16-byte plain accesses cover words that the count
// phase updates with 4-byte shared atomics; the two barriers order them (zero -> count ->
// merge), so no access races.
#include "histogram.cuh"

constexpr unsigned int kBlock = 512;

__device__ __forceinline__ void merge_one(unsigned int* bins, unsigned int b, unsigned int c) {
    if (c != 0) atomicAdd(&bins[b], c);
}

__global__ void __launch_bounds__(kBlock)
    histogram_kernel(const unsigned int* __restrict__ keys, unsigned int* bins, size_t n,
                     unsigned int num_bins) {
    extern __shared__ uint4 counts4[];  // num_bins counters, rounded up to whole quads
    unsigned int* counts = reinterpret_cast<unsigned int*>(counts4);
    const unsigned int quads = num_bins / 4;

    for (unsigned int q = threadIdx.x; q < quads; q += blockDim.x) counts4[q] = make_uint4(0, 0, 0, 0);
    if (threadIdx.x < num_bins % 4) counts[4 * quads + threadIdx.x] = 0;
    __syncthreads();

    for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
         i += size_t{gridDim.x} * blockDim.x)
        atomicAdd(&counts[keys[i]], 1u);
    __syncthreads();

    for (unsigned int q = threadIdx.x; q < quads; q += blockDim.x) {
        const uint4 c = counts4[q];  // four counters in one shared load
        merge_one(bins, 4 * q + 0, c.x);
        merge_one(bins, 4 * q + 1, c.y);
        merge_one(bins, 4 * q + 2, c.z);
        merge_one(bins, 4 * q + 3, c.w);
    }
    if (threadIdx.x < num_bins % 4) {
        const unsigned int b = 4 * quads + threadIdx.x;
        merge_one(bins, b, counts[b]);
    }
}

extern "C" cudaError_t histogram(const unsigned int* keys, unsigned int* bins, size_t n,
                                 unsigned int num_bins, cudaStream_t stream) {
    if (num_bins == 0 || num_bins > kMaxSharedBins) return cudaErrorInvalidValue;
    cudaError_t err = cudaMemsetAsync(bins, 0, num_bins * sizeof(unsigned int), stream);
    if (err != cudaSuccess) return err;
    const size_t shared_bytes = (num_bins + 3) / 4 * sizeof(uint4);
    unsigned int grid = 0;
    err = one_wave_grid(kBlock, shared_bytes, (n + kBlock - 1) / kBlock, &grid);
    if (err != cudaSuccess) return err;
    histogram_kernel<<<grid, kBlock, shared_bytes, stream>>>(keys, bins, n, num_bins);
    return cudaGetLastError();
}
