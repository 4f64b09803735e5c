// Specs for lesson 03 (warp shuffles): five steps with five signatures, one spec each.
//
// Every step cuts the input into segments of `width` consecutive elements (32, or 8 and 16 in
// step 5); n may be any size >= 1, and when width does not divide n the last segment is partial
// (see lessons/03_warp_shuffle/warp_shuffle.cuh). The size ladders hold whole segments (32,
// 64, 96, 1024 + 32), partial ones (1, 31, 33, 255, 1000, 2^20 + 3) and large arrays.
//
// Expected results are computed on the device: segment sums, means and prefix sums in double
// precision, counts and ranks exactly. A float sum depends on the order of its additions and
// every step may choose its own order, so sums are accepted within 32·ε·Σ|x| (ε = 2^-23, Σ|x|
// the sum of the magnitudes of the terms, in double): adding up to 32 floats in any order makes
// at most 31 roundings of at most ε/2·Σ|x| each, so this is twice the worst case, while a
// missing, doubled or misplaced element is almost always far larger. An output still holding
// the poison (NaN) or any NaN never passes.
//
// Baselines for the lesson's staircase, all at 2^28 on the same kind of input as the step:
//   warp_segment_sum:        "cub" (cub::DeviceSegmentedReduce::Sum, GPU builds only),
//                            "plain" (step 1 with one float per lane, 5 shuffles per segment),
//                            "smem" (step 1's reference with shared memory for the exchange)
//   warp_segment_normalize, warp_segment_scan, warp_select_rank, warp_segment_center:
//                            "smem" (that step's reference with shared memory for the exchange)
#ifndef CUDALINGS_EMULATOR
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <cub/device/device_segmented_reduce.cuh>
#endif

#include <cmath>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "../../lessons/03_warp_shuffle/warp_shuffle.cuh"
#include "../core/cases.h"
#include "../runner/harness.h"
#include "../runner/spec.h"

namespace {

using harness::Dist;

constexpr std::uint64_t kTimedN = std::uint64_t{1} << 28;
constexpr double kEpsilon = 1.1920928955078125e-07;  // 2^-23, float's relative precision
constexpr double kSumBound = 32 * kEpsilon;          // per unit of Σ|x|

std::uint64_t segments_of(std::uint64_t n, unsigned width) { return (n + width - 1) / width; }

#define GRID_STRIDE(i, count)                                                                 \
    for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < (count); \
         i += std::uint64_t{gridDim.x} * blockDim.x)

// ================================================================ cases

// One case of a step: the CaseDef the runner sees, plus the step's own arguments.
struct Params {
    std::uint64_t n = 0;
    Dist dist = Dist::Uniform;
    float threshold = 0.0f;  // step 4
    unsigned width = 32;     // step 5 (steps 1 to 4 always use 32)
};

// Sizes for 32-wide segments: a partial segment alone (1, 31), one and several whole
// segments (32, 64, 96: 1 to 3 segments, fewer than a warp-load of 4 in step 1's layout),
// whole plus partial (33, 255, 257, 1000), block-sized (256) and its neighbours, 33 whole
// segments (1024 + 32), large with and without a partial segment, and the timed size.
std::vector<std::uint64_t> warp_sizes() {
    const std::uint64_t mi = std::uint64_t{1} << 20;
    return {1,   31,   32,        33,     64,      96,      255,    256,
            257, 1000, 1024 + 32, mi + 3, mi + 96, 16 * mi, kTimedN};
}

// The sizes above, cycling through `dists`.
std::vector<Params> warp_ladder(const std::vector<Dist>& dists) {
    std::vector<Params> out;
    const auto sizes = warp_sizes();
    for (std::size_t k = 0; k < sizes.size(); ++k) {
        Params p;
        p.n = sizes[k];
        p.dist = dists[k % dists.size()];
        out.push_back(p);
    }
    return out;
}

std::string case_name(const Params& p, bool threshold, bool width) {
    std::string name = "n=" + cudalings::format_size(p.n) + ", " + harness::describe(p.dist);
    if (threshold) name += ", keep x > " + cudalings::format_number(p.threshold);
    if (width) name += ", width " + std::to_string(p.width);
    return name;
}

// harness::judge for one named output of `length` elements (the number of segments, say, not
// n): the reason names the array and the mismatches are described against its own length.
// With no name (an output of one value per input element), harness::judge as it is.
harness::CaseOutcome judge_array(const char* array, std::uint64_t length,
                                 const harness::GuardReport& guards, std::uint64_t changed,
                                 const harness::Comparison& cmp, const harness::Tolerance& t) {
    harness::CaseOutcome o = harness::judge(guards, changed, cmp, t);
    if (array == nullptr) return o;
    if (guards.hit) {
        o.reason = std::string(array) + ": " + o.reason;
    } else if (!changed && cmp.wrong) {
        o.reason = std::string(array) + ": " + o.reason;
        o.detail =
            cudalings::describe_mismatches({length, cmp.wrong, cmp.unwritten, cmp.first, cmp.last});
    }
    return o;
}

// ================================================================ expected results

