// Lesson 06, step 2 — warp-aggregated global atomics.
//
// Teaches: pre-reduce duplicates before the atomic. The 32 lanes of a warp load 32 keys;
// __match_any_sync tells every lane which lanes hold the same key (its "peers"). One lane per
// distinct key adds __popc(peers) with a single atomic: a warp whose 32 keys are equal sends 1
// update instead of 32. Compare the four distribution columns with step 1's.
//
// The loop is given and *warp-uniform*: all 32 lanes run the same iterations, because a warp
// intrinsic needs every lane of its mask to reach it. Lanes past n carry the key kNoKey.
//
// What to do: the body of the loop (one TODO).
// Read "Step 2" in lessons/06_histogram/README.md first.
//
// Check:  ./cudalings check 06_histogram/02_warp_aggregated
// Stuck:  ./cudalings hint 06_histogram/02_warp_aggregated
//
// As given, this file compiles and runs but only zeroes the bins, so every test fails.

#include "histogram.cuh"

constexpr unsigned int kBlockSize = 256;
constexpr unsigned int kWarpSize = 32;
constexpr unsigned int kFullMask = 0xffffffffu;
constexpr unsigned int kNoKey = 0xffffffffu;  // never a real key: keys are < kMaxBins

__global__ void histogram_kernel(const unsigned int* __restrict__ keys, unsigned int* bins,
                                 size_t n) {
    const unsigned int lane = threadIdx.x % kWarpSize;
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    // The global index of this warp's lane 0: the same value in all 32 lanes.
    const size_t warp_first = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x - lane;
    for (size_t first = warp_first; first < n; first += stride) {
        const size_t i = first + lane;
        const bool valid = i < n;
        // TODO(1 of 1, ~6 lines):
        //   - key = valid ? keys[i] : kNoKey;
        //   - peers = __match_any_sync(kFullMask, key): the lanes whose key equals mine;
        //   - the lowest lane of the group, __ffs(peers) - 1, is its leader;
        //   - if this lane is valid and the leader: atomicAdd(&bins[key], __popc(peers)).
        //   Every lane must call __match_any_sync, valid or not. Delete the (void) line.
        (void)keys, (void)bins, (void)valid, (void)kFullMask, (void)kNoKey;
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
