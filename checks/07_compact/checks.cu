// Checks of lesson 07 (stream compaction): two problems, one contract each.
//   compact            steps 1, 2, 4  stable: the kept elements in input order
//   compact_unordered  step 3         the same elements, in any order
//
// A compaction moves bits, so everything is exact. The kept elements are compared bit for bit
// with the checker's own stable compaction (three CUB-free kernels: counts per chunk, a scan of
// the counts, an ordered scatter per chunk; the emulator runs them too), *count exactly, and
// out[*count .. n) must still hold the poison. kit::judge_compacted tells "right elements,
// wrong order" ("order: the compaction is not stable") from wrong elements, and accepts any
// order for compact_unordered.
//
// Inputs are high-entropy floats (24 random bits each), so a reordering shows at almost every
// position. The keep patterns, on sizes around every tile and chunk boundary the steps use
// (256, 1024, 4096, 8192 elements; 3·1024 + 1 and 8192·3 + 1), at the sizes the emulator runs
// and larger:
//   about half kept (x > 0) and about a tenth (x > 0.8), every element kept, none, every other
//   one, only the first, only the last, runs of 1000 and of 5000 (whole tiles empty or full),
//   values equal to the threshold with their neighbours (±0 at threshold 0: catches >=), and
//   NaNs (a third of the inputs: catches !(x <= t)).
// When the count is off by exactly the number of elements equal to the threshold, or of NaNs,
// the reason says so.
//
// Timing: two timed cases, about half kept and about a tenth (uniform inputs in [-1, 1),
// threshold 0 and 0.8), one staircase column each; the bytes are 4n read plus 4 per kept
// element written. Stress: the 2^24 case is called 10 times on one input, each call judged.
#include <cmath>
#include <cstring>
#include <string>

#include "compact.cuh"
#include "kit.h"

