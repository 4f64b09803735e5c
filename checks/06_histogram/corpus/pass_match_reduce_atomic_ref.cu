// step: 06_histogram/05_run_length.cu
// emulated: PASS
//
// Correct: the weighted histogram with the README's "match_any with a warp reduction" cure
// instead of lane-private runs. Every word goes through a warp-uniform step: the lanes group by
// key (__match_any_sync), each group adds its counts with __reduce_add_sync over the group's own
// mask (different groups call it with different masks, each naming exactly its members), and
// the group's lowest lane adds the sum to the block's counter with a block-scoped
// cuda::atomic_ref. The packs are read as uint4 in a loop that every lane of a warp runs the same
// number of times (lanes past the last pack hold kNoWord); the n % 4 words past the last pack are
// done by the first warp of block 0, one per lane. Zero, barrier, count, barrier, merge.
#include <cuda/atomic>

#include "histogram.cuh"

constexpr unsigned int kBlock = 256;
constexpr unsigned int kNoWord = 0xffffffffu;  // not a word: its key would be 0xffff
constexpr unsigned int kNoKey = 0xffffffffu;

__device__ __forceinline__ void add_word(unsigned int* counts, unsigned int word,
                                         unsigned int lane) {
    const unsigned int key = word == kNoWord ? kNoKey : rle_key(word);
    const unsigned int count = word == kNoWord ? 0u : rle_count(word);
    const unsigned int peers = __match_any_sync(0xffffffffu, key);
    const unsigned int sum = __reduce_add_sync(peers, count);
    if (key != kNoKey && lane == static_cast<unsigned int>(__ffs(peers) - 1)) {
        cuda::atomic_ref<unsigned int, cuda::thread_scope_block> counter(counts[key]);
        counter.fetch_add(sum, cuda::std::memory_order_relaxed);
    }
}

__global__ void __launch_bounds__(kBlock)
    rle_match_kernel(const unsigned int* __restrict__ runs, unsigned int* bins, size_t n,
                     unsigned int num_bins) {
    extern __shared__ unsigned int counts[];
    for (unsigned int b = threadIdx.x; b < num_bins; b += blockDim.x) counts[b] = 0;
    __syncthreads();

    const unsigned int lane = threadIdx.x % 32;
    const uint4* runs4 = reinterpret_cast<const uint4*>(runs);
    const size_t n4 = n / 4;
    const size_t warp = (blockIdx.x * size_t{blockDim.x} + threadIdx.x) / 32;
    const size_t warps = size_t{gridDim.x} * blockDim.x / 32;
    for (size_t base = 32 * warp; base < n4; base += 32 * warps) {  // the same for all lanes
        const size_t p = base + lane;
        const uint4 w = p < n4 ? __ldg(&runs4[p]) : make_uint4(kNoWord, kNoWord, kNoWord, kNoWord);
        add_word(counts, w.x, lane);
        add_word(counts, w.y, lane);
        add_word(counts, w.z, lane);
        add_word(counts, w.w, lane);
    }
    if (blockIdx.x == 0 && threadIdx.x < 32) {  // the scalar tail, by one whole warp
        const size_t t = 4 * n4 + lane;
        add_word(counts, t < n ? runs[t] : kNoWord, lane);
    }
    __syncthreads();

    for (unsigned int b = threadIdx.x; b < num_bins; b += blockDim.x) {
        const unsigned int c = counts[b];
        if (c != 0) atomicAdd(&bins[b], c);
    }
}

extern "C" cudaError_t histogram_rle(const unsigned int* runs, unsigned int* bins, size_t n,
                                     unsigned int num_bins, cudaStream_t stream) {
    if (num_bins == 0 || num_bins > kMaxSharedBins) return cudaErrorInvalidValue;
    cudaError_t err = cudaMemsetAsync(bins, 0, num_bins * sizeof(unsigned int), stream);
    if (err != cudaSuccess) return err;
    const size_t shared_bytes = num_bins * sizeof(unsigned int);
    unsigned int grid = 0;
    err = one_wave_grid(kBlock, shared_bytes, (n / 4 + kBlock - 1) / kBlock, &grid);
    if (err != cudaSuccess) return err;
    rle_match_kernel<<<grid, kBlock, shared_bytes, stream>>>(runs, bins, n, num_bins);
    return cudaGetLastError();
}
