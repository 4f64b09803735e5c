// Lesson 13, step 4 — onesweep: one kernel per pass, a decoupled look-back per digit
// (solution).
//
// Teaches: the single-pass radix sort of Adinets and Merrill ("Onesweep", 2022: CUB's
// DeviceRadixSort today). Step 3 left one serial link: tile t could not publish its counts
// before tile t - 1 had. Here, as in lesson 05's step 7, a tile publishes twice, per digit:
//
//   1. its AGGREGATE, the tile's own count of digit d, as soon as the rank has it, without
//      waiting for anybody: kFlagAggregate | count;
//   2. its INCLUSIVE count, the keys of digit d in every tile up to and including it, once it
//      knows its exclusive one: kFlagInclusive | (exclusive + count).
//
// To find its exclusive count of digit d, thread d looks back over tiles t-1, t-2, ...: an
// inclusive word ends the walk (add it, stop); an aggregate is added and the walk goes on; an
// EMPTY word (0: that tile has not published yet) is read again until it is not. Never count
// an empty word as 0: that tile's keys would be missing from the offsets of every tile after it.
//
//   digit d, looking back from tile t:
//     status:  ... [I 812] [A 3] [A 0] [A 5] | tile t        I = inclusive, A = aggregate
//     exclusive = 812 + 3 + 0 + 5
//
// With the up-front histograms of step 3, a pass reads every key once and writes it once: four
// passes and the histogram read, 9 reads or writes of each key in all.
//
// Check:  ./cudalings check 13_sort/04_onesweep
// Stuck:  ./cudalings hint 13_sort/04_onesweep

#include "sort.cuh"

constexpr unsigned int kThreads = 256;
constexpr unsigned int kWarps = kThreads / 32;
constexpr unsigned int kItems = 32;                // keys per thread
constexpr unsigned int kTile = kThreads * kItems;  // 8192 keys per tile
constexpr unsigned int kWarpKeys = 32 * kItems;    // 1024 consecutive keys per warp
constexpr unsigned int kRadix = 256;               // 8-bit digits
constexpr unsigned int kFullMask = 0xffffffffu;
static_assert(kThreads == kRadix, "thread d looks after digit d");

// ---------------------------------------------------------------- step 1's rank
struct RankStorage {
    unsigned int counts[kWarps][kRadix];  // per warp and digit: a counter, then a prefix
    unsigned int digit_start[kRadix];     // where the tile's keys of digit d start in it
    unsigned int warp_sums[kWarps];       // the block scan's warp totals
};

__device__ __forceinline__ unsigned int same_digit_lanes(unsigned int digit) {
    unsigned int peers = kFullMask;
#pragma unroll
    for (unsigned int b = 0; b < 8; ++b) {
        const unsigned int bit = (digit >> b) & 1u;
        const unsigned int votes = __ballot_sync(kFullMask, bit);
        peers &= bit ? votes : ~votes;
    }
    return peers;
}

// The exclusive prefix of v over the block's 256 threads, in thread order. Every thread must
// call it (it has barriers); it ends with one.
__device__ unsigned int block_exclusive_scan(unsigned int v, unsigned int* warp_sums) {
    const unsigned int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    unsigned int inclusive = v;
#pragma unroll
    for (unsigned int d = 1; d < 32; d *= 2) {
        const unsigned int below = __shfl_up_sync(kFullMask, inclusive, d);
        if (lane >= d) inclusive += below;
    }
    __syncthreads();  // the previous call's readers are done with warp_sums
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
        if (lane < kWarps) warp_sums[lane] = running - total;
    }
    __syncthreads();
    return warp_sums[warp] + inclusive - v;
}

// pos[j] = where keys[j] goes when the tile is sorted stably by the digit at `shift`; also
// s.digit_start[d], where the tile's keys of digit d begin.
__device__ void rank_keys(const unsigned int (&keys)[kItems], unsigned int (&pos)[kItems],
                          unsigned int shift, RankStorage& s) {
    const unsigned int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const unsigned int lanes_below = (1u << lane) - 1u;
    for (unsigned int d = lane; d < kRadix; d += 32) s.counts[warp][d] = 0;
    __syncwarp();
#pragma unroll
    for (unsigned int j = 0; j < kItems; ++j) {
        const unsigned int digit = (keys[j] >> shift) & 0xffu;
        const unsigned int peers = same_digit_lanes(digit);
        const unsigned int below = peers & lanes_below;
        pos[j] = s.counts[warp][digit] + __popc(below);
        __syncwarp();
        if (below == 0) s.counts[warp][digit] += __popc(peers);
        __syncwarp();
    }
    __syncthreads();
    const unsigned int d = threadIdx.x;
    unsigned int total = 0;
#pragma unroll
    for (unsigned int w = 0; w < kWarps; ++w) {
        const unsigned int c = s.counts[w][d];
        s.counts[w][d] = total;
        total += c;
    }
    const unsigned int start = block_exclusive_scan(total, s.warp_sums);
    s.digit_start[d] = start;
#pragma unroll
    for (unsigned int w = 0; w < kWarps; ++w) s.counts[w][d] += start;
    __syncthreads();
#pragma unroll
    for (unsigned int j = 0; j < kItems; ++j) pos[j] += s.counts[warp][(keys[j] >> shift) & 0xffu];
    __syncthreads();
}