__global__ void sums_expected_kernel(const harness::SegmentStats* stats, std::uint64_t segments,
                                     double* want, double* bound) {
    GRID_STRIDE(s, segments) {
        want[s] = stats[s].sum;
        bound[s] = kSumBound * stats[s].abs_sum;
    }
}

__global__ void normalize_expected_kernel(const float* x, std::uint64_t n,
                                          const harness::SegmentStats* stats, float* want) {
    GRID_STRIDE(i, n) {
        want[i] = static_cast<float>(static_cast<double>(x[i]) / stats[i / 32].sum);
    }
}

// One thread per segment, in index order: prefix sums and the magnitudes they add up.
__global__ void scan_expected_kernel(const float* x, std::uint64_t n, double* want, double* bound) {
    GRID_STRIDE(s, (n + 31) / 32) {
        const std::uint64_t end = 32 * s + 32 < n ? 32 * s + 32 : n;
        double prefix = 0, magnitude = 0;
        for (std::uint64_t i = 32 * s; i < end; ++i) {
            prefix += static_cast<double>(x[i]);
            magnitude += fabs(static_cast<double>(x[i]));
            want[i] = prefix;
            bound[i] = kSumBound * magnitude;
        }
    }
}

// One thread per segment: exact counts and ranks, with the same float comparison.
__global__ void select_expected_kernel(const float* x, std::uint64_t n, float threshold,
                                       std::uint32_t* ranks, std::uint32_t* counts) {
    GRID_STRIDE(s, (n + 31) / 32) {
        const std::uint64_t end = 32 * s + 32 < n ? 32 * s + 32 : n;
        std::uint32_t kept = 0;
        for (std::uint64_t i = 32 * s; i < end; ++i) {
            ranks[i] = kept;
            kept += x[i] > threshold ? 1u : 0u;
        }
        counts[s] = kept;
    }
}

// x - mean, with m the segment's element count; the bound covers the mean's rounding (the
// segment's float sum, then the division: ε·Σ|x| at most, Σ|x| = m·mean|x|) and the final
// subtraction, with the same factor-of-2 room as the sums.
__global__ void center_expected_kernel(const float* x, std::uint64_t n, unsigned width,
                                       const harness::SegmentStats* stats, double* want,
                                       double* bound) {
    GRID_STRIDE(i, n) {
        const std::uint64_t s = i / width;
        const std::uint64_t left = n - s * width;
        const double m = static_cast<double>(left < width ? left : width);
        const double v = static_cast<double>(x[i]);
        want[i] = v - stats[s].sum / m;
        bound[i] = kSumBound * (stats[s].abs_sum / m + fabs(v));
    }
}

void launched() { DEV_CHECK(cudaGetLastError()); }

// ================================================================ tolerances

harness::Tolerance sum_tolerance() {
    harness::Tolerance t;
    t.exact = false;
    t.why =
        "a float sum depends on the order of its additions, so each sum may differ from the "
        "exact one (computed in double) by up to 32·ε·Σ|x|, where ε = 2^-23 ≈ 1.19e-7 and "
        "Σ|x| is the sum of the magnitudes of the segment's elements: adding up to 32 "
        "floats in any order rounds at most 31 times, by at most ε/2·Σ|x| each, so this is "
        "twice the worst case; a missing, doubled or misplaced element is far larger";
    return t;
}

harness::Tolerance normalize_tolerance() {
    harness::Tolerance t;
    t.exact = false;
    t.rel = kSumBound;
    t.abs = 0;
    t.why =
        "relative 32·ε ≈ 3.8e-6 (ε = 2^-23): the inputs are positive, so a segment's float "
        "sum, in any order, is within 31·ε/2 of the exact sum, relatively, and the division "
        "adds ε/2 more; this is twice that. An element divided by a partial sum, or by "
        "another segment's sum, is off by far more";
    return t;
}

harness::Tolerance scan_tolerance() {
    harness::Tolerance t;
    t.exact = false;
    t.why =
        "each prefix sum may differ from the exact one (computed in double) by up to "
        "32·ε·Σ|x|, where ε = 2^-23 ≈ 1.19e-7 and Σ|x| is the sum of the magnitudes of the "
        "elements it adds: any order of up to 32 additions rounds at most 31 times, by at "
        "most ε/2·Σ|x| each, so this is twice the worst case";
    return t;
}

harness::Tolerance select_tolerance() {
    harness::Tolerance t;
    t.exact = true;
    t.why = "exact: counts and ranks are whole numbers, and `in[i] > threshold` has one answer";
    return t;
}

harness::Tolerance center_tolerance() {
    harness::Tolerance t;
    t.exact = false;
    t.why =
        "each output may differ from the exact in[i] - mean (computed in double) by up to "
        "32·ε·(mean|x| + |in[i]|), ε = 2^-23 ≈ 1.19e-7, mean|x| the mean magnitude of the "
        "segment: the mean carries the rounding of the segment's float sum (at most about "
        "ε·Σ|x| / m) and the subtraction rounds once more; this leaves room to spare, while "
        "a wrong m, a missing element or another segment's mean is far larger";
    return t;
}

// ================================================================ problems

