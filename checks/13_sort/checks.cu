// Checks of lesson 13 (radix sort): three entry points, one problem each.
//   sort_tiles        step 1     every tile of kSortTile keys sorted on its own
//   radix_sort_keys   steps 2-4  the whole array, unsigned keys
//   radix_sort_pairs  step 5     the whole array, key-value pairs, unsigned, signed or float keys
//
// A sort moves bits, so everything is exact: the output must be the checker's own stable sort of
// the input, word for word. That sort is three CUB-free kernels per pass of 8 bits (the emulator
// runs them too): digit counts per chunk of 2048 keys, an exclusive scan of each digit's counts
// across the chunks (and of the 256 digit totals), and a scatter in which one warp walks its
// chunk 32 keys at a time, each key's rank among the equal digits of its round from
// __match_any_sync. It sorts (key, position) pairs, so for step 5 the wanted values are the
// positions: the checker's values_in[i] is i. For step 1 the chunks are the tiles, and each chunk
// is sorted within itself.
//
// The keys (each pattern a generator, so any size is cheap and the input proves it was not
// written): all 32 bits random; all equal; drawn from 2 values; from 16 values; sorted;
// sorted in reverse; differing only in the top byte (the first three passes see one digit and
// move nothing that matters: a scatter that is not stable still passes here, keys-only) and
// only in the bottom byte (the last three passes see one digit: an unstable scatter scrambles
// the first pass's order, and the keys come out ordered by the top bits only). Step 5 adds the
// same patterns in each key type's own order (sorted floats are sorted by value) and
// "specials": ±0.0, ±inf, NaNs of both signs with several payloads, denormals, INT_MIN,
// INT_MAX, among ordinary values, and floats in [-1, 1).
//
// Sizes: 1, 2, a warp and its neighbours, a block of 256 and its neighbours, 1000, a tile of
// 2048 and of 4096 keys and their neighbours, several tiles with a partial last one (3·4096 + 5),
// each pattern at 5000 + 1000·k (two to four tiles), then 2^17 + 5 (the emulator's one
// values-only case; capped at 2^16 + 3 for its run with every check), 2^20 + 4099, 2^24 (five
// calls on one input, each judged and each the same bits), 2^28 - 5 and 2^28 on a GPU.
//
// When the keys are wrong the reason says what is left of the order: sorted by the top 8, 16 or
// 24 bits only (a pass that lost the order of the passes before it: an unstable scatter, or the
// bytes taken in the wrong order), or sorted but not the input's keys (two keys sent to one
// place, others never written: offsets off by one digit's count). For pairs, values that all
// came with their keys but whose equal keys are out of input order mean "not stable".
//
// Timing: 2^28 uniform keys, and 2^28 keys from 16 values (the issue's second goal), one
// staircase column each; the bytes are the least any sort must move, 4n read and 4n written
// (8n more for pairs): a radix sort moves several times that, so "% of copy" stays low by
// nature, and the figure to read is the ratio to CUB.
#include <cstdint>
#include <string>
#include <vector>

#include "kit.h"
#include "sort.cuh"