namespace {

using namespace kit;

constexpr u64 kMi = u64{1} << 20;
constexpr u64 k24 = u64{1} << 24;
constexpr u64 kStep4Tile = 8192;  // the reference's tile in step 4 (single pass)

// ---------------------------------------------------------------- inputs
enum Pattern : int { kPlain, kOnlyFirst, kOnlyLast, kRuns, kLongRuns, kTies, kNaNs };

constexpr float kSmallestNormal = 1.17549435e-38f;  // FLT_MIN

// Element i of a pattern. `x` (the case's distribution) gives every value its random bits.
struct Values {
    Dist dist;
    int pattern;
    u64 n;
    float threshold;
    __host__ __device__ float operator()(u64 base, u64 i) const {
        const float x = sample_float(dist, base, i);
        const float magnitude = 1.0f + 0.5f * fabsf(x);  // in [1, 1.5): far from any threshold
        const std::uint64_t h = element_hash(base ^ 0x7ac7u, i);
        switch (pattern) {
            case kOnlyFirst:
                return i == 0 ? threshold + magnitude : threshold - magnitude;
            case kOnlyLast:
                return i + 1 == n ? threshold + magnitude : threshold - magnitude;
            case kRuns:      // 1000 kept, 1000 not, ...: tiles partly full
            case kLongRuns:  // 5000 kept, 5000 not, ...: whole tiles of 1024 and 4096, and whole
                             // warps' parts of step 4's tiles of 8192, full or empty
                return (i / (pattern == kRuns ? 1000 : 5000)) % 2 == 0 ? threshold + magnitude
                                                                       : threshold - magnitude;
            case kTies:  // half the values at the threshold or next to it, the others random
                switch (h % 8) {
                    case 0:
                        return threshold;
                    case 1:
                        return threshold == 0.0f ? -0.0f : threshold;
                    case 2:  // the smallest normal float above (at 0: no denormal, which a
                             // flush-to-zero comparison would treat as 0)
                        return threshold == 0.0f ? kSmallestNormal
                                                 : nextafterf(threshold, INFINITY);
                    case 3:
                        return threshold == 0.0f ? -kSmallestNormal
                                                 : nextafterf(threshold, -INFINITY);
                    default:
                        return x;
                }
            case kNaNs: {  // quiet NaNs of both signs and many payloads, never the poison
                if (h % 3 != 0) return x;
                const std::uint32_t bits = 0x7fc00000u | ((h >> 8) & 0x3fff00u) |
                                           static_cast<std::uint32_t>(h >> 63) << 31;
                float nan;
                memcpy(&nan, &bits, 4);
                return nan;
            }
            default:
                return x;
        }
    }
};

// ---------------------------------------------------------------- the checker's compaction
constexpr unsigned kChunk = 4096;  // elements per block of the reference
constexpr unsigned kBlock = 256;

__device__ inline bool kept(float x, float t) { return x > t; }

// counts[c] = kept elements of chunk c.
__global__ void chunk_counts(const float* in, u64 n, float t, unsigned* counts) {
    __shared__ unsigned total;
    if (threadIdx.x == 0) total = 0;
    __syncthreads();
    const u64 begin = u64{blockIdx.x} * kChunk, end = begin + kChunk < n ? begin + kChunk : n;
    unsigned mine = 0;
    for (u64 i = begin + threadIdx.x; i < end; i += blockDim.x) mine += kept(in[i], t) ? 1u : 0u;
    atomicAdd(&total, mine);
    __syncthreads();
    if (threadIdx.x == 0) counts[blockIdx.x] = total;
}

// counts[c] becomes the number kept before chunk c; *total the number kept. One block: each
// thread adds up a run of consecutive chunks, the runs' sums are scanned in shared memory.
__global__ void scan_counts(unsigned* counts, unsigned chunks, unsigned* total) {
    __shared__ unsigned sums[kBlock];
    const unsigned per = (chunks + kBlock - 1) / kBlock;
    const unsigned first = threadIdx.x * per;
    unsigned mine = 0;
    for (unsigned c = first; c < first + per && c < chunks; ++c) mine += counts[c];
    sums[threadIdx.x] = mine;
    __syncthreads();
    for (unsigned d = 1; d < kBlock; d *= 2) {  // inclusive scan (Hillis-Steele)
        const unsigned below = threadIdx.x >= d ? sums[threadIdx.x - d] : 0u;
        __syncthreads();
        sums[threadIdx.x] += below;
        __syncthreads();
    }
    unsigned before = sums[threadIdx.x] - mine;
    for (unsigned c = first; c < first + per && c < chunks; ++c) {
        const unsigned k = counts[c];
        counts[c] = before;
        before += k;
    }
    if (threadIdx.x == kBlock - 1) *total = sums[kBlock - 1];
}

// Chunk c's kept elements to out[offsets[c] ..), in input order: rounds of 256 elements, each
// element's rank from a scan of the round's flags, a carry across rounds.
__global__ void scatter_kept(const float* in, u64 n, float t, const unsigned* offsets, float* out) {
    __shared__ unsigned ranks[kBlock];
    const u64 begin = u64{blockIdx.x} * kChunk, end = begin + kChunk < n ? begin + kChunk : n;
    unsigned carry = offsets[blockIdx.x];
    for (u64 round = begin; round < end; round += kBlock) {
        const u64 i = round + threadIdx.x;
        const float x = i < end ? in[i] : 0.0f;
        const unsigned flag = i < end && kept(x, t) ? 1u : 0u;
        ranks[threadIdx.x] = flag;
        __syncthreads();
        for (unsigned d = 1; d < kBlock; d *= 2) {
            const unsigned below = threadIdx.x >= d ? ranks[threadIdx.x - d] : 0u;
            __syncthreads();
            ranks[threadIdx.x] += below;
            __syncthreads();
        }
        if (flag) out[carry + ranks[threadIdx.x] - 1] = x;
        carry += ranks[kBlock - 1];
        __syncthreads();  // every thread has read ranks before the next round writes them
    }
}

// How many elements equal the threshold, and how many are NaN: [0] and [1].
__global__ void count_special(const float* in, u64 n, float t, unsigned long long* out) {
    unsigned long long equal = 0, nans = 0;
    for (u64 i = blockIdx.x * u64{blockDim.x} + threadIdx.x; i < n;
         i += u64{gridDim.x} * blockDim.x) {
        equal += in[i] == t;
        nans += isnan(in[i]);
    }
    if (equal) atomicAdd(&out[0], equal);
    if (nans) atomicAdd(&out[1], nans);
}

// ---------------------------------------------------------------- the problems
const char* const kWorkspaceAdvice =
    "The workspace holds compact_workspace_bytes(n) bytes: n unsigned ints, then n / 16 "
    "bytes and 1 MiB.";

template <bool kOrdered>
class Compaction : public Problem {
  public:
    static std::vector<Case> timed() {
        return {plain(kTimedSize, dist::uniform, 0.0f).timed_as("p = 0.5"),
                plain(kTimedSize, dist::uniform, 0.8f).timed_as("p = 0.1")};
    }
    // The TIMEOUT advice by what the emulator saw (as lesson 05's): on a GPU, the three causes.
    static Advice advice() {
        return {
            {"TIMEOUT",
             "A look-back that never ends: (1) the status words are polled through a plain "
             "pointer, so the compiler loads them once (use volatile); (2) they were not "
             "cleared before the launch (they hold garbage at every call); (3) tile numbers "
             "come from blockIdx.x, so a block may wait for a block that has not started: "
             "take them from an atomic counter."},
            {"TIMEOUT/blocks that had not started",
             "A block waits for a block that has not started, which on a GPU may never start "
             "while it waits: take tile numbers from an atomic counter (atomicAdd by thread 0), "
             "never from blockIdx.x, so that a tile only waits for tiles already running."},
            {"TIMEOUT/without touching memory",
             "A thread polls a value it never reads again: a plain load in a wait loop may be "
             "kept in a register. Poll the status words through a volatile pointer."},
            {"TIMEOUT/every block had started",
             "Every block had started, and each waits for a status word no block will write "
             "(the report names the words and the line): a look-back that reads a tile that "
             "does not exist (below tile 0) waits for ever, and so does one whose status words "
             "or counter were not cleared before the launch (clear them at every call)."}};
    }
    Compaction(const Case& c, const Setup& s)
        : Problem(c, s),
          in_(*this, "in", n(),
              Values{c.dist, static_cast<int>(c.params.number_or("pattern", kPlain)), c.n(),
                     threshold()}),
          out_(*this, "out", n()),
          count_(*this, "count", 1),
          ws_(*this, "the workspace", compact_workspace_bytes(n())),
          want_(n()),
          offsets_(chunks() + 1),
          want_count_(1) {
        out_.on_overrun("out holds n elements: a kept element is never written past out[n - 1].");
        count_.on_overrun("count is one unsigned int: only count[0] may be written.");
        ws_.on_overrun(kWorkspaceAdvice);
    }
    void expect() override {
        const u64 c = chunks();
        if (c) {
            chunk_counts<<<static_cast<unsigned>(c), kBlock, 0, stream()>>>(
                in_.get(), n(), threshold(), offsets_.get());
            DEV_CHECK(cudaGetLastError());
        }
        scan_counts<<<1, kBlock, 0, stream()>>>(offsets_.get(), static_cast<unsigned>(c),
                                                want_count_.get());
        DEV_CHECK(cudaGetLastError());
        if (c) {
            scatter_kept<<<static_cast<unsigned>(c), kBlock, 0, stream()>>>(
                in_.get(), n(), threshold(), offsets_.get(), want_.get());
            DEV_CHECK(cudaGetLastError());
        }
        dev::sync_stream(stream());
        unsigned total = 0;
        dev::copy_to_host(&total, want_count_.get(), sizeof total);
        kept_ = total;
    }
    cudaError_t call(void* fn, Side side) override {
        using Entry = decltype(&compact);  // compact_unordered has the same signature
        return entry<Entry>(fn)(in_, out_.at(side), count_.at(side), n(), threshold(), ws_.at(side),
                                ws_.bytes(), stream());
    }
    Outcome judge() override {
        Outcome o =
            judge_compacted(out_.get(), count_.get(), want_.get(), kept_, n(), kOrdered, stream());
        if (o.pass() || o.reason != "count") return o;
        // A count off by exactly the elements at the threshold, or the NaNs: say which.
        std::uint32_t got = 0;
        dev::copy_to_host(&got, count_.get(), sizeof got);
        dev::Array<unsigned long long> special(2);
        dev::fill_bytes(special.get(), 0, 2 * sizeof(unsigned long long), stream());
        count_special<<<grid_for(n()), 256, 0, stream()>>>(in_.get(), n(), threshold(),
                                                           special.get());
        DEV_CHECK(cudaGetLastError());
        dev::sync_stream(stream());
        unsigned long long equal_nan[2];
        dev::copy_to_host(equal_nan, special.get(), sizeof equal_nan);
        const u64 extra = got > kept_ ? got - kept_ : 0;
        const std::string t = format_number(threshold());
        if (extra && extra == equal_nan[0]) {
            o.reason = "count: the elements equal to the threshold were kept";
            o.detail += " Exactly the " + std::to_string(extra) + " elements equal to " + t +
                        (threshold() == 0.0f ? " (0.0 and -0.0)" : "") +
                        " are too many: an element is kept when in[i] > threshold, strictly "
                        "(>= keeps the ties).";
        } else if (extra && extra == equal_nan[1]) {
            o.reason = "count: the NaNs were kept";
            o.detail += " Exactly the " + std::to_string(extra) +
                        " NaNs are too many: every comparison with NaN is false, so in[i] > "
                        "threshold never keeps one, but !(in[i] <= threshold) keeps them all.";
        }
        return o;
    }
    // Read every element, write the kept ones and the count.
    Traffic traffic() const override {
        return Traffic().read<float>(n()).write<float>(kept_).write<unsigned>(1);
    }

