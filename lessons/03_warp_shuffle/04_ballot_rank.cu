// Lesson 03, step 4 — __ballot_sync and __popc: count and rank the kept elements.
//
// Teaches: a warp-wide vote. __ballot_sync(mask, p) returns, to every lane, a 32-bit word whose
// bit l is lane l's predicate p. From that one word each lane gets, with no more communication:
//   - how many lanes of the warp said yes:        __popc(ballot)
//   - how many lanes BELOW it said yes:           __popc(ballot & ((1u << lane) - 1))
//
//   lane:           0  1  2  3  4  5  6  7 ...
//   kept?           1  0  1  1  0  0  1  0
//   ballot bits     ...0 1 0 0 1 1 0 1        (bit l = lane l: bit 0 is the rightmost)
//   lane 6:         (1u << 6) - 1 = 0b111111 selects lanes 0..5; popc(ballot & it) = 3
//
// The job, per 32-element segment (element i is kept when in[i] > threshold):
//   counts[s] = the number of kept elements of segment s,
//   ranks[i]  = the number of kept elements of i's segment that come before i.
// A kept element's place in a compacted array is then its segment's offset + its rank: lesson
// 07 builds stream compaction on exactly this.
//
// What to do: in the kernel, the vote, then the two outputs (see the TODOs).
// Read "Step 4" in lessons/03_warp_shuffle/README.md first.
//
// Check:  ./cudalings check 03_warp_shuffle/04_ballot_rank
// Stuck:  ./cudalings hint 03_warp_shuffle/04_ballot_rank
//
// As given, this file compiles and runs but writes nothing, so every test fails.

#include "warp_shuffle.cuh"

constexpr unsigned int kBlockSize = 256;
constexpr unsigned int kWarpsPerBlock = kBlockSize / 32;
constexpr int kMaxRegisters = 32;  // a full SM of blocks fits (see step 1)
constexpr int kUnroll = 4;         // segments loaded per warp before any is used

__global__ void __maxnreg__(kMaxRegisters)
    segment_select_rank_kernel(const float* __restrict__ in, unsigned* __restrict__ ranks,
                               unsigned* __restrict__ counts, size_t n, float threshold) {
    const unsigned int lane = threadIdx.x % 32;
    const size_t warp = (static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
    const size_t num_warps = static_cast<size_t>(gridDim.x) * kWarpsPerBlock;
    const size_t segments = (n + 31) / 32;

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
            const size_t segment = s + u * num_warps;
            // TODO(1 of 2, ~2 lines): keep = (i < n && x[u] > threshold): a lane past n votes
            //   "no". Then ballot = __ballot_sync(kFullMask, keep), in every lane.
            // TODO(2 of 2, ~3 lines): if i < n, ranks[i] = the popcount of the ballot bits of
            //   the lanes below this one; lane 0 writes counts[segment] = the popcount of the
            //   whole ballot, if segment < segments. Delete the (void) line when you are done.
            (void)i, (void)segment, (void)x[u], (void)threshold, (void)ranks, (void)counts;
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