// An output of `length` elements (poisoned, guarded) and, only when timing against the
// reference, a spare of the same length that receives the reference's calls, so the learner's
// output is never overwritten by anyone else.
template <typename T>
class Outputs {
  public:
    Outputs(std::uint64_t length, bool spare) : mine_(length) {
        if (spare) spare_ = std::make_unique<dev::Array<T>>(length);
    }
    T* target(bool spare) const { return spare ? spare_->get() : mine_.get(); }
    const harness::Output<T>& mine() const { return mine_; }
    void poison(cudaStream_t s) { mine_.poison(s); }

  private:
    harness::Output<T> mine_;
    std::unique_ptr<dev::Array<T>> spare_;
};

// Everything one call of a step needs: its input, its outputs, and the expected result.
class Problem {
  public:
    Problem(const Params& p, std::uint64_t seed, cudaStream_t s)
        : p_(p), in_(p.n, p.dist, seed, 0, s) {}
    virtual ~Problem() = default;
    const Params& params() const { return p_; }
    virtual cudaError_t call(void* fn, cudaStream_t s, bool spare) = 0;
    virtual harness::CaseOutcome verify(cudaStream_t s) = 0;
    virtual double bytes() const = 0;  // read + written by one call
    // New input from `seed`, its expected result, and the outputs poisoned again.
    void refresh(std::uint64_t seed, cudaStream_t s) {
        in_.regenerate(seed, 0, s);
        prepare(s);
    }

  protected:
    // The expected result of the current input, and the outputs poisoned. Each subclass calls
    // its own at the end of its constructor.
    virtual void prepare(cudaStream_t s) = 0;
    Params p_;
    harness::Input in_;
};

// One float output of `length` elements, each within its own bound of a value computed in
// double (steps 1, 3 and 5). `array` names the output in the reason when it is not one value
// per input element (nullptr otherwise).
class WithinProblem : public Problem {
  public:
    harness::CaseOutcome verify(cudaStream_t s) override {
        const harness::Comparison cmp =
            harness::compare_within(out_.mine().get(), want_.get(), bound_.get(), length_, s);
        return judge_array(array_, length_, out_.mine().check_guards(s), in_.changed(s), cmp,
                           tolerance_);
    }

  protected:
    WithinProblem(const Params& p, const char* array, std::uint64_t length, harness::Tolerance t,
                  std::uint64_t seed, bool spare, cudaStream_t s)
        : Problem(p, seed, s),
          array_(array),
          length_(length),
          tolerance_(std::move(t)),
          out_(length, spare),
          want_(length),
          bound_(length) {}
    const char* array_;
    std::uint64_t length_;
    harness::Tolerance tolerance_;
    Outputs<float> out_;
    dev::Array<double> want_, bound_;
};

// Step 1: sums[s] over 32-wide segments.
class SumProblem : public WithinProblem {
  public:
    using Fn = decltype(&segment_sum);
    static Params timed() { return {kTimedN, Dist::Uniform, 0.0f, 32}; }
    static std::string name_of(const Params& p) { return case_name(p, false, false); }

    SumProblem(const Params& p, std::uint64_t seed, bool spare, cudaStream_t s)
        : WithinProblem(p, "sums", segments_of(p.n, 32), sum_tolerance(), seed, spare, s),
          stats_(length_) {
        SumProblem::prepare(s);
    }
    cudaError_t call(void* fn, cudaStream_t s, bool spare) override {
        return reinterpret_cast<Fn>(fn)(in_.get(), out_.target(spare), p_.n, s);
    }
    double bytes() const override { return 4.0 * p_.n + 4.0 * length_; }
    const float* input() const { return in_.get(); }
    float* output() const { return out_.target(false); }
    std::uint64_t segments() const { return length_; }

  protected:
    void prepare(cudaStream_t s) override {
        harness::segment_stats(in_.get(), p_.n, 32, stats_.get(), s);
        sums_expected_kernel<<<harness::grid_for(length_), 256, 0, s>>>(stats_.get(), length_,
                                                                        want_.get(), bound_.get());
        launched();
        out_.poison(s);
    }

  private:
    dev::Array<harness::SegmentStats> stats_;
};

// Step 2: out[i] = in[i] / (its segment's sum), positive inputs.
class NormalizeProblem : public Problem {
  public:
    using Fn = decltype(&segment_normalize);
    static Params timed() { return {kTimedN, Dist::Positive, 0.0f, 32}; }
    static std::string name_of(const Params& p) { return case_name(p, false, false); }

    NormalizeProblem(const Params& p, std::uint64_t seed, bool spare, cudaStream_t s)
        : Problem(p, seed, s), out_(p.n, spare), stats_(segments_of(p.n, 32)), want_(p.n) {
        NormalizeProblem::prepare(s);
    }
    cudaError_t call(void* fn, cudaStream_t s, bool spare) override {
        return reinterpret_cast<Fn>(fn)(in_.get(), out_.target(spare), p_.n, s);
    }
    harness::CaseOutcome verify(cudaStream_t s) override {
        const auto t = normalize_tolerance();
        return harness::judge(out_.mine().check_guards(s), in_.changed(s),
                              harness::compare(out_.mine().get(), want_.get(), p_.n, t, s), t);
    }
    double bytes() const override { return 8.0 * p_.n; }

