// Lesson 13, step 1 — one tile in shared memory: ranks from __ballot_sync and __popc.
//
// Teaches: the radix rank, the heart of every radix sort. A block sorts one tile of
// kSortTile = 2048 keys by four passes of 8 bits, lowest byte first (least significant digit,
// LSD). One pass puts every key at its RANK: the number of keys of the tile with a smaller
// digit, plus the number of keys with the same digit that come before it. Keys with equal
// digits keep their order, so the pass is STABLE, and that is why four passes sort by all 32
// bits: after the pass on byte k the keys are in order by bytes k..0, because keys whose byte k
// is equal are still in the order the passes on bytes k-1..0 gave them.
//
// The rank of a key in three parts:
//   1. within its warp's round of 32 keys: the lanes with the same digit come from 8 ballots,
//      one per bit of the digit (lesson 03): peers = AND over bits b of (ballot of bit b, or its
//      complement). Those below me: __popc(peers & lanes_below). The lowest of them adds the
//      group's size to the warp's counter of that digit, so the next round starts after it.
//   2. within the block: the warps' counters, digit by digit, warp 0's keys before warp 1's.
//   3. the digits before mine: an exclusive scan of the tile's 256 digit counts (lesson 05).
//
//   position = digit_start[digit] + warp_prefix[warp][digit] + rank in the warp
//
// The order of the keys is the order of (warp, round, lane): warp w holds keys w·256 .. w·256 +
// 255 of the tile, round j the 32 keys w·256 + 32·j .. + 31, one per lane. That layout is what
// makes "before me" mean "before me in the tile": the stability argument rests on it.
//
// A partial last tile is padded with 0xffffffff keys, which are counted like the others: they
// come after every real key of digit 0xff in every pass, so they stay at the end of the tile,
// and only the first `count` keys are written.
//
// What to do (the load, the passes, the block scan and the store are given):
//   1. same_digit_lanes: the 8 ballots; 2. the rank within the warp, round by round;
//   3. the warps' prefixes and the tile's digit starts; 4. each key to its position.
// Read "Step 1" in lessons/13_sort/README.md first.
//
// Check:  ./cudalings check 13_sort/01_tile_sort
// Stuck:  ./cudalings hint 13_sort/01_tile_sort
//
// As given, this file compiles and runs, but the keys are never moved: every tile comes out in
// its input order.

#include "sort.cuh"

constexpr unsigned int kThreads = 256;
constexpr unsigned int kWarps = kThreads / 32;
constexpr unsigned int kItems = kSortTile / kThreads;  // 8 keys per thread
constexpr unsigned int kWarpKeys = 32 * kItems;        // 256 consecutive keys per warp
constexpr unsigned int kRadix = 256;                   // 8-bit digits
constexpr unsigned int kFullMask = 0xffffffffu;
static_assert(kThreads == kRadix, "thread d looks after digit d in the block part");

// What the rank needs in shared memory.
struct RankStorage {
    unsigned int counts[kWarps][kRadix];  // per warp and digit: a counter, then a prefix
    unsigned int warp_sums[kWarps];       // the block scan's warp totals
};

// The lanes of this warp whose digit equals mine: one ballot per bit. A lane keeps the lanes
// that voted like itself on every bit.
__device__ __forceinline__ unsigned int same_digit_lanes(unsigned int digit) {
    // TODO(1 of 4, ~6 lines): start from peers = kFullMask; for each bit b of the 8: bit =
    //   (digit >> b) & 1, votes = __ballot_sync(kFullMask, bit), and keep the lanes that voted
    //   like this lane: peers &= bit ? votes : ~votes. Every lane must run all 8 ballots.
    (void)digit;
    return 1u << (threadIdx.x % 32);  // placeholder: only this lane
}

// The exclusive prefix of v over the block's 256 threads, in thread order (lesson 05, step 3).
__device__ unsigned int block_exclusive_scan(unsigned int v, unsigned int* warp_sums) {
    const unsigned int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    unsigned int inclusive = v;
#pragma unroll
    for (unsigned int d = 1; d < 32; d *= 2) {
        const unsigned int below = __shfl_up_sync(kFullMask, inclusive, d);
        if (lane >= d) inclusive += below;
    }
    if (lane == 31) warp_sums[warp] = inclusive;
    __syncthreads();
    if (warp == 0) {
        const unsigned int total = lane < kWarps ? warp_sums[lane] : 0u;
        unsigned int running = total;
#pragma unroll
        for (unsigned int d = 1; d < kWarps; d *= 2) {
            const unsigned int below = __shfl_up_sync(kFullMask, running, d);
            if (lane >= d) running += below;
        }
        if (lane < kWarps) warp_sums[lane] = running - total;  // exclusive: the warps before
    }
    __syncthreads();
    return warp_sums[warp] + inclusive - v;
}