namespace {

using namespace kit;

constexpr u64 kMi = u64{1} << 20;
constexpr unsigned kChunk = kSortTile;  // the checker's chunk: step 1's tile
constexpr unsigned kFullMask = 0xffffffffu;

// ---------------------------------------------------------------- the order of a key type
__host__ __device__ inline u32 order_bits(u32 word, int type) {
    if (type == kKeySigned) return word ^ 0x80000000u;
    if (type == kKeyFloat) return (word & 0x80000000u) ? ~word : word | 0x80000000u;
    return word;
}
__host__ __device__ inline u32 from_order_bits(u32 order, int type) {
    if (type == kKeySigned) return order ^ 0x80000000u;
    if (type == kKeyFloat) return (order & 0x80000000u) ? order & 0x7fffffffu : ~order;
    return order;
}

// ---------------------------------------------------------------- inputs
enum Pattern : int {
    kUniform,
    kAllEqual,
    kTwoValues,
    kSixteenValues,
    kSorted,
    kReversed,
    kTopByteOnly,
    kBottomByteOnly,
    kSpecials,
    kUniformFloats,
    kPatterns
};

const char* pattern_text(int p) {
    switch (p) {
        case kAllEqual:
            return "then all made equal";
        case kTwoValues:
            return "drawn from 2 values";
        case kSixteenValues:
            return "drawn from 16 values";
        case kSorted:
            return "then sorted";
        case kReversed:
            return "then sorted in reverse";
        case kTopByteOnly:
            return "differing only in the top byte";
        case kBottomByteOnly:
            return "differing only in the bottom byte";
        case kSpecials:
            return "a quarter special (±0, ±inf, NaNs, denormals, extremes)";
        case kUniformFloats:
            return "floats in [-1, 1)";
        default:
            return "all 32 bits random";
    }
}

// The specials, as words: floats, then signed ints.
__host__ __device__ inline u32 special_word(int type, std::uint64_t pick) {
    if (type == kKeyFloat) {
        constexpr u32 table[] = {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u,
                                 0x7fc00000u, 0xffc00000u, 0x7fc01234u, 0xff812345u,
                                 0x7f800001u, 0x00000001u, 0x80000001u, 0x7f7fffffu,
                                 0xff7fffffu, 0x3f800000u, 0xbf800000u, 0x00800000u};
        return table[pick % 16];
    }
    constexpr u32 table[] = {0x00000000u, 0xffffffffu, 0x00000001u, 0x80000000u,
                             0x7fffffffu, 0xfffffffeu, 0x00000002u, 0x80000001u};
    return table[pick % 8];
}

// Key i of a pattern, generated in the key type's order (`order` bits, then back to a word), so
// that "sorted" and "then sorted in reverse" are sorted and reversed for every type.
struct Keys {
    int pattern;
    int type;
    u64 n;
    __host__ __device__ u32 operator()(u64 base, u64 i) const {
        const std::uint64_t h = element_hash(base, i);
        const std::uint64_t a = splitmix64(base ^ 0x5047ull);  // one per array
        const u64 count = n ? n : 1;
        u32 order = static_cast<u32>(h >> 32);
        switch (pattern) {
            case kAllEqual:
                order = static_cast<u32>(a >> 32);
                break;
            case kTwoValues:
                order = static_cast<u32>((h & 1) ? a : a >> 32);
                break;
            case kSixteenValues:
                order = static_cast<u32>(splitmix64(a + (h & 15)) >> 32);
                break;
            case kSorted:  // increasing, with ties where n > 2^32 / n
                order = static_cast<u32>((i << 32) / count);
                break;
            case kReversed:
                order = ~static_cast<u32>((i << 32) / count);
                break;
            case kTopByteOnly:
                order = (static_cast<u32>(a) & 0x00ffffffu) | static_cast<u32>(h >> 56) << 24;
                break;
            case kBottomByteOnly:
                order = (static_cast<u32>(a) & 0xffffff00u) | static_cast<u32>(h >> 56);
                break;
            case kSpecials:
                if (h % 4 == 0) return special_word(type, h >> 8);
                break;
            case kUniformFloats: {
                const float x = 2.0f * unit_float(h) - 1.0f;
                return bits_of(x);
            }
            default:
                break;
        }
        return from_order_bits(order, type);
    }
};

// values_in[i] = i: a value says where its key came from.
struct Positions {
    __host__ __device__ u32 operator()(u64, u64 i) const { return static_cast<u32>(i); }
};

// ---------------------------------------------------------------- the checker's sort
__device__ inline unsigned digit_of(u32 word, int type, int shift) {
    return (order_bits(word, type) >> shift) & 0xffu;
}

// counts[d * chunks + c] = how many keys of chunk c have digit d.
__global__ void chunk_counts(const u32* keys, u64 n, int type, int shift, u32* counts, u32 chunks) {
    __shared__ u32 hist[256];
    for (unsigned d = threadIdx.x; d < 256; d += blockDim.x) hist[d] = 0;
    __syncthreads();
    const u64 begin = u64{blockIdx.x} * kChunk, end = begin + kChunk < n ? begin + kChunk : n;
    for (u64 i = begin + threadIdx.x; i < end; i += blockDim.x)
        atomicAdd(&hist[digit_of(keys[i], type, shift)], 1u);
    __syncthreads();
    for (unsigned d = threadIdx.x; d < 256; d += blockDim.x)
        counts[u64{d} * chunks + blockIdx.x] = hist[d];
}

// Block d, one warp: row d of counts becomes its exclusive scan (the keys of digit d in the
// chunks before each chunk), 32 chunks a round with a carry; totals[d] the row's sum.
__global__ void scan_rows(u32* counts, u32 chunks, u32* totals) {
    const unsigned lane = threadIdx.x;
    u32* row = counts + u64{blockIdx.x} * chunks;
    u32 carry = 0;
    for (u32 first = 0; first < chunks; first += 32) {
        const u32 c = first + lane < chunks ? row[first + lane] : 0u;
        u32 inclusive = c;
        for (unsigned d = 1; d < 32; d *= 2) {
            const u32 below = __shfl_up_sync(kFullMask, inclusive, d);
            if (lane >= d) inclusive += below;
        }
        if (first + lane < chunks) row[first + lane] = carry + inclusive - c;
        carry += __shfl_sync(kFullMask, inclusive, 31);
    }
    if (lane == 0) totals[blockIdx.x] = carry;
}

// starts[d] = the keys of digits below d (one block of 256 threads).
__global__ void digit_starts(const u32* totals, u32* starts) {
    __shared__ u32 sums[256];
    sums[threadIdx.x] = totals[threadIdx.x];
    __syncthreads();
    for (unsigned d = 1; d < 256; d *= 2) {
        const u32 below = threadIdx.x >= d ? sums[threadIdx.x - d] : 0u;
        __syncthreads();
        sums[threadIdx.x] += below;
        __syncthreads();
    }
    starts[threadIdx.x] = sums[threadIdx.x] - totals[threadIdx.x];
}

// One warp per chunk: its keys (and their positions) to their places, in order. With `starts`
// the places are global (starts[d] + the scanned counts); without, the chunk is sorted within
// itself (counts not scanned: the chunk's own exclusive scan of its 256 counts).
__global__ void scatter_chunk(const u32* keys, const u32* from, u32* keys_out, u32* from_out, u64 n,
                              int type, int shift, const u32* counts, u32 chunks,
                              const u32* starts) {
    __shared__ u32 base[256];
    const unsigned lane = threadIdx.x;
    const u64 begin = u64{blockIdx.x} * kChunk, end = begin + kChunk < n ? begin + kChunk : n;
    if (starts) {
        for (unsigned d = lane; d < 256; d += 32)
            base[d] = starts[d] + counts[u64{d} * chunks + blockIdx.x];
    } else {  // lane l scans digits 8l .. 8l + 7, then the lanes' sums across the warp
        u32 own[8], sum = 0;
        for (unsigned j = 0; j < 8; ++j) {
            own[j] = counts[u64{8 * lane + j} * chunks + blockIdx.x];
            sum += own[j];
        }
        u32 inclusive = sum;
        for (unsigned d = 1; d < 32; d *= 2) {
            const u32 below = __shfl_up_sync(kFullMask, inclusive, d);
            if (lane >= d) inclusive += below;
        }
        u32 at = static_cast<u32>(begin) + inclusive - sum;
        for (unsigned j = 0; j < 8; ++j) {
            base[8 * lane + j] = at;
            at += own[j];
        }
    }
    __syncwarp();
    for (u64 round = begin; round < end; round += 32) {
        const u64 i = round + lane;
        const bool valid = i < end;
        const u32 key = valid ? keys[i] : 0u;
        const u32 where = valid ? (from ? from[i] : static_cast<u32>(i)) : 0u;
        const unsigned d = valid ? digit_of(key, type, shift) : 256u;
        const unsigned peers = __match_any_sync(kFullMask, d);
        const unsigned rank = __popc(peers & ((1u << lane) - 1u));
        u32 at = 0;
        if (valid) at = base[d] + rank;
        __syncwarp();
        if (valid) {
            keys_out[at] = key;
            from_out[at] = where;
            if (lane == 31u - __clz(peers)) base[d] += __popc(peers);
        }
        __syncwarp();
    }
}

// The buffers of the checker's sort, and the sort itself: 4 passes of 8 bits, the result in
// `keys` and `from` (the position each key came from).
class CheckerSort {
  public:
    explicit CheckerSort(u64 n)
        : n_(n),
          chunks_(static_cast<u32>((n + kChunk - 1) / kChunk)),
          keys(n),
          from(n),
          tmp_keys_(n),
          tmp_from_(n),
          counts_(u64{256} * (chunks_ ? chunks_ : 1)),
          totals_(256),
          starts_(256) {}
    void run(const u32* in, int type, bool within_chunks, cudaStream_t s) {
        if (!chunks_) return;
        const u32* src = in;
        const u32* src_from = nullptr;
        for (int pass = 0; pass < 4; ++pass) {
            u32* dst = pass % 2 == 0 ? tmp_keys_.get() : keys.get();
            u32* dst_from = pass % 2 == 0 ? tmp_from_.get() : from.get();
            const int shift = 8 * pass;
            chunk_counts<<<chunks_, 256, 0, s>>>(src, n_, type, shift, counts_.get(), chunks_);
            DEV_CHECK(cudaGetLastError());
            if (!within_chunks) {
                scan_rows<<<256, 32, 0, s>>>(counts_.get(), chunks_, totals_.get());
                DEV_CHECK(cudaGetLastError());
                digit_starts<<<1, 256, 0, s>>>(totals_.get(), starts_.get());
                DEV_CHECK(cudaGetLastError());
            }
            scatter_chunk<<<chunks_, 32, 0, s>>>(src, src_from, dst, dst_from, n_, type, shift,
                                                 counts_.get(), chunks_,
                                                 within_chunks ? nullptr : starts_.get());
            DEV_CHECK(cudaGetLastError());
            src = dst;
            src_from = dst_from;
        }
    }

