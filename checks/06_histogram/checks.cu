// Checks of lesson 06 (histogram): three problems.
//   histogram            steps 1-4  bins[b] = how many keys equal b, num_bins up to 4096
//   histogram_rle        step 5     the same, weighted: run-length words key | count << 16
//   histogram_many_bins  step 6     histogram's entry point with up to 65536 bins
//
// Counts are integers, so the comparison is exact (u32): no order of atomics changes them. The
// expected bins come from the checker's own privatized kernel (key-range slices of 8192
// counters in shared memory, so any num_bins fits), computed after every regeneration of the
// keys; a kernel of global atomics would take a fifth of a second per refresh on all-same keys
// at 2^28.
//
// Keys are drawn from every distribution that breaks a shortcut (uniform, all-same: sometimes
// bin 0, sometimes the last bin; a hot spot of 50% and 90%; Zipf; sequential i % bins; sorted
// runs; multiples of 32; only the last 8 bins), with bin counts that are not a multiple of a
// block (1, 2, 7, 255, 257, 1000), one more than a block (257), and more than a static array of
// 256 holds (1000, 4096); step 6 adds counts past what one copy in shared memory holds (12289,
// 16384, 16385, 40000, 65536). Every distribution appears at the small sizes the emulator runs.
//
// Timing: one timed case per distribution (uniform, all-same, hot spot 50%, Zipf) at 256 bins
// (step 6: 65536 bins), so the staircase shows one column each: contention is the spread
// between the columns. Steps 1 and 2 are timed at 2^24 (lesson.json), the others at 2^28.
//
// Diagnoses, on top of the usual "unwritten" and mismatch listing:
//   - every wrong bin holds the poison plus its right count: the bins were never zeroed;
//   - every bin below a block size (256, 512, ...) right, wrong from there on: a zeroing or
//     merge loop `if (threadIdx.x < num_bins)` that covers only blockDim.x bins;
//   - the bins add up to more or less than n (or than the words' counts): keys lost or counted
//     twice (step 5: a run left in a lane's registers never flushed, or a copy of the bins
//     never merged).
#include <algorithm>
#include <string>

#include "histogram.cuh"
#include "kit.h"

