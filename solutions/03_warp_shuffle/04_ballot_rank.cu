// Lesson 03, step 4 — __ballot_sync and __popc: count and rank the kept elements (solution).
//
// Teaches: a warp-wide vote. __ballot_sync(mask, p) returns, to every lane, a 32-bit word whose
// bit l is lane l's predicate p. From that one word each lane gets, with no further
// communication:
//   - the number of kept elements in the warp:        __popc(ballot)
//   - how many kept lanes come before it (its rank):  __popc(ballot & ((1u << lane) - 1))
//
//   lane:           0  1  2  3  4  5  6  7 ...
//   kept?           1  0  1  1  0  0  1  0
//   ballot bits     ...0 1 0 0 1 1 0 1        (bit l = lane l; bit 0 is the rightmost)
//   lanes below 6:  mask (1u << 6) - 1 = 0b111111  ->  popc(ballot & mask) = 3: lane 6 is the
//                   4th kept element, rank 3
//
// The job, per 32-element segment: counts[s] = the number of elements with in[i] > threshold,
// ranks[i] = the number of kept elements of i's segment before i (for a kept element, its rank
// among the kept ones). Compaction (lesson 07) writes kept element i to
// out[offset of its segment + ranks[i]].
//
// Check:  ./cudalings check 03_warp_shuffle/04_ballot_rank
// Stuck:  ./cudalings hint 03_warp_shuffle/04_ballot_rank

#include "warp_shuffle.cuh"

constexpr unsigned int kBlockSize = 256;
constexpr unsigned int kWarpsPerBlock = kBlockSize / 32;
constexpr int kMaxRegisters = 32;  // a full SM of blocks fits (see step 1)
constexpr int kUnroll = 4;         // segments loaded per warp before any is ranked

__global__ void __maxnreg__(kMaxRegisters)
    segment_select_rank_kernel(const float* __restrict__ in, unsigned* __restrict__ ranks,
                               unsigned* __restrict__ counts, size_t n, float threshold) {
    const unsigned int lane = threadIdx.x % 32;
    const size_t warp = (static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
    const size_t num_warps = static_cast<size_t>(gridDim.x) * kWarpsPerBlock;
    const size_t segments = (n + 31) / 32;
    // The lanes below this one: bit k set for every k < lane. (1u << lane) - 1 is 0 for lane 0.
    const unsigned int lanes_below = (1u << lane) - 1u;

    for (size_t s = warp; s < segments; s += kUnroll * num_warps) {
        float x[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
            const size_t i = (s + u * num_warps) * 32 + lane;
            x[u] = i < n ? in[i] : 0.0f;
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
            const size_t i = (s + u * num_warps) * 32 + lane;
            // A lane past n votes "not kept": its bit is 0, so it changes no count or rank.
            // It still votes: the mask promises all 32 lanes.
            const bool keep = i < n && x[u] > threshold;
            const unsigned int ballot = __ballot_sync(kFullMask, keep);
            if (i < n) ranks[i] = __popc(ballot & lanes_below);
            const size_t segment = s + u * num_warps;
            if (lane == 0 && segment < segments) counts[segment] = __popc(ballot);
        }
    }
}

extern "C" cudaError_t segment_select_rank(const float* in, unsigned* ranks, unsigned* counts,
                                           size_t n, float threshold, cudaStream_t stream) {
    const size_t segments = (n + 31) / 32;
    unsigned int grid = 0;
    cudaError_t err =
        one_wave_grid(kBlockSize, (segments + kWarpsPerBlock - 1) / kWarpsPerBlock, &grid);
    if (err != cudaSuccess) return err;
    segment_select_rank_kernel<<<grid, kBlockSize, 0, stream>>>(in, ranks, counts, n, threshold);
    return cudaGetLastError();
}