  protected:
    static Case plain(u64 n, Dist d, float threshold) {
        return Case::of(n, d).with("threshold", threshold, "keep x > " + format_number(threshold));
    }
    static Case pattern(u64 n, int p, float threshold, const std::string& text) {
        return plain(n, dist::uniform, threshold).with("pattern", p, text);
    }
    // Sizes around the steps' tiles and chunks: 256 (a warp's 32 float4 ... a block), 1024 (a
    // block of float4), 4096 (the checker's chunk), 8192 (step 4's tile), 3·1024 + 1 and
    // 8192·3 + 1 (a partial last one), with every keep pattern at the sizes the emulator runs,
    // then larger ones.
    static std::vector<Case> table() {
        const u64 sizes[] = {0,    1,    31,           32,    33,       255,          256,
                             257,  1000, 1023,         1024,  1025,     3 * 1024 + 1, 4095,
                             4096, 4097, 8192 * 3 + 1, 65536, 65536 + 3};
        std::vector<Case> cases;
        int k = 0;
        for (u64 n : sizes) cases.push_back(by_index(n, k++));
        // Step 4's tile of 8192: one element short of one tile, exactly one, one and one more
        // element (a last tile of a single element), each with everything kept (every warp's
        // staging full) and with about half.
        for (u64 n : {kStep4Tile - 1, kStep4Tile, kStep4Tile + 1}) {
            cases.push_back(plain(n, dist::uniform, -2.0f));
            cases.push_back(plain(n, dist::uniform, 0.0f));
        }
        // Every pattern again at a size with several tiles of every step.
        for (int p = 0; p < kPatterns; ++p) cases.push_back(by_index(20000 + 1000 * p, p));
        // Larger: many blocks race (an unstable order shows), look-back over many tiles.
        cases.push_back(plain(kMi + 3, dist::uniform, 0.0f));
        cases.push_back(pattern(kMi + 3, kLongRuns, 0.0f, "runs of 5000 kept / not kept"));
        cases.push_back(pattern(kMi + 3, kNaNs, 0.0f, "a third NaN"));
        cases.push_back(plain(k24, dist::uniform, 0.0f).repeated(10, false));
        cases.push_back(plain(k24, dist::uniform, -2.0f));  // all kept
        cases.push_back(plain(kTimedSize, dist::uniform, 0.8f));
        return cases;
    }

