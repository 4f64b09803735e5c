// Lesson 06, step 2 — warp-aggregated global atomics (solution).
//
// Teaches: pre-reduce duplicates before the atomic. The 32 lanes of a warp load 32 keys;
// __match_any_sync tells every lane which lanes hold the same key as itself (its "peers"). One
// lane per distinct key, the lowest of its peers, adds __popc(peers) with a single atomic. All
// the same key in a warp: 1 atomic instead of 32. All different: 32 atomics, as before, plus the
// cost of the match. So it helps exactly where step 1 hurts (a hot key), and costs a little
// where step 1 was already fine (uniform keys).
//
// A warp-wide intrinsic needs every lane of its mask to reach it. The loop is therefore
// *warp-uniform*: all 32 lanes run the same iterations (the loop counter belongs to the warp,
// not to the lane), and a lane whose index is past n takes part with a key no real key can be.
//
// Check:  ./cudalings check 06_histogram/02_warp_aggregated
// Stuck:  ./cudalings hint 06_histogram/02_warp_aggregated

#include "histogram.cuh"

constexpr unsigned int kBlockSize = 256;
constexpr unsigned int kWarpSize = 32;
constexpr unsigned int kFullMask = 0xffffffffu;
constexpr unsigned int kNoKey = 0xffffffffu;  // never a real key: keys are < kMaxBins

__global__ void histogram_kernel(const unsigned int* __restrict__ keys, unsigned int* bins,
                                 size_t n) {
    const unsigned int lane = threadIdx.x % kWarpSize;
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    // The global index of this warp's lane 0: the same value in all 32 lanes, so every lane
    // makes the same decision in the loop condition and reaches every __match_any_sync.
    const size_t warp_first = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x - lane;
    for (size_t first = warp_first; first < n; first += stride) {
        const size_t i = first + lane;
        const bool valid = i < n;
        const unsigned int key = valid ? keys[i] : kNoKey;
        // peers: the mask of the lanes whose key equals mine (my own bit included).
        const unsigned int peers = __match_any_sync(kFullMask, key);
        // The lowest lane of each group speaks for the group. Lanes past n form their own group
        // (all hold kNoKey) and add nothing.
        const unsigned int leader = __ffs(peers) - 1;
        if (valid && lane == leader)
            atomicAdd(&bins[key], static_cast<unsigned int>(__popc(peers)));
    }
}

extern "C" cudaError_t histogram(const unsigned int* keys, unsigned int* bins, size_t n,
                                 unsigned int num_bins, cudaStream_t stream) {
    if (num_bins == 0 || num_bins > kMaxBins) return cudaErrorInvalidValue;
    cudaError_t err = cudaMemsetAsync(bins, 0, num_bins * sizeof(unsigned int), stream);
    if (err != cudaSuccess) return err;

    unsigned int grid = 0;
    err = one_wave_grid(kBlockSize, 0, (n + kBlockSize - 1) / kBlockSize, &grid);
    if (err != cudaSuccess) return err;
    histogram_kernel<<<grid, kBlockSize, 0, stream>>>(keys, bins, n);
    return cudaGetLastError();
}