  private:
    u64 n_;
    u32 chunks_;

  public:
    dev::Array<u32> keys, from;

  private:
    dev::Array<u32> tmp_keys_, tmp_from_, counts_, totals_, starts_;
};

// ---------------------------------------------------------------- diagnoses
// out[i - 1] > out[i] in the key type's order, on the top 8, 16, 24 and 32 bits ([0] .. [3]);
// with a segment, only within segments (step 1's tiles).
__global__ void count_descents(const u32* out, u64 n, int type, u64 segment,
                               unsigned long long* descents) {
    unsigned long long local[4] = {0, 0, 0, 0};
    for (u64 i = 1 + blockIdx.x * u64{blockDim.x} + threadIdx.x; i < n;
         i += u64{gridDim.x} * blockDim.x) {
        if (segment && i % segment == 0) continue;
        const u32 a = order_bits(out[i - 1], type), b = order_bits(out[i], type);
        for (int k = 0; k < 4; ++k) {
            const int drop = 24 - 8 * k;
            local[k] += (a >> drop) > (b >> drop);
        }
    }
    for (int k = 0; k < 4; ++k)
        if (local[k]) atomicAdd(&descents[k], local[k]);
}

// Pairs: [0] values that are no position of a key equal to their own key (foreign: lost or
// mixed up), [1] equal neighbouring keys whose positions are not increasing (unstable).
__global__ void count_value_faults(const u32* keys_in, const u32* keys_out, const u32* values,
                                   u64 n, unsigned long long* faults) {
    unsigned long long foreign = 0, unstable = 0;
    for (u64 i = blockIdx.x * u64{blockDim.x} + threadIdx.x; i < n;
         i += u64{gridDim.x} * blockDim.x) {
        const u32 v = values[i];
        if (v >= n || keys_in[v] != keys_out[i]) ++foreign;
        if (i > 0 && keys_out[i - 1] == keys_out[i] && values[i - 1] >= v) ++unstable;
    }
    if (foreign) atomicAdd(&faults[0], foreign);
    if (unstable) atomicAdd(&faults[1], unstable);
}

const char* const kExactWhy =
    "bit-exact: a sort moves words, so every output word must be the one the checker's own "
    "stable sort puts there";

// ---------------------------------------------------------------- the problems
Case keys_case(u64 n, int pattern, int type = kKeyUnsigned) {
    const std::string text = pattern == kSpecials && type != kKeyFloat
                                 ? "a quarter special (0, ±1, ±2, INT_MIN, INT_MAX, INT_MIN + 1)"
                                 : pattern_text(pattern);
    Case c = Case::of(n, dist::keys).with("pattern", pattern, text);
    if (type == kKeySigned) c.with("type", type, "int keys");
    if (type == kKeyFloat) c.with("type", type, "float keys");
    return c;
}

// Every size with the patterns in turn, then every pattern at a size of two to four tiles.
// Under the emulator a sort costs some microseconds per key: the sizes it runs with every check
// add up to about 100K keys, and the first larger case runs capped at 2^16 + 3.
std::vector<Case> table(const std::vector<int>& patterns, int type, bool gpu_sizes) {
    const u64 sizes[] = {1,    2,    31,   32,   33,   255,  256,  257,
                         1000, 2047, 2048, 2049, 4095, 4096, 4097, 3 * 4096 + 5};
    std::vector<Case> cases;
    std::size_t k = 0;
    for (u64 n : sizes) cases.push_back(keys_case(n, patterns[k++ % patterns.size()], type));
    for (std::size_t p = 0; p < patterns.size(); ++p)
        cases.push_back(keys_case(5000 + 1000 * p, patterns[p], type));
    // The emulator's values-only case (the largest case up to 2^20 + 1025: none other lies
    // there), capped at 2^16 + 3 for its run with every check; then the GPU's.
    cases.push_back(keys_case(2 * 65536 + 5, kUniform, type));
    if (gpu_sizes) {
        cases.push_back(keys_case(kMi + 4099, kBottomByteOnly, type));
        cases.push_back(keys_case(kMi + 4099, kSixteenValues, type));
        cases.push_back(keys_case(u64{1} << 24, kUniform, type).repeated(5, true));
        cases.push_back(keys_case(u64{1} << 24, kTopByteOnly, type));
        cases.push_back(keys_case(kTimedSize - 5, kUniform, type));
        cases.push_back(keys_case(kTimedSize, kReversed, type));
    }
    return cases;
}

const std::vector<int> kUnsignedPatterns = {kUniform, kAllEqual, kTwoValues,   kSixteenValues,
                                            kSorted,  kReversed, kTopByteOnly, kBottomByteOnly};

// What the three problems share: the keys, the checker's sort, the keys' judge.
class SortProblem : public Problem {
  public:
    SortProblem(const Case& c, const Setup& s, bool tiles)
        : Problem(c, s),
          keys_in_(*this, "keys_in", n(), Keys{pattern(), key_type(), c.n()}),
          keys_out_(*this, "keys_out", n()),
          want_(n()),
          tiles_(tiles) {
        keys_out_.on_overrun(
            "keys_out holds n keys: a key was written past keys_out[n - 1], so its position is "
            "too large. The usual cause: an inclusive scan where the exclusive one belongs (a "
            "digit's first key goes to the count of the keys before it, not including itself).");
    }
    void expect() override { want_.run(keys_in_.get(), key_type(), tiles_, stream()); }
    Traffic traffic() const override { return Traffic().read<u32>(n()).write<u32>(n()); }
    static Advice advice() {
        return {{"TIMEOUT",
                 "A sort that never ends waits for a status word that never changes. The three "
                 "usual causes (lesson 05, step 7): (1) tile numbers from blockIdx.x, so a tile "
                 "waits for a tile whose block never starts: take them from an atomic counter; "
                 "(2) status words polled through a plain pointer, read once and kept in a "
                 "register: read them through volatile; (3) status words or counters not cleared "
                 "before each pass (the workspace is full of NaN at every call)."},
                {"TIMEOUT/blocks that had not started",
                 "A block waits for a block that has not started: take tile numbers from an atomic "
                 "counter (atomicAdd by thread 0, one counter per pass), never from blockIdx.x."},
                {"TIMEOUT/without touching memory",
                 "A thread polls a value it never reads again: read the status words through a "
                 "volatile pointer, so every round of the wait loads them anew."},
                {"TIMEOUT/every block had started",
                 "Every block had started, and each waits for a status word no block will write: "
                 "a look-back that reads below tile 0, or status words (or the tile counter) not "
                 "cleared before this pass: a pass needs its own cleared words."}};
    }

