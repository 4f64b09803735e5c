// Lesson 13, step 5 — key-value pairs, stably; signed ints and floats by their order-preserving
// flips (solution).
//
// Teaches: what a radix sort sorts is BITS, so any key whose order is the order of some
// unsigned integer can be sorted by step 4 unchanged: map the key to that integer on the way
// in, and back on the way out. Two maps (the "flips"):
//
//   int:    key ^ 0x80000000              -2^31 -> 0, -1 -> 0x7fffffff, 0 -> 0x80000000
//   float:  sign set ? ~key : key | 0x80000000
//
// A positive float's bits already grow with its value: setting the sign bit puts them all
// above the negatives. A negative float's bits grow as the value DROPS (more magnitude, more
// bits): flipping every bit reverses that and puts them below. Flipping the sign bit alone
// (the int map) leaves the negative floats in reverse order. The map sends -0.0 (0x80000000)
// to 0x7fffffff and +0.0 to 0x80000000: -0.0 sorts first, as the contract's totalOrder wants,
// and every NaN keeps its own place by its bits.
//
// Pairs: a value goes where its key goes. The rank is computed from the keys; the values are
// staged beside them in shared memory with the same positions and written with the same
// offsets. Stability is what makes the values meaningful: equal keys keep their input order, so
// values_out is the one stable permutation (the checker's values are the input positions).
//
// Flip once: on the first pass's load, and back on the last pass's store; the up-front
// histograms count flipped keys. The buffers between passes hold flipped keys, nobody sees them.
//
// Check:  ./cudalings check 13_sort/05_pairs_and_floats
// Stuck:  ./cudalings hint 13_sort/05_pairs_and_floats

#include "sort.cuh"

constexpr unsigned int kThreads = 256;
constexpr unsigned int kWarps = kThreads / 32;
constexpr unsigned int kItems = 16;                // keys per thread
constexpr unsigned int kTile = kThreads * kItems;  // 4096 keys per tile
constexpr unsigned int kWarpKeys = 32 * kItems;    // 512 consecutive keys per warp
constexpr unsigned int kRadix = 256;               // 8-bit digits
constexpr unsigned int kFullMask = 0xffffffffu;
static_assert(kThreads == kRadix, "thread d looks after digit d");

// The key's order as an unsigned integer, and back (sort.cuh's contract for each key type).
__device__ __forceinline__ unsigned int to_order(unsigned int key, int type) {
    if (type == kKeySigned) return key ^ 0x80000000u;
    if (type == kKeyFloat) return (key & 0x80000000u) ? ~key : key | 0x80000000u;
    return key;
}
__device__ __forceinline__ unsigned int from_order(unsigned int bits, int type) {
    if (type == kKeySigned) return bits ^ 0x80000000u;
    if (type == kKeyFloat) return (bits & 0x80000000u) ? bits & 0x7fffffffu : ~bits;
    return bits;
}

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