namespace {

using namespace kit;

constexpr u64 k24 = u64{1} << 24;
constexpr u64 kMi = u64{1} << 20;
constexpr u32 kRefSlice = 8192;  // the checker's counters per block: 32 KiB of shared memory

const char* const kExact =
    "exact: counts are integers, and integer atomics give the same counts in any order";

// ---------------------------------------------------------------- the checker's histogram
// How a word of the input becomes a key and a weight.
struct PlainKey {
    __host__ __device__ u32 key(u32 word) const { return word; }
    __host__ __device__ u32 weight(u32) const { return 1; }
};
struct RunLengthKey {
    __host__ __device__ u32 key(u32 word) const { return rle_key(word); }
    __host__ __device__ u32 weight(u32 word) const { return rle_count(word); }
};

// Block (group, slice) counts the words of its group's share whose key falls in the slice's
// range [lo, lo + kRefSlice), in shared memory, then adds its counters into `out` (zeroed).
template <typename Decode>
__global__ void reference_kernel(const u32* words, u64 n, u32 bins, u32 slices, Decode decode,
                                 u32* out) {
    __shared__ u32 counts[kRefSlice];
    const u32 slice = blockIdx.x % slices, group = blockIdx.x / slices;
    const u32 groups = gridDim.x / slices;
    const u32 lo = slice * kRefSlice;
    const u32 width = bins - lo < kRefSlice ? bins - lo : kRefSlice;
    for (u32 b = threadIdx.x; b < width; b += blockDim.x) counts[b] = 0;
    __syncthreads();
    for (u64 i = u64{group} * blockDim.x + threadIdx.x; i < n; i += u64{groups} * blockDim.x) {
        const u32 word = words[i];
        const u32 r = decode.key(word) - lo;  // wraps for keys below lo
        if (r < width) atomicAdd(&counts[r], decode.weight(word));
    }
    __syncthreads();
    for (u32 b = threadIdx.x; b < width; b += blockDim.x)
        if (counts[b]) atomicAdd(&out[lo + b], counts[b]);
}

template <typename Decode>
void reference_histogram(const u32* words, u64 n, u32 bins, Decode decode, u32* out,
                         cudaStream_t s) {
    dev::fill_bytes(out, 0, bins * sizeof(u32), s);
    const u32 slices = (bins + kRefSlice - 1) / kRefSlice;
    // Enough groups to fill a GPU at 2^28 keys; few where there are few keys (the emulator).
    const u64 wanted = (n + 4095) / 4096;
    const u32 groups = static_cast<u32>(std::max<u64>(1, std::min<u64>(wanted, 1024 / slices)));
    reference_kernel<<<groups * slices, 256, 0, s>>>(words, n, bins, slices, decode, out);
    DEV_CHECK(cudaGetLastError());
}

// ---------------------------------------------------------------- what went wrong
// Sums of the bins and the poison test, over all bins (one pass, few bins: at most 65536).
struct BinTally {
    unsigned long long got_sum, want_sum;  // with the poison counted as its value
    unsigned long long poisoned;           // bins holding the poison + their right count
    unsigned long long poisoned_counted;   // ... of which the right count is not 0
    unsigned long long first_poisoned, last_poisoned;
    unsigned long long counted_between;  // bins in [lo, hi) with a count or a write
    unsigned long long counted_below;    // bins below lo with a count
};

__global__ void tally_kernel(const u32* got, const u32* want, u32 bins, u32 lo, u32 hi,
                             BinTally* t) {
    for (u32 b = blockIdx.x * blockDim.x + threadIdx.x; b < bins; b += gridDim.x * blockDim.x) {
        const u32 g = got[b], w = want[b];
        atomicAdd(&t->got_sum, static_cast<unsigned long long>(g));
        atomicAdd(&t->want_sum, static_cast<unsigned long long>(w));
        if (g - w == kPoisonBits) {  // u32 arithmetic: the poison plus the count, wrapped
            atomicAdd(&t->poisoned, 1ull);
            if (w) atomicAdd(&t->poisoned_counted, 1ull);
            atomicMin(&t->first_poisoned, static_cast<unsigned long long>(b));
            atomicMax(&t->last_poisoned, static_cast<unsigned long long>(b));
        }
        if (b >= lo && b < hi && (g || w)) atomicAdd(&t->counted_between, 1ull);
        if (b < lo && w) atomicAdd(&t->counted_below, 1ull);
    }
}

BinTally tally(const u32* got, const u32* want, u32 bins, u32 lo, u32 hi, cudaStream_t s) {
    dev::Array<BinTally> t(1);
    const BinTally init{0, 0, 0, 0, ~0ull, 0, 0, 0};
    DEV_CHECK(cudaMemcpyAsync(t.get(), &init, sizeof init, cudaMemcpyHostToDevice, s));
    tally_kernel<<<grid_for(bins), 256, 0, s>>>(got, want, bins, lo, hi, t.get());
    DEV_CHECK(cudaGetLastError());
    dev::sync_stream(s);
    BinTally out;
    dev::copy_to_host(&out, t.get(), sizeof out);
    return out;
}

std::string count_text(u64 v) { return std::to_string(v); }

// The judge of every problem: exact bins, then the most likely reason when they are wrong.
// `weighted`: the bins add up the words' counts (step 5), not one per key.
Outcome judge_bins(const u32* got, const u32* want, u32 bins, bool weighted, cudaStream_t s) {
    const Comparison cmp = compare(got, bins, EqualArray<u32>{want}, s);
    Outcome o = judge_values(cmp, kExact, "bins");
    // Right, or nothing but the poison where it is wrong ("unwritten output"): said already.
    if (o.pass() || cmp.unwritten == cmp.wrong) return o;
    // The largest power of two (at least 32) at or below the first wrong bin: a block size.
    u32 block = 0;
    for (u32 b = 32; b <= cmp.first && b != 0; b *= 2) block = b;
    const BinTally t = tally(got, want, bins, block, static_cast<u32>(cmp.first), s);
    const std::string total = weighted ? "the words' counts add up to" : "there are";
    if (t.poisoned == cmp.wrong && t.poisoned_counted > 0) {
        const bool all = t.poisoned == bins;
        o.reason = all ? "bins not zeroed: every bin holds the poison plus its count"
                       : "bins " + count_text(t.first_poisoned) + " to " +
                             count_text(t.last_poisoned) + " not zeroed";
        o.detail =
            (all ? std::string("Every bin holds 0x7fdeadbf")
                 : count_text(t.poisoned) + " bins (from " + count_text(t.first_poisoned) + " to " +
                       count_text(t.last_poisoned) + ") hold 0x7fdeadbf") +
            " (the poison the checker writes into the bins before every call) plus exactly its "
            "right count: the counts were added into bins that were never zeroed. Zero them on "
            "the stream before anything adds into them: cudaMemsetAsync(bins, 0, num_bins * "
            "sizeof(unsigned int), stream)" +
            (all ? std::string(".") : std::string(" (num_bins * sizeof(unsigned int) bytes)."));
        return o;
    }
    // Bins below `block` that count something are all right, the first bin from `block` on that
    // counts something (or was written) is wrong.
    if (block != 0 && bins > block && t.counted_between == 0 && t.counted_below > 0) {
        o.reason = "bins >= " + std::to_string(block) +
                   " wrong: the zeroing or merge loop covers only blockDim.x bins";
        o.detail =
            "Every bin below " + std::to_string(block) + " is right, and " + count_text(cmp.wrong) +
            " of the " + std::to_string(bins - block) + " bins from " + std::to_string(block) +
            " on are wrong, from the first that counts anything (bin " + count_text(cmp.first) +
            "). A loop `if (threadIdx.x < num_bins)` zeroes or merges only blockDim.x "
            "counters; num_bins may be more (257, 1000, 4096): loop with a block stride, "
            "for (b = threadIdx.x; b < num_bins; b += blockDim.x).";
        return o;
    }
    if (cmp.unwritten == 0 && t.got_sum != t.want_sum) {
        const bool lost = t.got_sum < t.want_sum;
        const u64 off = lost ? t.want_sum - t.got_sum : t.got_sum - t.want_sum;
        o.reason = lost ? (weighted ? "bins: counts lost (a run left in a lane's registers never "
                                      "flushed, or a copy of the bins never merged?)"
                                    : "bins: keys lost")
                        : (weighted ? "bins: counts added twice" : "bins: keys counted twice");
        o.detail = "The bins add up to " + count_text(t.got_sum) + ", but " + total + " " +
                   count_text(t.want_sum) + ": " + count_text(off) +
                   (lost ? " missing" : " too many") + ". " +
                   (lost ? (weighted ? "The run still held in a lane's registers when its loop "
                                       "ends must be flushed too (one atomicAdd after the "
                                       "loop), and the merge must add up every copy of a bin "
                                       "(step 5 keeps up to 8 per block, striped across the "
                                       "lanes); otherwise: words never read (the tail past "
                                       "the last uint4?), or updates lost to a plain += or a "
                                       "race."
                                     : "Keys never read (the tail past the last uint4? the "
                                       "last partial block?), a counter zeroed after another "
                                       "warp counted into it (a missing __syncthreads()), or "
                                       "updates lost to a plain += instead of an atomicAdd.")
                         : "Some keys are counted twice: do two threads, two blocks or two "
                           "loops read the same keys, or is a block's copy merged twice?");
        return o;
    }
    if (cmp.unwritten == 0)
        o.detail +=
            " The bins add up to the right total, so no key was lost: keys went to the "
            "wrong bins (an index computed from something other than the key?).";
    return o;
}

// ---------------------------------------------------------------- case tables
Case bins_case(u64 n, Dist d, u32 bins) {
    return Case::of(n, d).with("bins", bins, std::to_string(bins) + " bins");
}

// The four timed distributions, one column each.
std::vector<Case> timed_at(u32 bins) {
    return {bins_case(kTimedSize, dist::keys, bins).timed_as("uniform"),
            bins_case(kTimedSize, dist::keys_all_same, bins).timed_as("all-same"),
            bins_case(kTimedSize, dist::hot_spot(0.5f), bins).timed_as("hot spot"),
            bins_case(kTimedSize, dist::zipf(), bins).timed_as("Zipf")};
}

const Dist kHot50 = dist::hot_spot(0.5f), kHot90 = dist::hot_spot(0.9f), kZipf = dist::zipf();

// Steps 1-5: the standard sizes at 256 bins through every distribution, then every bin count
// (1 to 4096) on the distributions that break it, at sizes the emulator runs, then larger.
std::vector<Case> shared_bins_cases() {
    const std::vector<Dist> all{dist::keys,
                                dist::keys_all_same,
                                kHot50,
                                kZipf,
                                dist::keys_runs,
                                dist::keys_sequential,
                                dist::keys_bank_stride,
                                dist::keys_last_bins,
                                kHot90};
    std::vector<Case> cases;
    for (Case c : ladder(all)) cases.push_back(c.with("bins", 256, "256 bins"));
    // clang-format off
    const struct { u64 n; Dist d; u32 bins; } rows[] = {
        {1, dist::keys, 1},                     {1000, dist::keys, 1},
        {33, dist::keys_all_same, 2},           {1000, dist::keys, 2},
        {257, kZipf, 7},                        {1000, dist::keys_sequential, 7},
        {1000, dist::keys_bank_stride, 32},     {4099, kHot90, 32},
        {1000, dist::keys, 255},                {4097, dist::keys_runs, 255},
        {257, dist::keys_last_bins, 257},       {20000, dist::keys, 257},
        {20000, dist::keys_sequential, 257},    {4097, dist::keys_all_same, 257},
        {1000, dist::keys_last_bins, 1000},     {20000, dist::keys, 1000},
        {20000, kZipf, 1000},                   {65536, dist::keys_runs, 1000},
        {1, dist::keys_all_same, 4096},         {4096, dist::keys_last_bins, 4096},
        {20000, dist::keys, 4096},              {12000, dist::keys_bank_stride, 4096},
        {9000, kHot50, 4096},                   {16384, dist::keys_sequential, 4096},
        // larger: every bin of 4096 counted many times over
        {kMi + 3, dist::keys, 4096},            {kMi + 3, dist::keys_last_bins, 1000},
        {k24, kZipf, 4096},                     {k24, dist::keys_all_same, 257}};
    // clang-format on
    for (const auto& r : rows) cases.push_back(bins_case(r.n, r.d, r.bins));
    return cases;
}

// ---------------------------------------------------------------- steps 1-4 and 6
class Histogram : public Problem {
  public:
    static constexpr const char* kName = "histogram";
    static constexpr const char* kSymbol = "histogram";
    static std::vector<Case> cases() { return shared_bins_cases(); }
    static std::vector<Case> timed() { return timed_at(256); }
    static Advice advice() {
        return {{"CRASH",
                 "A static __shared__ array smaller than num_bins counters (256, say) overflows "
                 "when the checker asks for 1000 or 4096 bins: size the copy from num_bins "
                 "(dynamic shared memory, the launch's third parameter). More than 48 KiB of "
                 "dynamic shared memory needs cudaFuncSetAttribute(kernel, "
                 "cudaFuncAttributeMaxDynamicSharedMemorySize, bytes) before the launch."},
                {"TIMEOUT",
                 "__match_any_sync waits for every lane of its mask: a lane that has left the "
                 "loop (i >= n) never arrives. Keep the loop warp-uniform and let lanes past n "
                 "take part with a key that is not a bin."}};
    }
    Histogram(const Case& c, const Setup& s)
        : Problem(c, s),
          keys_(*this, "keys", n(), c.dist, bins()),
          bins_(*this, "bins", bins()),
          want_(bins()) {
        bins_.on_overrun(
            "bins holds num_bins counters: an index past them is not a key (every key is "
            "below num_bins). A loop over bins that runs to a multiple of the block size?");
    }
    void expect() override {
        reference_histogram(keys_.get(), n(), bins(), PlainKey{}, want_.get(), stream());
    }
    cudaError_t call(void* fn, Side side) override {
        return entry<decltype(&histogram)>(fn)(keys_, bins_.at(side), n(), bins(), stream());
    }
    Outcome judge() override {
        return judge_bins(bins_.get(), want_.get(), bins(), false, stream());
    }
    Traffic traffic() const override { return Traffic().read<u32>(n()).write<u32>(bins()); }