  protected:
    int pattern() const { return static_cast<int>(params().number_or("pattern", kUniform)); }
    int key_type() const { return static_cast<int>(params().number_or("type", kKeyUnsigned)); }
    // The keys' outcome, with what is left of the order when they are wrong.
    Part keys_part() const {
        return {"keys_out",
                compare(keys_out_.get(), n(), EqualArray<u32>{want_.keys.get()}, stream()),
                kExactWhy, "key"};
    }
    // No descents at all in the order of `type`.
    bool sorted_as(int type) {
        dev::Array<unsigned long long> d(4);
        dev::fill_bytes(d.get(), 0, 4 * sizeof(unsigned long long), stream());
        count_descents<<<grid_for(n()), 256, 0, stream()>>>(keys_out_.get(), n(), type,
                                                            tiles_ ? kSortTile : 0, d.get());
        DEV_CHECK(cudaGetLastError());
        dev::sync_stream(stream());
        unsigned long long descents[4];
        dev::copy_to_host(descents, d.get(), sizeof descents);
        return descents[3] == 0;
    }
    void diagnose_keys(Outcome& o, const Comparison& cmp) {
        if (cmp.wrong == 0 || cmp.unwritten == cmp.wrong) return;
        dev::Array<unsigned long long> d(4);
        dev::fill_bytes(d.get(), 0, 4 * sizeof(unsigned long long), stream());
        count_descents<<<grid_for(n()), 256, 0, stream()>>>(keys_out_.get(), n(), key_type(),
                                                            tiles_ ? kSortTile : 0, d.get());
        DEV_CHECK(cudaGetLastError());
        dev::sync_stream(stream());
        unsigned long long descents[4];
        dev::copy_to_host(descents, d.get(), sizeof descents);
        const std::string where = tiles_ ? " within each tile" : "";
        if (cmp.unwritten) return;  // holes: the order of what is there says little
        if (key_type() == kKeyFloat && descents[3] > 0 && sorted_as(kKeySigned)) {
            o.reason = "keys: sorted as ints, negative floats in reverse order";
            o.explain(
                "The float keys are in order as if they were ints (the sign bit flipped, "
                "nothing else): the negative floats come out in reverse order. A negative "
                "float's bits grow as its value drops, so its map must flip every bit (~key), "
                "while a positive float only gets its sign bit set (key | 0x80000000).");
            return;
        }
        if (descents[3] == 0) {
            o.reason = "keys: sorted, but not the input's keys";
            o.explain("The keys are in order" + where +
                      ", but some input keys are missing and others appear twice: two keys "
                      "were sent to the same position. Look at the offsets: an exclusive scan "
                      "of the counts (a digit's first key goes to the number of keys before "
                      "its digit, and before it within the digit), the tile's counts of the "
                      "right pass, and a rank within the digit that counts only earlier keys.");
            return;
        }
        int bits = 0;
        while (bits < 3 && descents[bits] == 0) ++bits;
        if (bits == 0) return;
        o.reason = "keys: ordered by the top " + std::to_string(8 * bits) + " bits only";
        o.explain(
            "Every key is in order" + where + " by its top " + std::to_string(8 * bits) +
            " bits, but not by the bits below them: the passes that sorted by the lower bytes "
            "had their order lost by a later pass. A least-significant-digit sort works only "
            "when every pass is stable (keys with the same digit keep the order the previous "
            "pass left) and the passes go from the lowest byte (shift 0) to the highest "
            "(shift 24).");
    }