// The tile's keys, key j of a thread at warp·512 + 32·j + lane; past the end, 0xffffffff
// (padding: ranked last, never written, never counted).
__device__ __forceinline__ unsigned int load_tile(const unsigned int* src, size_t n,
                                                  unsigned int tile, unsigned int (&keys)[kItems]) {
    const unsigned int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const size_t tile_begin = static_cast<size_t>(tile) * kTile;
    const size_t left = n - tile_begin;
    const unsigned int count = left < kTile ? static_cast<unsigned int>(left) : kTile;
#pragma unroll
    for (unsigned int j = 0; j < kItems; ++j) {
        const unsigned int i = warp * kWarpKeys + 32 * j + lane;
        keys[j] = i < count ? src[tile_begin + i] : 0xffffffffu;
    }
    return count;
}

// ---------------------------------------------------------------- status words
// A status word: a flag in the top two bits, a count in the low 30 (n <= 2^28). One 32-bit
// store publishes both, so a reader never sees a flag with another count.
constexpr unsigned int kFlagAggregate = 1u << 30;
constexpr unsigned int kFlagInclusive = 1u << 31;
constexpr unsigned int kFlagMask = kFlagAggregate | kFlagInclusive;
constexpr unsigned int kValueMask = ~kFlagMask;

// volatile: every call really reads (or writes) memory, where all SMs meet; a plain load in a
// wait loop may be read once and kept in a register.
__device__ __forceinline__ unsigned int load_status(const unsigned int* p) {
    return *reinterpret_cast<const volatile unsigned int*>(p);
}
__device__ __forceinline__ void store_status(unsigned int* p, unsigned int word) {
    *reinterpret_cast<volatile unsigned int*>(p) = word;
}

// ---------------------------------------------------------------- the up-front histograms
// hist[b][d] = the keys whose byte b is d, for all four bytes at once: one read of the keys.
// A private copy per block in shared memory (lesson 06), added to the global one at the end.
__global__ void __launch_bounds__(kThreads)
    all_histograms(const unsigned int* __restrict__ keys, size_t n, unsigned int* hist) {
    __shared__ unsigned int s_hist[4][kRadix];
#pragma unroll
    for (unsigned int b = 0; b < 4; ++b) s_hist[b][threadIdx.x] = 0;
    __syncthreads();
    for (size_t i = static_cast<size_t>(blockIdx.x) * kThreads + threadIdx.x; i < n;
         i += static_cast<size_t>(gridDim.x) * kThreads) {
        const unsigned int key = keys[i];
#pragma unroll
        for (unsigned int b = 0; b < 4; ++b) atomicAdd(&s_hist[b][(key >> (8 * b)) & 0xffu], 1u);
    }
    __syncthreads();
#pragma unroll
    for (unsigned int b = 0; b < 4; ++b) {
        const unsigned int c = s_hist[b][threadIdx.x];
        if (c) atomicAdd(&hist[b * kRadix + threadIdx.x], c);
    }
}

