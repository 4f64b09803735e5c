// step: 06_histogram/03_block_private.cu
// emulated: PASS
//
// Correct: one private copy of the bins per *warp* (128-thread blocks, four copies), updated
// without atomics. In every iteration the warp's lanes group by key with __match_any_sync; the
// lowest lane of each group adds the group's size with a plain `+=` to its warp's copy. The
// leaders of one iteration hold different keys, so they touch different words; a __syncwarp()
// closes every iteration, so the next iteration's leader of a key (possibly another lane) sees
// the last one's store. The loop is warp-uniform (lanes past n join with a key no bin has), so
// every lane reaches the match and the __syncwarp. Four copies of 4096 bins are 64 KiB: the
// launcher opts in to more than 48 KiB of dynamic shared memory. The merge (after a barrier)
// adds the four copies of a bin with plain reads.
#include "histogram.cuh"

constexpr unsigned int kBlock = 128;
constexpr unsigned int kWarps = kBlock / 32;
constexpr unsigned int kNoKey = 0xffffffffu;

__global__ void __launch_bounds__(kBlock)
    warp_private_kernel(const unsigned int* __restrict__ keys, unsigned int* bins, size_t n,
                        unsigned int num_bins) {
    extern __shared__ unsigned int copies[];  // kWarps copies of num_bins counters
    for (unsigned int b = threadIdx.x; b < kWarps * num_bins; b += blockDim.x) copies[b] = 0;
    __syncthreads();

    const unsigned int lane = threadIdx.x % 32;
    unsigned int* mine = copies + (threadIdx.x / 32) * num_bins;
    const size_t stride = size_t{gridDim.x} * blockDim.x;
    // Every lane of a warp runs the same number of iterations: the bound is rounded up to the
    // warp's last lane.
    const size_t warp_first = blockIdx.x * size_t{blockDim.x} + (threadIdx.x - lane);
    for (size_t base = warp_first; base < n; base += stride) {
        const size_t i = base + lane;
        const unsigned int key = i < n ? keys[i] : kNoKey;
        const unsigned int peers = __match_any_sync(0xffffffffu, key);
        if (key != kNoKey && lane == __ffs(peers) - 1) mine[key] += __popc(peers);
        __syncwarp();
    }
    __syncthreads();

    for (unsigned int b = threadIdx.x; b < num_bins; b += blockDim.x) {
        unsigned int c = 0;
        for (unsigned int w = 0; w < kWarps; ++w) c += copies[w * num_bins + b];
        if (c != 0) atomicAdd(&bins[b], c);
    }
}

extern "C" cudaError_t histogram(const unsigned int* keys, unsigned int* bins, size_t n,
                                 unsigned int num_bins, cudaStream_t stream) {
    if (num_bins == 0 || num_bins > kMaxSharedBins) return cudaErrorInvalidValue;
    cudaError_t err = cudaMemsetAsync(bins, 0, num_bins * sizeof(unsigned int), stream);
    if (err != cudaSuccess) return err;
    const size_t shared_bytes = size_t{kWarps} * num_bins * sizeof(unsigned int);
    if (shared_bytes > 48 * 1024) {
        err = cudaFuncSetAttribute(reinterpret_cast<const void*>(warp_private_kernel),
                                   cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   static_cast<int>(shared_bytes));
        if (err != cudaSuccess) return err;
    }
    unsigned int grid = 0;
    err = one_wave_grid(kBlock, shared_bytes, (n + kBlock - 1) / kBlock, &grid);
    if (err != cudaSuccess) return err;
    warp_private_kernel<<<grid, kBlock, shared_bytes, stream>>>(keys, bins, n, num_bins);
    return cudaGetLastError();
}
