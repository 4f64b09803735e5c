// The lesson kit: judging an output. A compare runs on the device over every element: the
// expected value of element i comes from a generator — a device functor that reads the inputs
// (or precomputed arrays) and says what element i must be — so nothing of size n needs to be
// stored for it (a 2^28-element scan needs no 2 GiB of doubles). A compare counts the wrong
// elements, the unwritten ones (still the poison), the range they span, and lists the first few.
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "data.h"
#include "launch.h"

namespace kit {

// ---------------------------------------------------------------- what an element must be
struct Want {
    double value = 0;  // accepted when |got - value| <= bound (never a NaN)
    double bound = 0;
    std::uint32_t bits = 0;  // or, exact: accepted when got's bits are these
    bool exact_bits = false;

    __host__ __device__ static Want near(double v, double b) { return {v, b, 0, false}; }
    __host__ __device__ static Want exactly(std::uint32_t b) { return {0, 0, b, true}; }
    template <typename T>
    __host__ __device__ static Want exactly_as(T v) {
        return exactly(bits_of(v));
    }
    template <typename T>
    __host__ __device__ bool accepts(T got) const {
        if (exact_bits) return bits_of(got) == bits;
        const double g = static_cast<double>(got);
        return fabs(g - value) <= bound;  // false for NaN
    }
};

// A generator of wanted values element by element: `Want operator()(u64 i) const`. A generator
// whose values depend on the elements before (a prefix) walks runs instead: it has
//   static constexpr u64 kRun;           elements per run (each run walked by one thread)
//   struct State { ... };                what it carries along a run
//   State start(u64 first) const;        at the run's first element
//   Want next(State&, u64 i) const;      element i, in order
template <typename F>
struct PerElement {
    static constexpr u64 kRun = 1;
    struct State {};
    F f;
    __host__ __device__ State start(u64) const { return {}; }
    __host__ __device__ Want next(State&, u64 i) const { return f(i); }
};

template <typename G, typename = void>
struct walks_runs : std::false_type {};
template <typename G>
struct walks_runs<G, std::void_t<decltype(G::kRun)>> : std::true_type {};

template <typename G>
auto as_runs(const G& g) {
    if constexpr (walks_runs<G>::value)
        return g;
    else
        return PerElement<G>{g};
}

// ---------------------------------------------------------------- comparisons
struct Mismatch {
    u64 index = 0;
    std::string got, expected;
};

struct Comparison {
    u64 checked = 0;  // elements compared
    u64 wrong = 0, unwritten = 0, first = 0, last = 0;
    std::vector<Mismatch> samples;  // the first few, by index
};

// "0.123456791", "NaN (never written)", "inf"; integers as integers.
std::string format_value(float v);
std::string format_value(std::uint32_t v);
std::string format_value(int v);
std::string format_want(const Want& w, bool integer);

namespace detail {
struct CompareCounts {
    unsigned long long wrong, unwritten, first, last;
};
// One thread's tally, merged once into the shared counters.
struct Tally {
    unsigned long long wrong = 0, unwritten = 0, first = ~0ull, last = 0;
    __device__ void add(u64 i, std::uint32_t got_bits) {
        ++wrong;
        unwritten += got_bits == kPoisonBits;
        first = i < first ? i : first;
        last = i > last ? i : last;
    }
    __device__ void merge_into(CompareCounts* out) const {
        if (!wrong) return;
        atomicAdd(&out->wrong, wrong);
        atomicAdd(&out->unwritten, unwritten);
        atomicMin(&out->first, first);
        atomicMax(&out->last, last);
    }
};

template <typename T, typename G>
__global__ void compare_kernel(const T* got, u64 n, G gen, CompareCounts* out) {
    Tally tally;
    const u64 runs = (n + G::kRun - 1) / G::kRun;
    for (u64 r = blockIdx.x * u64{blockDim.x} + threadIdx.x; r < runs;
         r += u64{gridDim.x} * blockDim.x) {
        const u64 first = r * G::kRun;
        const u64 end = first + G::kRun < n ? first + G::kRun : n;
        auto state = gen.start(first);
        for (u64 i = first; i < end; ++i) {
            const Want w = gen.next(state, i);
            const T g = got[i];
            if (!w.accepts(g)) tally.add(i, bits_of(g));
        }
    }
    tally.merge_into(out);
}

// The elements of `count` ranges [bounds[2k], bounds[2k + 1]) only, a range per thread, each run
// walked from its start (the sampled outputs under emulation, below).
#ifdef CUDALINGS_EMULATOR
template <typename T, typename G>
__global__ void compare_ranges_kernel(const T* got, const u64* bounds, u64 count, G gen,
                                      CompareCounts* out) {
    Tally tally;
    for (u64 k = blockIdx.x * u64{blockDim.x} + threadIdx.x; k < count;
         k += u64{gridDim.x} * blockDim.x) {
        const u64 lo = bounds[2 * k], hi = bounds[2 * k + 1];
        for (u64 first = lo / G::kRun * G::kRun; first < hi; first += G::kRun) {
            const u64 end = first + G::kRun < hi ? first + G::kRun : hi;
            auto state = gen.start(first);
            for (u64 i = first; i < end; ++i) {
                const Want w = gen.next(state, i);
                if (i < lo) continue;
                const T g = got[i];
                if (!w.accepts(g)) tally.add(i, bits_of(g));
            }
        }
    }
    tally.merge_into(out);
}
#endif

// Under emulation, at a size too large to emulate whole (runner/backend_emu.cu's launch-only
// case, for a problem that declares kSampledValues): the [first, end) element ranges of `got`
// that the sampled blocks wrote. A compare then checks those elements only. False: compare them
// all.
using ElementRanges = std::vector<std::pair<u64, u64>>;
bool sampled_ranges(const void* got, ElementRanges* out);
// The runner's side: what answers sampled_ranges while a sample is judged (empty: nothing).
void set_sampled_ranges(std::function<bool(const void* got, ElementRanges* out)> ranges);

// The wanted values of elements [lo, hi) (for the listing of the first mismatches).
template <typename G>
__global__ void wants_kernel(u64 lo, u64 hi, G gen, Want* out) {
    const u64 first_run = lo / G::kRun, runs = (hi - 1) / G::kRun - first_run + 1;
    for (u64 k = blockIdx.x * u64{blockDim.x} + threadIdx.x; k < runs;
         k += u64{gridDim.x} * blockDim.x) {
        const u64 first = (first_run + k) * G::kRun;
        const u64 end = first + G::kRun < hi ? first + G::kRun : hi;
        auto state = gen.start(first);
        for (u64 i = first; i < end; ++i) {
            const Want w = gen.next(state, i);
            if (i >= lo) out[i - lo] = w;
        }
    }
}

CompareCounts* new_counts(cudaStream_t s);
Comparison finish_counts(CompareCounts* counts, u64 n, cudaStream_t s);  // frees counts
// The first few mismatches of the window [c.first, c.first + window), from the values read back.
template <typename T>
void list_samples(Comparison& c, const std::vector<T>& got, const std::vector<Want>& want) {
    for (std::size_t k = 0; k < got.size() && c.samples.size() < 5; ++k)
        if (!want[k].accepts(got[k]))
            c.samples.push_back({c.first + k, format_value(got[k]),
                                 format_want(want[k], !std::is_floating_point_v<T>)});
}
}  // namespace detail

// got[0 .. n) (4-byte elements, on the device) against what `gen` wants of each.
template <typename T, typename G>
Comparison compare(const T* got, u64 n, const G& generator, cudaStream_t s) {
    const auto gen = as_runs(generator);
    using Gen = decltype(gen);
    detail::CompareCounts* counts = detail::new_counts(s);
    u64 checked = n, window_end = n;
    detail::ElementRanges ranges;
#ifdef CUDALINGS_EMULATOR  // the sampled sizes exist under emulation only
    if (detail::sampled_ranges(got, &ranges)) {
        std::vector<u64> bounds;
        checked = 0;
        for (const auto& [lo, end] : ranges) {
            const u64 hi = end < n ? end : n;
            if (lo >= hi) continue;
            bounds.push_back(lo);
            bounds.push_back(hi);
            checked += hi - lo;
        }
        const u64 count = bounds.size() / 2;
        dev::Array<u64> on_device(count ? bounds.size() : 2);
        if (count) {
            DEV_CHECK(cudaMemcpyAsync(on_device.get(), bounds.data(), bounds.size() * sizeof(u64),
                                      cudaMemcpyHostToDevice, s));
            KIT_LAUNCH(detail::compare_ranges_kernel, detail::grid_for(count), 256, 0, s, got,
                       on_device.get(), count, gen, counts);
            DEV_CHECK(cudaGetLastError());
        }
        dev::sync_stream(s);
    } else
#endif
    {
        const u64 runs = (n + Gen::kRun - 1) / Gen::kRun;
        KIT_LAUNCH(detail::compare_kernel, detail::grid_for(runs), 256, 0, s, got, n, gen, counts);
        DEV_CHECK(cudaGetLastError());
    }
    Comparison c = detail::finish_counts(counts, checked, s);
    if (!c.wrong) return c;
    for (const auto& [lo, end] : ranges)  // the listing stays inside the compared elements
        if (c.first >= lo && c.first < end) window_end = end < n ? end : n;
    // The first few mismatches, from a window that starts at the first one.
    const u64 window = window_end - c.first < 4096 ? window_end - c.first : 4096;
    std::vector<T> g(window);
    std::vector<Want> w(window);
    dev::Array<Want> wants(window);
    KIT_LAUNCH(detail::wants_kernel, detail::grid_for((window + Gen::kRun - 1) / Gen::kRun + 1),
               256, 0, s, c.first, c.first + window, gen, wants.get());
    DEV_CHECK(cudaGetLastError());
    dev::sync_stream(s);
    dev::copy_to_host(g.data(), got + c.first, window * sizeof(T));
    dev::copy_to_host(w.data(), wants.get(), window * sizeof(Want));
    detail::list_samples(c, g, w);
    return c;
}

// Wanted values from arrays on the device.
struct NearArrays {  // value[i] within bound[i] (a bound of 0: exactly value[i])
    const double* value;
    const double* bound;
    __host__ __device__ Want operator()(u64 i) const { return Want::near(value[i], bound[i]); }
};
template <typename T>
struct EqualArray {  // the same bits as want[i]
    const T* want;
    __host__ __device__ Want operator()(u64 i) const { return Want::exactly_as(want[i]); }
};

// One value (a whole sum, a count), read back and compared on the host.
Comparison compare_scalar(const float* got, const Want& want);
Comparison compare_scalar(const std::uint32_t* got, const Want& want);

// ---------------------------------------------------------------- expected-value helpers
// The sum of n floats and of their magnitudes, in double on the device, finished in a fixed
// order: the same answer every time, far below any float tolerance (n <= 2^28).
struct SumStats {
    double sum = 0;
    double sum_abs = 0;
};
SumStats sum_in_double(const float* x, u64 n, cudaStream_t s);

// ---------------------------------------------------------------- the verdict of a judge
enum class Status { Pass, Wrong, MemoryError };

// A likely cause that this case's mismatches fit, for the step's conclusion: it is stated for
// the step (its reason and advice) only when every failing case carries the same key and at least
// one shows it `alone` (core/run/conclude.h). A case that fits it but also fits another cause
// (wrong outputs near an end of the array, where the boundary rule acts too) carries it with alone
// false.
struct Clue {
    std::string key;     // what fits, with its parameters ("tile-end:256"); empty: none
    std::string fact;    // a few words for the step's reason ("...wrong at the end of every tile")
    std::string advice;  // the fact and its likely cause, for the learner
    bool alone = false;
};

struct Outcome {
    Status status = Status::Pass;
    std::string reason;     // short: "values", "unwritten output", "counts: values"
    std::string detail;     // a sentence or two for the learner
    std::string tolerance;  // how close is close enough, and why
    Comparison cmp;         // the comparison the mismatches shown come from
    Clue clue;              // a likely cause the mismatches fit (set by a lesson's judge)
    bool pass() const { return status == Status::Pass; }
    // Adds a sentence to the detail (a lesson's own diagnosis); nothing for an empty one.
    void explain(const std::string& sentence) {
        if (!sentence.empty()) detail += (detail.empty() ? "" : " ") + sentence;
    }
};

// The outcome of one compared output: pass, or WRONG with the mismatches described in words
// ("nothing written", "only the tail unwritten", ...). `what` names the output when a step has
// several (empty: the step's only output).
Outcome judge_values(const Comparison& cmp, const std::string& tolerance,
                     const std::string& what = {});

// Several outputs, judged together: the reason names the first wrong one, the detail lists
// every wrong one and the right ones. `unit` says what an index counts ("tile", "segment").
struct Part {
    std::string name;
    Comparison cmp;
    std::string tolerance;
    std::string unit = "element";  // what an index of this output counts ("tile", "segment")
};
Outcome judge_parts(const std::vector<Part>& parts);

// A whole float sum (one value) against the exact sum of the input (`exact`, in double): within
// `bound` of it (0: exactly), with what a wrong sum most likely means (never written, a NaN from
// garbage, elements missing or counted twice...).
Outcome judge_sum(const float* got, const SumStats& exact, double bound, u64 n,
                  const std::string& tolerance);

// "Nothing was written", "only the last 3 elements are unwritten", ...
std::string describe_mismatches(u64 n, const Comparison& c);

// ---------------------------------------------------------------- variable-length outputs
// A compaction: `got[0 .. *got_count)` against `want[0 .. want_count)`, in `capacity` elements.
// Checks the count, the kept elements bit for bit, and that nothing past the count was
// written; when the elements are the right ones in another order it says so ("not stable").
// With `ordered` false (an unordered contract) the same elements in any order pass.
Outcome judge_compacted(const float* got, const std::uint32_t* got_count, const float* want,
                        u64 want_count, u64 capacity, bool ordered, cudaStream_t s);

// ---------------------------------------------------------------- expected-value helpers
// Per run of `segment` consecutive elements (the last may be shorter): the sum and the sum of
// magnitudes in double, max, min and the first argmax, exactly.
struct SegmentStats {
    double sum = 0, abs_sum = 0;
    float max = 0, min = 0;
    u64 argmax = 0;
};
void segment_stats(const float* x, u64 n, u64 segment, SegmentStats* out, cudaStream_t s);

// Blocks of `block` threads for a grid-stride loop over n items (at least 1, at most 8192).
inline unsigned grid_for(u64 n, unsigned block = 256) { return detail::grid_for(n, block); }

// ---------------------------------------------------------------- bytes a call moves
// (and, for a compute-bound problem, the floating-point operations it must do: GEMM's 2mnk)
struct Traffic {
    double bytes = 0;
    double fp32_ops = 0;  // FP32 operations per call (an FMA counts 2); 0: a memory-bound problem
    template <typename T>
    Traffic& read(double count) {
        bytes += count * sizeof(T);
        return *this;
    }
    template <typename T>
    Traffic& write(double count) {
        bytes += count * sizeof(T);
        return *this;
    }
    // The problem's least FP32 work: timings then show FLOP/s, the share of the GPU's measured
    // FP32 rate and the arithmetic intensity (operations per minimal byte) beside GB/s.
    Traffic& fp32(double operations) {
        fp32_ops += operations;
        return *this;
    }
};

}  // namespace kit