  protected:
    void prepare(cudaStream_t s) override {
        harness::segment_stats(in_.get(), p_.n, 32, stats_.get(), s);
        normalize_expected_kernel<<<harness::grid_for(p_.n), 256, 0, s>>>(
            in_.get(), p_.n, stats_.get(), want_.get());
        launched();
        out_.poison(s);
    }

  private:
    Outputs<float> out_;
    dev::Array<harness::SegmentStats> stats_;
    dev::Array<float> want_;
};

// Step 3: inclusive scan of each 32-wide segment.
class ScanProblem : public WithinProblem {
  public:
    using Fn = decltype(&segment_scan);
    static Params timed() { return {kTimedN, Dist::Uniform, 0.0f, 32}; }
    static std::string name_of(const Params& p) { return case_name(p, false, false); }

    ScanProblem(const Params& p, std::uint64_t seed, bool spare, cudaStream_t s)
        : WithinProblem(p, nullptr, p.n, scan_tolerance(), seed, spare, s) {
        ScanProblem::prepare(s);
    }
    cudaError_t call(void* fn, cudaStream_t s, bool spare) override {
        return reinterpret_cast<Fn>(fn)(in_.get(), out_.target(spare), p_.n, s);
    }
    double bytes() const override { return 8.0 * p_.n; }

  protected:
    void prepare(cudaStream_t s) override {
        scan_expected_kernel<<<harness::grid_for(segments_of(p_.n, 32)), 256, 0, s>>>(
            in_.get(), p_.n, want_.get(), bound_.get());
        launched();
        out_.poison(s);
    }
};

// Step 4: counts[s] and ranks[i] of the elements with in[i] > threshold.
class SelectProblem : public Problem {
  public:
    using Fn = decltype(&segment_select_rank);
    static Params timed() { return {kTimedN, Dist::Uniform, 0.0f, 32}; }
    static std::string name_of(const Params& p) { return case_name(p, true, false); }

    SelectProblem(const Params& p, std::uint64_t seed, bool spare, cudaStream_t s)
        : Problem(p, seed, s),
          segments_(segments_of(p.n, 32)),
          ranks_(p.n, spare),
          counts_(segments_, spare),
          want_ranks_(p.n),
          want_counts_(segments_) {
        SelectProblem::prepare(s);
    }
    cudaError_t call(void* fn, cudaStream_t s, bool spare) override {
        return reinterpret_cast<Fn>(fn)(in_.get(), ranks_.target(spare), counts_.target(spare),
                                        p_.n, p_.threshold, s);
    }
    // Guards of both outputs, then the input, then the ranks, then the counts.
    harness::CaseOutcome verify(cudaStream_t s) override {
        const auto t = select_tolerance();
        harness::GuardReport guards = ranks_.mine().check_guards(s);
        const bool ranks_hit = guards.hit;
        if (!ranks_hit) guards = counts_.mine().check_guards(s);
        const std::uint64_t changed = in_.changed(s);
        const harness::Comparison ranks =
            harness::compare_u32(ranks_.mine().get(), want_ranks_.get(), p_.n, s);
        const harness::Comparison counts =
            harness::compare_u32(counts_.mine().get(), want_counts_.get(), segments_, s);
        if (guards.hit)
            return ranks_hit ? judge_array("ranks", p_.n, guards, changed, ranks, t)
                             : judge_array("counts", segments_, guards, changed, counts, t);
        if (ranks.wrong || !counts.wrong) {
            harness::CaseOutcome o = judge_array("ranks", p_.n, guards, changed, ranks, t);
            if (ranks.wrong && counts.wrong)
                o.detail +=
                    (o.detail.empty() ? "" : " ") + std::string("The counts are wrong too.");
            return o;
        }
        return judge_array("counts", segments_, guards, changed, counts, t);
    }
    double bytes() const override { return 8.0 * p_.n + 4.0 * segments_; }

  protected:
    void prepare(cudaStream_t s) override {
        select_expected_kernel<<<harness::grid_for(segments_), 256, 0, s>>>(
            in_.get(), p_.n, p_.threshold, want_ranks_.get(), want_counts_.get());
        launched();
        ranks_.poison(s);
        counts_.poison(s);
    }

  private:
    std::uint64_t segments_;
    Outputs<unsigned> ranks_, counts_;
    dev::Array<std::uint32_t> want_ranks_, want_counts_;
};

// Step 5: out[i] = in[i] - mean of its `width`-wide segment.
class CenterProblem : public WithinProblem {
  public:
    using Fn = decltype(&segment_center);
    static Params timed() { return {kTimedN, Dist::Uniform, 0.0f, 8}; }
    static std::string name_of(const Params& p) { return case_name(p, false, true); }

    CenterProblem(const Params& p, std::uint64_t seed, bool spare, cudaStream_t s)
        : WithinProblem(p, nullptr, p.n, center_tolerance(), seed, spare, s),
          stats_(segments_of(p.n, p.width)) {
        CenterProblem::prepare(s);
    }
    cudaError_t call(void* fn, cudaStream_t s, bool spare) override {
        return reinterpret_cast<Fn>(fn)(in_.get(), out_.target(spare), p_.n,
                                        static_cast<int>(p_.width), s);
    }
    double bytes() const override { return 8.0 * p_.n; }