    Input<u32> keys_in_;
    Output<u32> keys_out_;
    CheckerSort want_;
    bool tiles_;
};

// ---------------------------------------------------------------- step 1: sort_tiles
class SortTiles : public SortProblem {
  public:
    static constexpr const char* kName = "sort_tiles";
    static constexpr const char* kSymbol = "sort_tiles";
    static std::vector<Case> cases() { return table(kUnsignedPatterns, kKeyUnsigned, true); }
    static std::vector<Case> timed() {
        return {keys_case(kTimedSize, kUniform).timed_as("uniform")};
    }
    SortTiles(const Case& c, const Setup& s) : SortProblem(c, s, true) {}
    cudaError_t call(void* fn, Side side) override {
        return entry<decltype(&sort_tiles)>(fn)(keys_in_, keys_out_.at(side), n(), stream());
    }
    Outcome judge() override {
        Part keys = keys_part();
        Outcome o = judge_values(keys.cmp, kExactWhy);
        if (!o.pass()) diagnose_keys(o, keys.cmp);
        return o;
    }
};
CUDALINGS_PROBLEM(SortTiles);

// ---------------------------------------------------------------- steps 2-4: radix_sort_keys
const char* const kAltAdvice =
    "keys_alt holds n keys: a key was written past keys_alt[n - 1], so its position is too "
    "large. The usual cause: an inclusive scan where the exclusive one belongs (a digit's first "
    "key goes to the count of the keys before it, not including itself).";
const char* const kWorkspaceAdvice =
    "The workspace holds sort_workspace_bytes(n) bytes: 256 words per 1024 keys, and 64 KiB "
    "more. Something was written past that: more tiles than it was sized for, or an index past "
    "the last tile.";

class RadixSortKeys : public SortProblem {
  public:
    static constexpr const char* kName = "radix_sort_keys";
    static constexpr const char* kSymbol = "radix_sort_keys";
    static std::vector<Case> cases() { return table(kUnsignedPatterns, kKeyUnsigned, true); }
    static std::vector<Case> timed() {
        return {keys_case(kTimedSize, kUniform).timed_as("uniform"),
                keys_case(kTimedSize, kSixteenValues).timed_as("16 values")};
    }
    RadixSortKeys(const Case& c, const Setup& s)
        : SortProblem(c, s, false),
          alt_(*this, "keys_alt", n() * sizeof(u32)),
          ws_(*this, "the workspace", sort_workspace_bytes(n())) {
        alt_.on_overrun(kAltAdvice);
        ws_.on_overrun(kWorkspaceAdvice);
    }
    cudaError_t call(void* fn, Side side) override {
        return entry<decltype(&radix_sort_keys)>(fn)(keys_in_, keys_out_.at(side), n(),
                                                     static_cast<u32*>(alt_.at(side)), ws_.at(side),
                                                     ws_.bytes(), stream());
    }
    Outcome judge() override {
        Part keys = keys_part();
        Outcome o = judge_values(keys.cmp, kExactWhy);
        if (!o.pass()) diagnose_keys(o, keys.cmp);
        return o;
    }

