// Lesson 13, step 2 — one pass per byte over the whole array: tile histograms, a scan, a
// stable scatter (solution).
//
// Teaches: the device-wide least-significant-digit (LSD) radix sort, built from lessons 06, 05
// and 07. Four passes, one per byte of the key, lowest first; each pass is a stable counting
// sort by that byte, in three kernels:
//
//   1. tile_histograms (lesson 06): each tile of kTile = 4096 keys counts its digits in a
//      shared histogram; counts[d * tiles + t] = the keys of digit d in tile t.
//   2. scan_digit_rows (lesson 05): the counts in digit-major order, scanned EXCLUSIVELY:
//      row d becomes "the keys of digit d in the tiles before t", and totals[d] the keys of
//      digit d in the whole array. The exclusive scan of the totals is where digit d starts.
//   3. scatter (lesson 07, with step 1's rank): each tile ranks its keys by the digit exactly
//      as in step 1, stages them in shared memory in that order, and writes staged key i of
//      digit d to
//          digit_start[d] + counts[d * tiles + t] + (i - tile_start[d])
//      the keys of smaller digits, then those of digit d in earlier tiles, then its rank
//      among the tile's keys of digit d. Staging makes the writes of one digit consecutive
//      (coalesced), instead of one scattered word per key.
//
//   pass:  keys_in -> keys_alt -> keys_out -> keys_alt -> keys_out   (shift 0, 8, 16, 24)
//
// Stable because every part keeps the order: earlier tiles first, and within a tile step 1's
// rank. Each pass reads the keys twice (histogram, scatter) and writes them once, and the scan
// reads and writes the counts: steps 3 and 4 take those reads away.
//
// Check:  ./cudalings check 13_sort/02_lsd_passes
// Stuck:  ./cudalings hint 13_sort/02_lsd_passes

#include "sort.cuh"

constexpr unsigned int kThreads = 256;
constexpr unsigned int kWarps = kThreads / 32;
constexpr unsigned int kItems = 16;                // keys per thread
constexpr unsigned int kTile = kThreads * kItems;  // 4096 keys per tile
constexpr unsigned int kWarpKeys = 32 * kItems;    // 512 consecutive keys per warp
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

// ---------------------------------------------------------------- 1. the tiles' histograms
__global__ void __launch_bounds__(kThreads)
    tile_histograms(const unsigned int* __restrict__ src, size_t n, unsigned int shift,
                    unsigned int* __restrict__ counts, unsigned int tiles) {
    __shared__ unsigned int hist[kRadix];
    hist[threadIdx.x] = 0;
    __syncthreads();
    const size_t tile_begin = static_cast<size_t>(blockIdx.x) * kTile;
    const size_t end = tile_begin + kTile < n ? tile_begin + kTile : n;
    for (size_t i = tile_begin + threadIdx.x; i < end; i += kThreads)
        atomicAdd(&hist[(src[i] >> shift) & 0xffu], 1u);
    __syncthreads();
    counts[static_cast<size_t>(threadIdx.x) * tiles + blockIdx.x] = hist[threadIdx.x];
}

// ---------------------------------------------------------------- 2. the scan of the counts
// One warp per digit: row d (one count per tile) becomes its exclusive scan, 32 tiles a round
// (lesson 03's shuffle scan, a carry across rounds); totals[d] = the row's sum.
__global__ void __launch_bounds__(32)
    scan_digit_rows(unsigned int* __restrict__ counts, unsigned int tiles,
                    unsigned int* __restrict__ totals) {
    const unsigned int lane = threadIdx.x;
    unsigned int* row = counts + static_cast<size_t>(blockIdx.x) * tiles;
    unsigned int carry = 0;  // the counts of the rounds before
    // dev: not covered (a second round of 32 tiles only past 32 tiles: 2^17 keys and more)
    for (unsigned int first = 0; first < tiles; first += 32) {
        const unsigned int t = first + lane;
        const unsigned int c = t < tiles ? row[t] : 0u;
        unsigned int inclusive = c;
#pragma unroll
        for (unsigned int d = 1; d < 32; d *= 2) {
            const unsigned int below = __shfl_up_sync(kFullMask, inclusive, d);
            if (lane >= d) inclusive += below;
        }
        if (t < tiles) row[t] = carry + inclusive - c;  // exclusive: the tiles before t only
        carry += __shfl_sync(kFullMask, inclusive, 31);
    }
    if (lane == 0) totals[blockIdx.x] = carry;
}

// ---------------------------------------------------------------- 3. the stable scatter
__global__ void __launch_bounds__(kThreads)
    scatter(const unsigned int* __restrict__ src, unsigned int* __restrict__ dst, size_t n,
            unsigned int shift, const unsigned int* __restrict__ counts,
            const unsigned int* __restrict__ totals, unsigned int tiles) {
    __shared__ unsigned int s_keys[kTile];
    __shared__ RankStorage s_rank;
    __shared__ unsigned int s_offset[kRadix];
    unsigned int keys[kItems], pos[kItems];
    const unsigned int count = load_tile(src, n, blockIdx.x, keys);
    rank_keys(keys, pos, shift, s_rank);
#pragma unroll
    for (unsigned int j = 0; j < kItems; ++j) s_keys[pos[j]] = keys[j];

    // Thread d: staged key i of digit d goes to s_offset[d] + i. Unsigned arithmetic wraps, so
    // the subtraction is safe even where it goes below 0 before i is added.
    const unsigned int d = threadIdx.x;
    const unsigned int digit_start = block_exclusive_scan(totals[d], s_rank.warp_sums);
    s_offset[d] =
        digit_start + counts[static_cast<size_t>(d) * tiles + blockIdx.x] - s_rank.digit_start[d];
    __syncthreads();

    // Staged key i: consecutive threads, consecutive keys of one digit, consecutive addresses.
    for (unsigned int i = threadIdx.x; i < count; i += kThreads) {
        const unsigned int key = s_keys[i];
        dst[s_offset[(key >> shift) & 0xffu] + i] = key;
    }
}

// Workspace: the 256 digit totals, then 256 counts per tile.
constexpr size_t kCountsOffset = kRadix * sizeof(unsigned int);

extern "C" cudaError_t radix_sort_keys(const unsigned int* keys_in, unsigned int* keys_out,
                                       size_t n, unsigned int* keys_alt, void* workspace,
                                       size_t workspace_bytes, cudaStream_t stream) {
    const unsigned int tiles = static_cast<unsigned int>((n + kTile - 1) / kTile);
    const size_t used = kCountsOffset + static_cast<size_t>(kRadix) * tiles * sizeof(unsigned int);
    if (workspace_bytes < used) return cudaErrorInvalidValue;
    auto* totals = static_cast<unsigned int*>(workspace);
    auto* counts = reinterpret_cast<unsigned int*>(static_cast<char*>(workspace) + kCountsOffset);

    const unsigned int* src = keys_in;
    for (unsigned int pass = 0; pass < 4; ++pass) {
        unsigned int* dst = pass % 2 == 0 ? keys_alt : keys_out;  // the last pass ends in out
        const unsigned int shift = 8 * pass;
        tile_histograms<<<tiles, kThreads, 0, stream>>>(src, n, shift, counts, tiles);
        scan_digit_rows<<<kRadix, 32, 0, stream>>>(counts, tiles, totals);
        scatter<<<tiles, kThreads, 0, stream>>>(src, dst, n, shift, counts, totals, tiles);
        src = dst;
    }
    return cudaGetLastError();
}