  protected:
    void prepare(cudaStream_t s) override {
        harness::segment_stats(in_.get(), p_.n, p_.width, stats_.get(), s);
        center_expected_kernel<<<harness::grid_for(p_.n), 256, 0, s>>>(
            in_.get(), p_.n, p_.width, stats_.get(), want_.get(), bound_.get());
        launched();
        out_.poison(s);
    }

  private:
    dev::Array<harness::SegmentStats> stats_;
};

// ================================================================ timing

// A step (the learner's or a baseline with the step's signature) against the reference.
class Timed : public runner::TimedRun {
  public:
    Timed(std::unique_ptr<Problem> p, void* fn, void* ref) : p_(std::move(p)), fn_(fn), ref_(ref) {
        n = p_->params().n;
        bytes = p_->bytes();
    }
    cudaError_t learner(cudaStream_t s) override { return p_->call(fn_, s, false); }
    cudaError_t reference(cudaStream_t s) override {
        return ref_ ? p_->call(ref_, s, true) : cudaErrorInvalidValue;
    }
    harness::CaseOutcome verify_learner(cudaStream_t s) override { return p_->verify(s); }
    bool refresh(cudaStream_t s, std::uint64_t seed) override {
        p_->refresh(seed, s);
        return true;
    }

  private:
    std::unique_ptr<Problem> p_;
    void* fn_;
    void* ref_;
};

// A baseline that has its step's signature, timed alone on the step's timed problem.
template <typename P, typename P::Fn kFn>
std::unique_ptr<runner::TimedRun> make_baseline(cudaStream_t s, std::uint64_t seed) {
    return std::make_unique<Timed>(std::make_unique<P>(P::timed(), seed, false, s),
                                   reinterpret_cast<void*>(kFn), nullptr);
}

#ifndef CUDALINGS_EMULATOR
// cub::DeviceSegmentedReduce::Sum on step 1's segments: the offsets come from iterators (32 s
// and min(32 s + 32, n)), so no offset array is read; the temporary storage is allocated once,
// outside the timed calls.
struct SegmentBegin {
    __host__ __device__ std::int64_t operator()(std::int64_t s) const { return 32 * s; }
};
struct SegmentEnd {
    std::int64_t n;
    __host__ __device__ std::int64_t operator()(std::int64_t s) const {
        return 32 * s + 32 < n ? 32 * s + 32 : n;
    }
};

class CubSegmentedSum : public runner::TimedRun {
  public:
    CubSegmentedSum(cudaStream_t s, std::uint64_t seed) : p_(SumProblem::timed(), seed, false, s) {
        n = p_.params().n;
        bytes = p_.bytes();
        DEV_CHECK(run(nullptr, s));  // asks for the size of the temporary storage
        temp_ = std::make_unique<dev::Array<unsigned char>>(temp_bytes_ ? temp_bytes_ : 1);
    }
    cudaError_t learner(cudaStream_t s) override { return run(temp_->get(), s); }
    cudaError_t reference(cudaStream_t) override { return cudaErrorInvalidValue; }
    harness::CaseOutcome verify_learner(cudaStream_t s) override { return p_.verify(s); }
    bool refresh(cudaStream_t s, std::uint64_t seed) override {
        p_.refresh(seed, s);
        return true;
    }

  private:
    cudaError_t run(void* temp, cudaStream_t s) {
        const auto first = thrust::make_counting_iterator<std::int64_t>(0);
        const auto begins = thrust::make_transform_iterator(first, SegmentBegin{});
        const auto ends =
            thrust::make_transform_iterator(first, SegmentEnd{static_cast<std::int64_t>(n)});
        return cub::DeviceSegmentedReduce::Sum(temp, temp_bytes_, p_.input(), p_.output(),
                                               static_cast<std::int64_t>(p_.segments()), begins,
                                               ends, s);
    }
    SumProblem p_;
    std::size_t temp_bytes_ = 0;
    std::unique_ptr<dev::Array<unsigned char>> temp_;
};

std::unique_ptr<runner::TimedRun> make_cub(cudaStream_t s, std::uint64_t seed) {
    return std::make_unique<CubSegmentedSum>(s, seed);
}
#endif

// ================================================================ shared-memory baselines
//
// What each step's reference computes, laid out the same way (grid, loads in flight, lanes),
// with one difference: values move between lanes through a shared-memory slot per thread
// instead of shuffles. Within a warp the exchange needs no block barrier, only __syncwarp()
// between a write and the reads of it (and before a slot is written again). Plus "plain":
// step 1 with the simplest layout (one float per lane, a warp per segment).

constexpr unsigned kBlock = 256;
constexpr unsigned kWarps = kBlock / 32;
constexpr int kMaxRegisters = 32;  // a full SM of 256-thread blocks fits
constexpr int kUnroll = 4;         // steps 2-5 and "plain": 32-float chunks per warp in flight