  private:
    Workspace alt_, ws_;
};
CUDALINGS_PROBLEM(RadixSortKeys);

// ---------------------------------------------------------------- step 5: radix_sort_pairs
class RadixSortPairs : public SortProblem {
  public:
    static constexpr const char* kName = "radix_sort_pairs";
    static constexpr const char* kSymbol = "radix_sort_pairs";
    // Unsigned keys at the table's sizes, then signed and float keys: each pattern once in
    // their order at 3000 + 1000·k keys, specials, and for floats values in [-1, 1) (+0.0
    // among them); then larger sizes on a GPU. Pairs cost twice the keys' time under the
    // emulator: the patterns of unsigned keys at several tiles are steps 2-4's.
    static std::vector<Case> cases() {
        std::vector<Case> cases;
        const u64 sizes[] = {1,    2,    31,   32,   33,   255,  256,  257,
                             1000, 2047, 2048, 2049, 4095, 4096, 4097, 3 * 4096 + 5};
        std::size_t k = 0;
        for (u64 n : sizes)
            cases.push_back(keys_case(n, kUnsignedPatterns[k++ % kUnsignedPatterns.size()]));
        const int typed[][8] = {
            {kSpecials, kUniform, kSixteenValues, kReversed, kTopByteOnly, kBottomByteOnly, -1},
            {kSpecials, kUniformFloats, kUniform, kTwoValues, kSorted, kReversed, kTopByteOnly,
             kBottomByteOnly}};
        for (int t = 0; t < 2; ++t) {
            const int type = t == 0 ? kKeySigned : kKeyFloat;
            cases.push_back(keys_case(33, kSpecials, type));
            for (int j = 0; j < 8 && typed[t][j] >= 0; ++j)
                cases.push_back(keys_case(3000 + 1000 * j, typed[t][j], type));
        }
        cases.push_back(keys_case(2 * 65536 + 5, kSpecials, kKeyFloat));  // emulated: values only
        cases.push_back(keys_case(kMi + 4099, kSpecials, kKeyFloat));
        cases.push_back(keys_case(kMi + 4099, kUniform, kKeySigned));
        cases.push_back(keys_case(u64{1} << 24, kSixteenValues).repeated(3, true));
        cases.push_back(keys_case(u64{1} << 24, kSpecials, kKeyFloat));
        cases.push_back(keys_case(kTimedSize, kUniform));
        return cases;
    }
    static std::vector<Case> timed() {
        return {keys_case(kTimedSize, kUniform).timed_as("uniform")};
    }
    RadixSortPairs(const Case& c, const Setup& s)
        : SortProblem(c, s, false),
          values_in_(*this, "values_in", n(), Positions{}),
          values_out_(*this, "values_out", n()),
          keys_alt_(*this, "keys_alt", n() * sizeof(u32)),
          values_alt_(*this, "values_alt", n() * sizeof(u32)),
          ws_(*this, "the workspace", sort_workspace_bytes(n())) {
        keys_alt_.on_overrun(kAltAdvice);
        values_alt_.on_overrun(
            "values_alt holds n values: a value was written past values_alt[n - 1] (its key's "
            "position is too large).");
        values_out_.on_overrun(
            "values_out holds n values: a value was written past values_out[n - 1].");
        ws_.on_overrun(kWorkspaceAdvice);
    }
    cudaError_t call(void* fn, Side side) override {
        return entry<decltype(&radix_sort_pairs)>(fn)(
            keys_in_, values_in_, keys_out_.at(side), values_out_.at(side), n(), key_type(),
            static_cast<u32*>(keys_alt_.at(side)), static_cast<u32*>(values_alt_.at(side)),
            ws_.at(side), ws_.bytes(), stream());
    }
    Outcome judge() override {
        Part keys = keys_part();
        Part values{"values_out",
                    compare(values_out_.get(), n(), EqualArray<u32>{want_.from.get()}, stream()),
                    "bit-exact: the values are the keys' positions in keys_in, and a stable sort "
                    "puts exactly one of them in each place",
                    "value"};
        const bool keys_right = keys.cmp.wrong == 0;
        const Comparison keys_cmp = keys.cmp, values_cmp = values.cmp;
        Outcome o = judge_parts({keys, values});
        if (o.pass()) return o;
        if (!keys_right) {
            diagnose_keys(o, keys_cmp);
            return o;
        }
        if (values_cmp.unwritten) return o;
        dev::Array<unsigned long long> f(2);
        dev::fill_bytes(f.get(), 0, 2 * sizeof(unsigned long long), stream());
        count_value_faults<<<grid_for(n()), 256, 0, stream()>>>(keys_in_.get(), keys_out_.get(),
                                                                values_out_.get(), n(), f.get());
        DEV_CHECK(cudaGetLastError());
        dev::sync_stream(stream());
        unsigned long long faults[2];
        dev::copy_to_host(faults, f.get(), sizeof faults);
        if (faults[0] == 0 && faults[1] > 0) {
            o.reason = "values: the sort is not stable";
            o.explain("Every value came with its key, but " + std::to_string(faults[1]) +
                      " equal keys are out of their input order (their values, the input "
                      "positions, decrease): every pass must keep keys with the same digit in "
                      "the order it found them.");
        } else if (faults[0] > 0) {
            o.explain(std::to_string(faults[0]) +
                      " values did not come with their keys: a value must move to the same "
                      "place as its key, in every pass.");
        }
        return o;
    }
    Traffic traffic() const override {
        return Traffic().read<u32>(2.0 * n()).write<u32>(2.0 * n());
    }

  private:
    Input<u32> values_in_;
    Output<u32> values_out_;
    Workspace keys_alt_, values_alt_, ws_;
};
CUDALINGS_PROBLEM(RadixSortPairs);

}  // namespace