  protected:
    u32 bins() const { return static_cast<u32>(params().integer("bins")); }
    Input<u32> keys_;
    Output<u32> bins_;
    dev::Array<u32> want_;
};
CUDALINGS_PROBLEM(Histogram);

// Step 6: the same entry point, up to kMaxBins: bin counts past what one copy of the bins in
// shared memory holds (12288 counters are 48 KiB), around the 16384-counter slices of the
// lesson's solution (16384, 16385), a count no slice width divides (40000), and the maximum. Below
// 2^20 the cases with many bins have few keys: every block of a slice zeroes and merges all its
// counters, which is what the emulator's time goes into.
struct HistogramManyBins : Histogram {
    static constexpr const char* kName = "histogram_many_bins";
    static std::vector<Case> cases() {
        // clang-format off
        const struct { u64 n; Dist d; u32 bins; } rows[] = {
            {1, dist::keys, 1},                  {1000, dist::keys, 256},
            {4097, dist::keys_runs, 4096},       {20000, kZipf, 4097},
            {1000, dist::keys_last_bins, 10000}, {12000, dist::keys, 12288},
            {33, dist::keys_all_same, 12289},    {8000, dist::keys_sequential, 12289},
            {4096, dist::keys, 16384},           {4099, dist::keys_last_bins, 16385},
            {3000, dist::keys_bank_stride, 16385}, {257, dist::keys_all_same, 40000},
            {4000, kHot90, 40000},               {1, dist::keys_last_bins, 65536},
            {1000, dist::keys_last_bins, 65536}, {4100, dist::keys, 65536},
            {4000, dist::keys_runs, 65536},      {3000, kHot50, 65536},
            {4096, kZipf, 65536},                {2000, dist::keys_all_same, 65536},
            // larger (the first runs under the emulator at 2^16 + 3 keys)
            {kMi + 3, kZipf, 4097},              {kMi + 3, dist::keys, 65536},
            {kMi + 3, dist::keys_last_bins, 16385}, {k24, kZipf, 65536},
            {k24, dist::keys_all_same, 40000},   {kTimedSize, dist::keys, 65536},
            {kTimedSize, dist::keys_runs, 12289}};
        // clang-format on
        std::vector<Case> cases;
        for (const auto& r : rows) cases.push_back(bins_case(r.n, r.d, r.bins));
        return cases;
    }
    static std::vector<Case> timed() { return timed_at(kMaxBins); }
    using Histogram::Histogram;
};
CUDALINGS_PROBLEM(HistogramManyBins);

// ---------------------------------------------------------------- step 5: run-length words
// Word i: a key of the case's distribution and a count in [1, 15] ("counts" 0); or every count
// 1 ("counts" 1: the step must then equal a plain histogram); or every other key 0 ("counts"
// 2: on top of a hot spot, the key changes at nearly every word, so a lane's run ends at every
// word: the flush path).
struct RunLengthWords {
    Dist dist;
    u32 bins;
    u64 n;
    int counts;
    __host__ __device__ u32 operator()(u64 base, u64 i) const {
        const u32 key = counts == 2 && (i & 1) == 0 ? 0u : sample_key(dist, bins, base, i, n);
        const u32 count =
            counts == 1 ? 1u : 1u + static_cast<u32>((element_hash(base ^ 0xc0u, i) >> 24) % 15);
        return key | (count << 16);
    }
};

class HistogramRle : public Problem {
  public:
    static constexpr const char* kName = "histogram_rle";
    static constexpr const char* kSymbol = "histogram_rle";
    static std::vector<Case> cases() {
        std::vector<Case> cases;
        int k = 0;
        // Every case of steps 1-4, with counts 1..15; every third with all counts 1; the
        // hot-spot cases of 90% with every other key 0 (a run ends at nearly every word).
        for (Case c : shared_bins_cases()) {
            const bool alternate = c.dist == kHot90;
            const int counts = alternate ? 2 : (k++ % 3 == 2 ? 1 : 0);
            cases.push_back(with_counts(c, counts));
        }
        return cases;
    }
    static std::vector<Case> timed() {
        std::vector<Case> cases = timed_at(256);
        for (auto& c : cases) with_counts(c, 0);
        return cases;
    }
    HistogramRle(const Case& c, const Setup& s)
        : Problem(c, s),
          runs_(*this, "runs", n(),
                RunLengthWords{c.dist, bins(), n(), static_cast<int>(c.params.integer("counts"))}),
          bins_(*this, "bins", bins()),
          want_(bins()) {
        bins_.on_overrun(
            "bins holds num_bins counters: an index past them is not a key (every key is "
            "below num_bins). A loop over bins that runs to a multiple of the block size?");
    }
    void expect() override {
        reference_histogram(runs_.get(), n(), bins(), RunLengthKey{}, want_.get(), stream());
    }
    cudaError_t call(void* fn, Side side) override {
        return entry<decltype(&histogram_rle)>(fn)(runs_, bins_.at(side), n(), bins(), stream());
    }
    Outcome judge() override {
        return judge_bins(bins_.get(), want_.get(), bins(), true, stream());
    }
    Traffic traffic() const override { return Traffic().read<u32>(n()).write<u32>(bins()); }

  private:
    static Case& with_counts(Case& c, int counts) {
        const char* text[] = {"counts 1-15", "every count 1", "every other key 0, counts 1-15"};
        return c.with("counts", counts, text[counts]);
    }
    u32 bins() const { return static_cast<u32>(params().integer("bins")); }
    Input<u32> runs_;
    Output<u32> bins_;
    dev::Array<u32> want_;
};
CUDALINGS_PROBLEM(HistogramRle);

}  // namespace