// The sum of v over each aligned group of kGroup lanes, returned to every lane of the group,
// through the block's slots `buf` (t = threadIdx.x): a tree, then the total read from the
// group's first slot.
template <unsigned kGroup>
__device__ __forceinline__ float smem_group_sum(float* buf, unsigned t, float v) {
    buf[t] = v;
    __syncwarp();
#pragma unroll
    for (unsigned d = kGroup / 2; d > 0; d /= 2) {
        if (t % kGroup < d) buf[t] += buf[t + d];
        __syncwarp();
    }
    const float total = buf[t - t % kGroup];
    __syncwarp();  // everyone has read before the slots are written again
    return total;
}

// Inclusive scan over the warp through the slots (Hillis-Steele).
template <typename T>
__device__ __forceinline__ T smem_warp_scan(T* buf, unsigned t, T v) {
    const unsigned lane = t % 32;
    buf[t] = v;
    __syncwarp();
#pragma unroll
    for (unsigned d = 1; d < 32; d *= 2) {
        const T below = lane >= d ? buf[t - d] : T(0);
        __syncwarp();  // every read of this round before any write
        v += below;
        buf[t] = v;
        __syncwarp();
    }
    return v;
}

// Grid-stride over 32-float chunks (one float per lane), kUnroll chunks loaded before any is
// used, as in the references of steps 2 to 5: body(x, chunk, lane), element chunk * 32 + lane.
template <typename Body>
__device__ __forceinline__ void for_each_chunk(const float* __restrict__ in, std::uint64_t n,
                                               Body body) {
    const unsigned lane = threadIdx.x % 32;
    const std::uint64_t warp = (blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x) / 32;
    const std::uint64_t num_warps = std::uint64_t{gridDim.x} * kWarps;
    const std::uint64_t chunks = (n + 31) / 32;
    for (std::uint64_t c = warp; c < chunks; c += kUnroll * num_warps) {
        float x[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
            const std::uint64_t i = (c + u * num_warps) * 32 + lane;
            x[u] = i < n ? in[i] : 0.0f;
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) body(x[u], c + u * num_warps, lane);
    }
}

// Step 1's reference (a warp per tile of 32 segments, 8 float4 loads per lane in flight, one
// block per 8 tiles) with the 8-lane trees in shared memory.
__global__ void __launch_bounds__(kBlock)
    smem_sum_kernel(const float* __restrict__ in, float* __restrict__ sums, std::uint64_t n) {
    constexpr int kLoads = 8;
    constexpr std::uint64_t kTile = 1024;
    __shared__ float buf[kBlock];
    const unsigned t = threadIdx.x, lane = t % 32;
    const std::uint64_t tile = (blockIdx.x * std::uint64_t{blockDim.x} + t) / 32;
    if (tile * kTile >= n) return;
    const std::uint64_t first = tile * (kTile / 4) + lane;
    const float4* in4 = reinterpret_cast<const float4*>(in);
    float4 v[kLoads];
    const bool whole = (tile + 1) * kTile <= n;
#pragma unroll
    for (int k = 0; k < kLoads; ++k) {
        const std::uint64_t p = first + k * 32, i = 4 * p;
        v[k] = whole || i + 3 < n ? in4[p]
                                  : make_float4(i < n ? in[i] : 0.0f, i + 1 < n ? in[i + 1] : 0.0f,
                                                i + 2 < n ? in[i + 2] : 0.0f, 0.0f);
    }
    const std::uint64_t segments = (n + 31) / 32;
#pragma unroll
    for (int k = 0; k < kLoads; ++k) {
        const float s = smem_group_sum<8>(buf, t, (v[k].x + v[k].y) + (v[k].z + v[k].w));
        const std::uint64_t segment = tile * 32 + 4 * k + lane / 8;
        if (lane % 8 == 0 && segment < segments) sums[segment] = s;
    }
}

// One float per lane, a warp per segment, 5 shuffles (the layout step 1 improves on).
__global__ void __maxnreg__(kMaxRegisters)
    plain_sum_kernel(const float* __restrict__ in, float* __restrict__ sums, std::uint64_t n) {
    for_each_chunk(in, n, [&](float x, std::uint64_t segment, unsigned lane) {
#pragma unroll
        for (int d = 16; d > 0; d /= 2) x += __shfl_down_sync(kFullMask, x, d);
        if (lane == 0 && segment * 32 < n) sums[segment] = x;
    });
}

__global__ void __maxnreg__(kMaxRegisters)
    smem_normalize_kernel(const float* __restrict__ in, float* __restrict__ out, std::uint64_t n) {
    __shared__ float buf[kBlock];
    for_each_chunk(in, n, [&](float x, std::uint64_t segment, unsigned lane) {
        const float total = smem_group_sum<32>(buf, threadIdx.x, x);
        const std::uint64_t i = segment * 32 + lane;
        if (i < n) out[i] = x / total;
    });
}

__global__ void __maxnreg__(kMaxRegisters)
    smem_scan_kernel(const float* __restrict__ in, float* __restrict__ out, std::uint64_t n) {
    __shared__ float buf[kBlock];
    for_each_chunk(in, n, [&](float x, std::uint64_t segment, unsigned lane) {
        const float prefix = smem_warp_scan(buf, threadIdx.x, x);
        const std::uint64_t i = segment * 32 + lane;
        if (i < n) out[i] = prefix;
    });
}