  private:
    static constexpr int kPatterns = 12;
    // Keep pattern number k (cycled) at size n.
    static Case by_index(u64 n, int k) {
        switch (k % kPatterns) {
            case 0:
                return plain(n, dist::uniform, 0.0f);  // about half
            case 1:
                return plain(n, dist::uniform, 0.8f);  // about a tenth
            case 2:
                return plain(n, dist::uniform, -2.0f);  // all kept
            case 3:
                return pattern(n, kTies, 0.0f, "a quarter ±0, a quarter ±FLT_MIN");
            case 4:
                return plain(n, dist::alternating, 0.0f);  // every other one
            case 5:
                return pattern(n, kOnlyLast, 0.0f, "only the last kept");
            case 6:
                return pattern(n, kNaNs, 0.0f, "a third NaN");
            case 7:
                return pattern(n, kRuns, 0.0f, "runs of 1000 kept / not kept");
            case 8:
                return plain(n, dist::uniform, 2.0f);  // none kept
            case 9:
                return pattern(n, kOnlyFirst, 0.0f, "only the first kept");
            case 10:
                return pattern(n, kTies, 0.5f, "a quarter equal to 0.5, a quarter next to it");
            default:
                return pattern(n, kLongRuns, 0.0f, "runs of 5000 kept / not kept");
        }
    }
    float threshold() const { return params().f32("threshold"); }
    u64 chunks() const { return (n() + kChunk - 1) / kChunk; }
    Input<float> in_;
    Output<float> out_;
    Output<unsigned> count_;
    Workspace ws_;
    dev::Array<float> want_;
    dev::Array<unsigned> offsets_, want_count_;
    u64 kept_ = 0;
};

struct Compact : Compaction<true> {
    static constexpr const char* kName = "compact";
    static constexpr const char* kSymbol = "compact";
    static std::vector<Case> cases() { return table(); }
    using Compaction::Compaction;
};
CUDALINGS_PROBLEM(Compact);

struct CompactUnordered : Compaction<false> {
    static constexpr const char* kName = "compact_unordered";
    static constexpr const char* kSymbol = "compact_unordered";
    static std::vector<Case> cases() { return table(); }
    using Compaction::Compaction;
};
CUDALINGS_PROBLEM(CompactUnordered);

}  // namespace