// The tile's keys (as order bits: flipped when `type` says so) and values, pair j of a thread at
// warp·512 + 32·j + lane; past the end, key 0xffffffff (padding: ranked last, never written,
// never counted).
__device__ __forceinline__ unsigned int load_tile(const unsigned int* src, const unsigned int* vals,
                                                  size_t n, unsigned int tile, int type,
                                                  unsigned int (&keys)[kItems],
                                                  unsigned int (&values)[kItems]) {
    const unsigned int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const size_t tile_begin = static_cast<size_t>(tile) * kTile;
    const size_t left = n - tile_begin;
    const unsigned int count = left < kTile ? static_cast<unsigned int>(left) : kTile;
#pragma unroll
    for (unsigned int j = 0; j < kItems; ++j) {
        const unsigned int i = warp * kWarpKeys + 32 * j + lane;
        keys[j] = i < count ? to_order(src[tile_begin + i], type) : 0xffffffffu;
        values[j] = i < count ? vals[tile_begin + i] : 0u;
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
    all_histograms(const unsigned int* __restrict__ keys, size_t n, int type, unsigned int* hist) {
    __shared__ unsigned int s_hist[4][kRadix];
#pragma unroll
    for (unsigned int b = 0; b < 4; ++b) s_hist[b][threadIdx.x] = 0;
    __syncthreads();
    for (size_t i = static_cast<size_t>(blockIdx.x) * kThreads + threadIdx.x; i < n;
         i += static_cast<size_t>(gridDim.x) * kThreads) {
        const unsigned int key = to_order(keys[i], type);
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
    pairs_pass(const unsigned int* __restrict__ src, const unsigned int* __restrict__ src_values,
               unsigned int* __restrict__ dst, unsigned int* __restrict__ dst_values, size_t n,
               unsigned int shift, int load_type, int store_type,
               const unsigned int* __restrict__ hist, unsigned int* counter, unsigned int* status) {
    __shared__ unsigned int s_keys[kTile];
    __shared__ unsigned int s_values[kTile];
    __shared__ RankStorage s_rank;
    __shared__ unsigned int s_offset[kRadix];
    __shared__ unsigned int s_tile;

    // Tile numbers in the order blocks start (lesson 05, step 6): tile t - 1 belongs to a
    // block that has started, so a look-back always ends.
    if (threadIdx.x == 0) s_tile = atomicAdd(counter, 1u);
    __syncthreads();
    const unsigned int tile = s_tile;

    unsigned int keys[kItems], values[kItems], pos[kItems];
    const unsigned int count = load_tile(src, src_values, n, tile, load_type, keys, values);
    rank_keys(keys, pos, shift, s_rank);
#pragma unroll
    for (unsigned int j = 0; j < kItems; ++j) {
        s_keys[pos[j]] = keys[j];
        s_values[pos[j]] = values[j];  // the value goes where its key goes
    }

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
        const unsigned int at = s_offset[(key >> shift) & 0xffu] + i;
        dst[at] = from_order(key, store_type);  // unflipped on the last pass only
        dst_values[at] = s_values[i];
    }
}

// Workspace: the four histograms (4 KiB), the four passes' tile counters, then the status
// words, 256 per tile for each pass (each pass its own, so one memset clears them all).
constexpr size_t kCountersOffset = 4 * kRadix * sizeof(unsigned int);
constexpr size_t kStatusOffset = kCountersOffset + 256;

extern "C" cudaError_t radix_sort_pairs(const unsigned int* keys_in, const unsigned int* values_in,
                                        unsigned int* keys_out, unsigned int* values_out, size_t n,
                                        int key_type, unsigned int* keys_alt,
                                        unsigned int* values_alt, void* workspace,
                                        size_t workspace_bytes, cudaStream_t stream) {
    const unsigned int tiles = static_cast<unsigned int>((n + kTile - 1) / kTile);
    const size_t words_per_pass = static_cast<size_t>(kRadix) * tiles;
    const size_t used = kStatusOffset + 4 * words_per_pass * sizeof(unsigned int);
    if (workspace_bytes < used) return cudaErrorInvalidValue;
    if (key_type != kKeyUnsigned && key_type != kKeySigned && key_type != kKeyFloat)
        return cudaErrorInvalidValue;
    auto* base = static_cast<char*>(workspace);
    auto* hist = reinterpret_cast<unsigned int*>(base);
    auto* counters = reinterpret_cast<unsigned int*>(base + kCountersOffset);
    auto* status = reinterpret_cast<unsigned int*>(base + kStatusOffset);

    cudaError_t err = cudaMemsetAsync(workspace, 0, used, stream);
    if (err != cudaSuccess) return err;
    const unsigned int hist_blocks = tiles < 1024 ? tiles : 1024;
    all_histograms<<<hist_blocks, kThreads, 0, stream>>>(keys_in, n, key_type, hist);

    const unsigned int* src = keys_in;
    const unsigned int* src_values = values_in;
    for (unsigned int pass = 0; pass < 4; ++pass) {
        unsigned int* dst = pass % 2 == 0 ? keys_alt : keys_out;
        unsigned int* dst_values = pass % 2 == 0 ? values_alt : values_out;
        // Flip on the first load, unflip on the last store; unsigned order bits in between.
        const int load_type = pass == 0 ? key_type : kKeyUnsigned;
        const int store_type = pass == 3 ? key_type : kKeyUnsigned;
        pairs_pass<<<tiles, kThreads, 0, stream>>>(src, src_values, dst, dst_values, n, 8 * pass,
                                                   load_type, store_type, hist + pass * kRadix,
                                                   counters + pass, status + pass * words_per_pass);
        src = dst;
        src_values = dst_values;
    }
    return cudaGetLastError();
}