// The ballot and the popcounts become a scan of 0/1 flags in shared memory.
__global__ void __maxnreg__(kMaxRegisters)
    smem_select_kernel(const float* __restrict__ in, unsigned* __restrict__ ranks,
                       unsigned* __restrict__ counts, std::uint64_t n, float threshold) {
    __shared__ unsigned buf[kBlock];
    for_each_chunk(in, n, [&](float x, std::uint64_t segment, unsigned lane) {
        const std::uint64_t i = segment * 32 + lane;
        const unsigned keep = i < n && x > threshold ? 1u : 0u;
        const unsigned inclusive = smem_warp_scan(buf, threadIdx.x, keep);
        if (i < n) ranks[i] = inclusive - keep;
        if (lane == 31 && segment * 32 < n) counts[segment] = inclusive;
    });
}

template <unsigned kWidth>
__global__ void __maxnreg__(kMaxRegisters)
    smem_center_kernel(const float* __restrict__ in, float* __restrict__ out, std::uint64_t n) {
    __shared__ float buf[kBlock];
    for_each_chunk(in, n, [&](float x, std::uint64_t chunk, unsigned lane) {
        const float sum = smem_group_sum<kWidth>(buf, threadIdx.x, x);
        const std::uint64_t i = chunk * 32 + lane;
        if (i < n) {
            const std::uint64_t left = n - (i - lane % kWidth);
            const float m = static_cast<float>(left < kWidth ? left : kWidth);
            out[i] = x - sum / m;
        }
    });
}

// One wave of kBlock-thread blocks, no more than `warps` warps' worth.
unsigned wave(std::uint64_t warps) {
    unsigned grid = 0;
    DEV_CHECK(one_wave_grid(kBlock, (warps + kWarps - 1) / kWarps, &grid));
    return grid;
}

cudaError_t smem_segment_sum(const float* in, float* sums, size_t n, cudaStream_t s) {
    const std::uint64_t tiles = (n + 1023) / 1024;
    smem_sum_kernel<<<static_cast<unsigned>((tiles + kWarps - 1) / kWarps), kBlock, 0, s>>>(
        in, sums, n);
    return cudaGetLastError();
}

cudaError_t plain_segment_sum(const float* in, float* sums, size_t n, cudaStream_t s) {
    plain_sum_kernel<<<wave(segments_of(n, 32)), kBlock, 0, s>>>(in, sums, n);
    return cudaGetLastError();
}

cudaError_t smem_segment_normalize(const float* in, float* out, size_t n, cudaStream_t s) {
    smem_normalize_kernel<<<wave(segments_of(n, 32)), kBlock, 0, s>>>(in, out, n);
    return cudaGetLastError();
}

cudaError_t smem_segment_scan(const float* in, float* out, size_t n, cudaStream_t s) {
    smem_scan_kernel<<<wave(segments_of(n, 32)), kBlock, 0, s>>>(in, out, n);
    return cudaGetLastError();
}

cudaError_t smem_segment_select_rank(const float* in, unsigned* ranks, unsigned* counts, size_t n,
                                     float threshold, cudaStream_t s) {
    smem_select_kernel<<<wave(segments_of(n, 32)), kBlock, 0, s>>>(in, ranks, counts, n, threshold);
    return cudaGetLastError();
}