// ---------------------------------------------------------------- one pass
__global__ void __launch_bounds__(kThreads)
    onesweep_pass(const unsigned int* __restrict__ src, unsigned int* __restrict__ dst, size_t n,
                  unsigned int shift, const unsigned int* __restrict__ hist, unsigned int* counter,
                  unsigned int* status) {
    __shared__ unsigned int s_keys[kTile];
    __shared__ RankStorage s_rank;
    __shared__ unsigned int s_offset[kRadix];
    __shared__ unsigned int s_tile;

    // Tile numbers in the order blocks start (lesson 05, step 6): tile t - 1 belongs to a
    // block that has started, so a look-back always ends.
    if (threadIdx.x == 0) s_tile = atomicAdd(counter, 1u);
    __syncthreads();
    const unsigned int tile = s_tile;

    unsigned int keys[kItems], pos[kItems];
    const unsigned int count = load_tile(src, n, tile, keys);
    rank_keys(keys, pos, shift, s_rank);
#pragma unroll
    for (unsigned int j = 0; j < kItems; ++j) s_keys[pos[j]] = keys[j];

    // Thread d: the tile's count of digit d, from the rank's digit starts. The padding keys of
    // a last, partial tile are all digit 0xff: they are no keys, so they are not counted.
    const unsigned int d = threadIdx.x;
    const unsigned int next_start = d + 1 < kRadix ? s_rank.digit_start[d + 1] : kTile;
    unsigned int mine = next_start - s_rank.digit_start[d];
    if (d == kRadix - 1) mine -= kTile - count;

    // Publish the aggregate at once (tile 0's is already inclusive), look back, publish the
    // inclusive count.
    unsigned int* word_of = status + d;  // tile p's word for digit d: word_of[p * kRadix]
    store_status(&word_of[static_cast<size_t>(tile) * kRadix],
                 (tile == 0 ? kFlagInclusive : kFlagAggregate) | mine);
    unsigned int exclusive = 0;
    if (tile > 0) {
        unsigned int p = tile - 1;
        while (true) {
            const unsigned int word = load_status(&word_of[static_cast<size_t>(p) * kRadix]);
            if ((word & kFlagMask) == 0) continue;  // not published yet: read it again
            exclusive += word & kValueMask;
            if (word & kFlagInclusive) break;  // everything before p is in it
            --p;  // an aggregate: tile p's own keys only, look further back
        }
        store_status(&word_of[static_cast<size_t>(tile) * kRadix],
                     kFlagInclusive | (exclusive + mine));
    }

    // Staged key i of digit d goes to s_offset[d] + i: the keys of smaller digits (the
    // up-front histogram, scanned), those of digit d in earlier tiles, its rank in the tile.
    const unsigned int digit_start = block_exclusive_scan(hist[d], s_rank.warp_sums);
    s_offset[d] = digit_start + exclusive - s_rank.digit_start[d];
    __syncthreads();
    for (unsigned int i = threadIdx.x; i < count; i += kThreads) {
        const unsigned int key = s_keys[i];
        dst[s_offset[(key >> shift) & 0xffu] + i] = key;
    }
}

// Workspace: the four histograms (4 KiB), the four passes' tile counters, then the status
// words, 256 per tile for each pass (each pass its own, so one memset clears them all).
constexpr size_t kCountersOffset = 4 * kRadix * sizeof(unsigned int);
constexpr size_t kStatusOffset = kCountersOffset + 256;

extern "C" cudaError_t radix_sort_keys(const unsigned int* keys_in, unsigned int* keys_out,
                                       size_t n, unsigned int* keys_alt, void* workspace,
                                       size_t workspace_bytes, cudaStream_t stream) {
    const unsigned int tiles = static_cast<unsigned int>((n + kTile - 1) / kTile);
    const size_t words_per_pass = static_cast<size_t>(kRadix) * tiles;
    const size_t used = kStatusOffset + 4 * words_per_pass * sizeof(unsigned int);
    if (workspace_bytes < used) return cudaErrorInvalidValue;
    auto* base = static_cast<char*>(workspace);
    auto* hist = reinterpret_cast<unsigned int*>(base);
    auto* counters = reinterpret_cast<unsigned int*>(base + kCountersOffset);
    auto* status = reinterpret_cast<unsigned int*>(base + kStatusOffset);

    // Histograms, counters and every status word start at 0 (empty), at every call.
    cudaError_t err = cudaMemsetAsync(workspace, 0, used, stream);
    if (err != cudaSuccess) return err;
    const unsigned int hist_blocks = tiles < 1024 ? tiles : 1024;
    all_histograms<<<hist_blocks, kThreads, 0, stream>>>(keys_in, n, hist);

    const unsigned int* src = keys_in;
    for (unsigned int pass = 0; pass < 4; ++pass) {
        unsigned int* dst = pass % 2 == 0 ? keys_alt : keys_out;  // the last pass ends in out
        onesweep_pass<<<tiles, kThreads, 0, stream>>>(src, dst, n, 8 * pass, hist + pass * kRadix,
                                                      counters + pass,
                                                      status + pass * words_per_pass);
        src = dst;
    }
    return cudaGetLastError();
}