// pos[j] = where keys[j] goes when the tile is sorted stably by the digit at `shift`.
__device__ void rank_keys(const unsigned int (&keys)[kItems], unsigned int (&pos)[kItems],
                          unsigned int shift, RankStorage& s) {
    const unsigned int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const unsigned int lanes_below = (1u << lane) - 1u;

    // 1. Within the warp, round by round.
    for (unsigned int d = lane; d < kRadix; d += 32) s.counts[warp][d] = 0;
    __syncwarp();
#pragma unroll
    for (unsigned int j = 0; j < kItems; ++j) {
        const unsigned int digit = (keys[j] >> shift) & 0xffu;
        const unsigned int peers = same_digit_lanes(digit);
        // TODO(2 of 4, ~5 lines): the rank within the warp so far.
        //   - below = peers & lanes_below: the lanes of this round with my digit, before me;
        //   - pos[j] = s.counts[warp][digit] (the warp's keys of that digit in earlier rounds)
        //     + __popc(below);
        //   - __syncwarp(), then the lowest lane of the group (below == 0) adds the group's size,
        //     __popc(peers), to s.counts[warp][digit]; __syncwarp() again.
        //   Delete the placeholder line.
        pos[j] = 0, (void)peers, (void)lanes_below;  // placeholder
    }
    __syncthreads();

    // 2. Thread d: digit d across the warps. Its counters become the prefix of the warps before.
    const unsigned int d = threadIdx.x;
    // TODO(3 of 4, ~9 lines): the block part, thread d for digit d.
    //   - total = 0; for w = 0 .. kWarps - 1: c = s.counts[w][d]; s.counts[w][d] = total;
    //     total += c (each warp's counter becomes the count of digit d in the warps before);
    //   - start = block_exclusive_scan(total, s.warp_sums): the tile's keys of smaller digits
    //     (every thread must call it: it has barriers);
    //   - add start to s.counts[w][d] for every w, then __syncthreads().
    //   Afterwards s.counts[warp][digit] is where the warp's first key of that digit goes.
    (void)d, (void)block_exclusive_scan;

#pragma unroll
    for (unsigned int j = 0; j < kItems; ++j) pos[j] += s.counts[warp][(keys[j] >> shift) & 0xffu];
    __syncthreads();  // every warp has read the counters before the next pass clears them
}

__global__ void __launch_bounds__(kThreads)
    sort_tile_kernel(const unsigned int* __restrict__ keys_in, unsigned int* __restrict__ keys_out,
                     size_t n) {
    __shared__ unsigned int s_keys[kSortTile];
    __shared__ RankStorage s_rank;
    const unsigned int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const size_t tile_begin = static_cast<size_t>(blockIdx.x) * kSortTile;
    const size_t left = n - tile_begin;
    const unsigned int count = left < kSortTile ? static_cast<unsigned int>(left) : kSortTile;

    // Key j of this thread is key warp·256 + 32·j + lane of the tile: the rounds of a warp are
    // consecutive, and each round's load is one coalesced 128-byte line.
    unsigned int keys[kItems], pos[kItems];
#pragma unroll
    for (unsigned int j = 0; j < kItems; ++j) {
        const unsigned int i = warp * kWarpKeys + 32 * j + lane;
        keys[j] = i < count ? keys_in[tile_begin + i] : 0xffffffffu;  // padding sorts last
    }

    for (unsigned int shift = 0; shift < 32; shift += 8) {
        rank_keys(keys, pos, shift, s_rank);
        // TODO(4 of 4, ~2 lines): every key to its place in the tile: s_keys[pos[j]] = keys[j]
        //   for each j. Delete the placeholder loop (it writes each key back where it was).
#pragma unroll
        for (unsigned int j = 0; j < kItems; ++j)
            s_keys[warp * kWarpKeys + 32 * j + lane] = keys[j], (void)pos;  // placeholder
        __syncthreads();
        // Read back in the same layout: the keys are now in order by the bytes sorted so far.
#pragma unroll
        for (unsigned int j = 0; j < kItems; ++j)
            keys[j] = s_keys[warp * kWarpKeys + 32 * j + lane];
        __syncthreads();  // read before the next pass writes
    }

#pragma unroll
    for (unsigned int j = 0; j < kItems; ++j) {
        const unsigned int i = warp * kWarpKeys + 32 * j + lane;
        if (i < count) keys_out[tile_begin + i] = keys[j];
    }
}

extern "C" cudaError_t sort_tiles(const unsigned int* keys_in, unsigned int* keys_out, size_t n,
                                  cudaStream_t stream) {
    const size_t tiles = (n + kSortTile - 1) / kSortTile;
    sort_tile_kernel<<<static_cast<unsigned int>(tiles), kThreads, 0, stream>>>(keys_in, keys_out,
                                                                                n);
    return cudaGetLastError();
}