cudaError_t smem_segment_center(const float* in, float* out, size_t n, int width, cudaStream_t s) {
    const unsigned grid = wave(segments_of(n, 32));
    switch (width) {
        case 8:
            smem_center_kernel<8><<<grid, kBlock, 0, s>>>(in, out, n);
            break;
        case 16:
            smem_center_kernel<16><<<grid, kBlock, 0, s>>>(in, out, n);
            break;
        default:
            return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

// ================================================================ the specs

// What the five specs share: cases from a list of Params, a Problem per case, timing.
template <typename P>
class StepSpec : public runner::Spec {
  public:
    std::vector<harness::CaseDef> cases() const override {
        std::vector<harness::CaseDef> out;
        for (const Params& p : params()) {
            harness::CaseDef c;
            c.n = p.n;
            c.dist = p.dist;
            c.name = P::name_of(p);
            out.push_back(c);
        }
        return out;
    }
    harness::CaseOutcome run_case(harness::Ctx& ctx, void* fn, const harness::CaseDef& c,
                                  std::uint64_t seed) override {
        cudaStream_t s = ctx.stream;
        P problem(find(c), seed, false, s);
        dev::sync_device();
        ctx.call([&] { return problem.call(fn, s, false); });
        return problem.verify(s);
    }
    std::unique_ptr<runner::TimedRun> prepare_timing(cudaStream_t s, void* fn, void* reference,
                                                     std::uint64_t seed) override {
        return std::make_unique<Timed>(
            std::make_unique<P>(P::timed(), seed, reference != nullptr, s), fn, reference);
    }

  protected:
    virtual std::vector<Params> params() const = 0;

  private:
    // The case's own size, with the arguments of the case whose name ends the same way (what
    // follows the size: a runner that caps the sizes, as under emulation, renames its cases
    // "n=<cap>, <the rest>").
    Params find(const harness::CaseDef& c) const {
        const auto rest = [](const std::string& name) { return name.substr(name.find(',')); };
        for (Params p : params()) {
            if (rest(P::name_of(p)) != rest(c.name)) continue;
            p.n = c.n;
            return p;
        }
        throw std::runtime_error(std::string(name()) + ": no case named " + c.name);
    }
};

class WarpSegmentSum : public StepSpec<SumProblem> {
  public:
    const char* name() const override { return "warp_segment_sum"; }
    const char* symbol() const override { return "segment_sum"; }
    std::vector<runner::Baseline> baselines() const override {
        std::vector<runner::Baseline> b;
#ifndef CUDALINGS_EMULATOR
        b.push_back({"cub", &make_cub});
#endif
        b.push_back({"plain", &make_baseline<SumProblem, &plain_segment_sum>});
        b.push_back({"smem", &make_baseline<SumProblem, &smem_segment_sum>});
        return b;
    }

  protected:
    std::vector<Params> params() const override {
        return warp_ladder({Dist::Uniform, Dist::Wide, Dist::SmallIntegers, Dist::Large,
                            Dist::Alternating, Dist::AllEqual});
    }
};

class WarpSegmentNormalize : public StepSpec<NormalizeProblem> {
  public:
    const char* name() const override { return "warp_segment_normalize"; }
    const char* symbol() const override { return "segment_normalize"; }
    std::vector<runner::Baseline> baselines() const override {
        return {{"smem", &make_baseline<NormalizeProblem, &smem_segment_normalize>}};
    }

  protected:
    // Positive weights: a segment's sum is never zero and never cancels.
    std::vector<Params> params() const override {
        return warp_ladder({Dist::Positive, Dist::AllEqual});
    }
};

class WarpSegmentScan : public StepSpec<ScanProblem> {
  public:
    const char* name() const override { return "warp_segment_scan"; }
    const char* symbol() const override { return "segment_scan"; }
    std::vector<runner::Baseline> baselines() const override {
        return {{"smem", &make_baseline<ScanProblem, &smem_segment_scan>}};
    }

  protected:
    std::vector<Params> params() const override {
        return warp_ladder(
            {Dist::Uniform, Dist::Wide, Dist::SmallIntegers, Dist::Alternating, Dist::Large});
    }
};

class WarpSelectRank : public StepSpec<SelectProblem> {
  public:
    const char* name() const override { return "warp_select_rank"; }
    const char* symbol() const override { return "segment_select_rank"; }
    std::vector<runner::Baseline> baselines() const override {
        return {{"smem", &make_baseline<SelectProblem, &smem_segment_select_rank>}};
    }

  protected:
    // About half kept; x > 0 with exact zeros among the inputs; sparse (about 10% kept);
    // every element kept; none kept; every other one; half, over many magnitudes.
    std::vector<Params> params() const override {
        const struct {
            Dist dist;
            float threshold;
        } kinds[] = {{Dist::Uniform, 0.0f},  {Dist::SmallIntegers, 0.0f},
                     {Dist::Positive, 0.9f}, {Dist::AllEqual, -1.0f},
                     {Dist::Uniform, 2.0f},  {Dist::Alternating, 0.0f},
                     {Dist::Wide, 0.0f}};
        std::vector<Params> out;
        const auto sizes = warp_sizes();
        for (std::size_t k = 0; k < sizes.size(); ++k) {
            const auto& kind = kinds[k % (sizeof kinds / sizeof kinds[0])];
            out.push_back({sizes[k], kind.dist, kind.threshold, 32});
        }
        return out;
    }
};

class WarpSegmentCenter : public StepSpec<CenterProblem> {
  public:
    const char* name() const override { return "warp_segment_center"; }
    const char* symbol() const override { return "segment_center"; }
    std::vector<runner::Baseline> baselines() const override {
        return {{"smem", &make_baseline<CenterProblem, &smem_segment_center>}};
    }

  protected:
    // Both widths on the small sizes around them (a partial segment alone, whole ones, whole
    // plus partial, a chunk of 32 that ends inside a segment), then large ones.
    std::vector<Params> params() const override {
        const Dist dists[] = {Dist::Uniform, Dist::Wide, Dist::SmallIntegers, Dist::Large};
        std::vector<Params> out;
        std::size_t k = 0;
        auto add = [&](std::uint64_t n, unsigned width) {
            out.push_back({n, dists[k++ % 4], 0.0f, width});
        };
        for (std::uint64_t n : {1, 7, 8, 9, 15, 16, 17, 24, 31, 33, 40, 1000})
            for (unsigned width : {8u, 16u}) add(n, width);
        add((1u << 20) + 3, 8);
        add((1u << 20) + 3, 16);
        add(1u << 24, 16);
        add(kTimedN, 8);
        return out;
    }
};

}  // namespace

CUDALINGS_REGISTER_SPEC(WarpSegmentSum);
CUDALINGS_REGISTER_SPEC(WarpSegmentNormalize);
CUDALINGS_REGISTER_SPEC(WarpSegmentScan);
CUDALINGS_REGISTER_SPEC(WarpSelectRank);
CUDALINGS_REGISTER_SPEC(WarpSegmentCenter);
