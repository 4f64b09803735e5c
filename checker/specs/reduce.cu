// Spec for lesson 02 (reduce): *out = in[0] + ... + in[n - 1].
//
// Float addition is not associative, so every order of additions (each step of the lesson
// uses a different one) gives a slightly different, equally valid answer. The expected value
// is the sum computed in double precision on the device; the learner's float result must lie
// within 2·√n·ε·Σ|x| of it (ε = 2^-23, Σ|x| the sum of the magnitudes, also in double). The
// √n is how the rounding errors of a sum of n terms grow when they do not all lean the same
// way; the factor 2 leaves room for orders that are far from a balanced tree.
//
// A result of 0 or NaN never passes: every distribution used here has |sum| > Σ|x| / 17 by
// construction, which is at least 8 tolerances for every n up to 2^28 (the spec checks it),
// and a NaN is never within any tolerance.
//
// Besides the lesson's steps, the spec provides the "cub" baseline: cub::DeviceReduce::Sum
// on the same input, timed the same way, for the lesson's staircase.
#ifndef CUDALINGS_EMULATOR  // the CPU emulator runs the steps; CUB needs a real GPU
#include <cub/cub.cuh>
#endif

#include <cmath>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>

#include "../../lessons/02_reduce/reduce.cuh"
#include "../core/cases.h"
#include "../runner/harness.h"
#include "../runner/spec.h"

namespace {

// The type of every step's reduce_sum, from the lesson's own header: the two sides agree.
using Fn = decltype(&reduce_sum);

constexpr double kEpsilon = 1.1920928955078125e-07;  // 2^-23, float's relative precision
constexpr double kSafety = 2.0;
constexpr double kMinMargin = 8.0;  // |exact sum| >= this many tolerances in every case

double tolerance_of(std::uint64_t n, const harness::SumStats& st) {
    return kSafety * std::sqrt(static_cast<double>(n)) * kEpsilon * st.sum_abs;
}

harness::Tolerance tolerance(std::uint64_t n, const harness::SumStats& st) {
    harness::Tolerance t;
    t.exact = false;
    t.rel = 0;
    t.abs = tolerance_of(n, st);
    t.why =
        "a float sum depends on the order of its additions (each one rounds), so any order "
        "is accepted within 2·√n·ε·Σ|x| of the exact sum (computed in double precision), "
        "where ε = 2^-23 ≈ 1.19e-7 and Σ|x| is the sum of the magnitudes: here ±" +
        cudalings::format_number(t.abs) + ", a relative error of " +
        cudalings::format_number(st.sum != 0 ? t.abs / std::fabs(st.sum) : 0) + " of the exact sum";
    return t;
}

// Every case's data must make a wrong-but-plausible answer (0, NaN) fail by a wide margin.
void require_margin(std::uint64_t n, const harness::SumStats& st) {
    if (!(std::fabs(st.sum) >= kMinMargin * tolerance_of(n, st)))
        throw std::runtime_error("reduce spec: generated data for n=" + cudalings::format_size(n) +
                                 " has a sum too close to 0 for a meaningful check");
}

float read_scalar(const float* device_value) {
    float v;
    dev::copy_to_host(&v, device_value, sizeof v);
    return v;
}

// What a wrong sum most likely means, in a sentence or two.
std::string explain(float got, const harness::SumStats& st, double tol, std::uint64_t n) {
    std::uint32_t bits;
    std::memcpy(&bits, &got, sizeof bits);
    if (bits == harness::kPoisonBits)
        return "out[0] still holds the NaN the checker put there: nothing wrote the result. "
               "Does thread 0 of each block write its block's sum, and does the last pass write "
               "to out rather than to the workspace?";
    if (std::isnan(got))
        return "The result is NaN, but not the checker's marker: a NaN got into the sum. The "
               "workspace is filled with NaN before every call, and shared memory holds "
               "garbage: is something read before it is written (a slot no thread filled, a "
               "partial sum of a block that does not exist, a read past the values of a pass)?";
    if (std::isinf(got))
        return "The result is infinite: values from outside the input (garbage) were added.";
    if (got == 0.0f)
        return "The result is exactly 0: no element reached the sum. Are the elements loaded at "
               "all (for a small n: the tail)? Is the block's sum complete before thread 0 "
               "writes it?";
    std::string s = "Off by " + cudalings::format_number(std::fabs(got - st.sum)) + ", that is " +
                    cudalings::format_number(std::fabs(got - st.sum) / tol) +
                    " times the tolerance.";
    // With inputs of one sign the ratio says how much of the input was counted.
    if (std::fabs(st.sum) >= 0.999 * st.sum_abs) {
        double ratio = got / st.sum;
        if (ratio > 0 && ratio < 1) {
            double missing = (1 - ratio) * static_cast<double>(n);
            s += " Your sum is " + cudalings::format_number(100 * ratio) +
                 "% of the exact one: about " + cudalings::format_number(std::round(missing)) +
                 " of the " + std::to_string(n) +
                 " elements are never added (the elements past the last whole block? the "
                 "last, partial block? a pass that stops early?).";
        } else if (ratio > 1) {
            s += " Your sum is " + cudalings::format_number(ratio) +
                 " times the exact one: some elements are added more than once (do two "
                 "threads or two blocks read the same elements?).";
        } else if (ratio < 0) {
            s += " Your sum has the wrong sign.";
        }
    }
    return s;
}

// Guards (output, then workspace), then the input, then the value.
harness::CaseOutcome judge_sum(const harness::Output<float>& out,
                               const harness::Output<float>* workspace, const harness::Input& in,
                               const harness::SumStats& st, cudaStream_t s) {
    const std::uint64_t n = in.size();
    const harness::Tolerance t = tolerance(n, st);
    harness::ScalarJudging how;
    how.output_name = "out[0]";
    how.output_advice = "only thread 0 of the last pass should write, and only out[0].";
    how.workspace_advice =
        "more partial sums were written than the workspace holds, or at the wrong place. Size "
        "the grid so it fits in workspace_bytes.";
    how.explain = [&](const harness::Comparison&) {
        return explain(read_scalar(out.get()), st, t.abs, n);
    };
    return harness::judge_scalar(out, workspace, in, st.sum, t, how, s);
}

// The input every timed call sums (the learner's, the reference's and CUB's alike).
constexpr harness::Dist kTimedDist = harness::Dist::OffsetScale;

class Timed : public runner::TimedRun {
  public:
    Timed(cudaStream_t s, Fn fn, Fn ref, std::uint64_t seed, std::uint64_t size)
        : fn_(fn),
          ref_(ref),
          in_(size, kTimedDist, seed, 0, s),
          workspace_bytes_(reduce_workspace_bytes(size)),
          out_(1),
          ref_out_(1),
          workspace_(workspace_bytes_ / sizeof(float)),
          ref_workspace_(workspace_bytes_ / sizeof(float)) {
        n = size;
        bytes = 4.0 * static_cast<double>(size) + 4.0;  // read every float once, write one
        stats_ = harness::sum_in_double(in_.get(), size, s);
        require_margin(size, stats_);
        out_.poison(s);
        workspace_.poison(s);
        ref_out_.poison(s);
        ref_workspace_.poison(s);
    }
    cudaError_t learner(cudaStream_t s) override {
        return fn_(in_.get(), n, out_.get(), workspace_.get(), workspace_bytes_, s);
    }
    cudaError_t reference(cudaStream_t s) override {
        return ref_(in_.get(), n, ref_out_.get(), ref_workspace_.get(), workspace_bytes_, s);
    }
    // Fresh input, its exact sum, and the output and workspace poisoned again.
    bool refresh(cudaStream_t s, std::uint64_t seed) override {
        in_.regenerate(seed, 0, s);
        stats_ = harness::sum_in_double(in_.get(), n, s);
        require_margin(n, stats_);
        out_.poison(s);
        workspace_.poison(s);
        return true;
    }
    harness::CaseOutcome verify_learner(cudaStream_t s) override {
        return judge_sum(out_, &workspace_, in_, stats_, s);
    }

  private:
    Fn fn_, ref_;
    harness::Input in_;
    std::size_t workspace_bytes_;
    harness::Output<float> out_, ref_out_, workspace_, ref_workspace_;
    harness::SumStats stats_;
};

#ifndef CUDALINGS_EMULATOR
// cub::DeviceReduce::Sum with its temporary storage allocated once, outside the timed calls.
class CubTimed : public runner::TimedRun {
  public:
    CubTimed(cudaStream_t s, std::uint64_t seed, std::uint64_t size)
        : in_(size, kTimedDist, seed, 0, s), out_(1) {
        n = size;
        bytes = 4.0 * static_cast<double>(size) + 4.0;
        stats_ = harness::sum_in_double(in_.get(), size, s);
        require_margin(size, stats_);
        // int items: the 32-bit offsets of the usual call (n <= 2^28 here).
        DEV_CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes_, in_.get(), out_.get(),
                                         static_cast<int>(size), s));
        temp_ = std::make_unique<dev::Array<unsigned char>>(temp_bytes_);
        out_.poison(s);
    }
    cudaError_t learner(cudaStream_t s) override {
        return cub::DeviceReduce::Sum(temp_->get(), temp_bytes_, in_.get(), out_.get(),
                                      static_cast<int>(n), s);
    }
    cudaError_t reference(cudaStream_t) override { return cudaSuccess; }  // not used
    bool refresh(cudaStream_t s, std::uint64_t seed) override {
        in_.regenerate(seed, 0, s);
        stats_ = harness::sum_in_double(in_.get(), n, s);
        require_margin(n, stats_);
        out_.poison(s);
        return true;
    }
    harness::CaseOutcome verify_learner(cudaStream_t s) override {
        return judge_sum(out_, nullptr, in_, stats_, s);
    }

  private:
    harness::Input in_;
    harness::Output<float> out_;
    harness::SumStats stats_;
    std::size_t temp_bytes_ = 0;
    std::unique_ptr<dev::Array<unsigned char>> temp_;
};

#endif  // CUDALINGS_EMULATOR

class Reduce : public runner::Spec {
  public:
    const char* name() const override { return "reduce"; }
    const char* symbol() const override { return "reduce_sum"; }

    std::vector<harness::CaseDef> cases() const override {
        using harness::Dist;
        constexpr std::uint64_t k20 = std::uint64_t{1} << 20, k24 = std::uint64_t{1} << 24,
                                k28 = std::uint64_t{1} << 28;
        // Sizes: a single element, a warp and its neighbours, a block (256) and two blocks'
        // worth (512) and their neighbours, non-multiples of 4 (the float4 tail), the sizes
        // where the passes of steps 1-6 need a third level (65536 = 256^2, 262144 = 512^2),
        // the largest grids, and the timed size. Each distribution appears small and large.
        const struct {
            std::uint64_t n;
            Dist dist;
        } list[] = {
            {1, Dist::OffsetScale},
            {2, Dist::AlternatingPairs},
            {3, Dist::AllEqual},
            {31, Dist::HugeOneSign},
            {32, Dist::AlternatingPairs},
            {33, Dist::OffsetScale},
            {255, Dist::AllEqual},
            {256, Dist::AlternatingPairs},
            {257, Dist::OffsetScale},
            {511, Dist::HugeOneSign},
            {512, Dist::AllEqual},
            {513, Dist::AlternatingPairs},
            {1000, Dist::OffsetScale},
            {1025, Dist::AllEqual},
            {4099, Dist::AlternatingPairs},
            {65536, Dist::OffsetScale},
            {65537, Dist::HugeOneSign},
            {262145, Dist::AllEqual},
            {k20 + 3, Dist::AlternatingPairs},
            {k24 - 1, Dist::AllEqual},
            {k24, Dist::HugeOneSign},
            {k28 - 3, Dist::AlternatingPairs},
            {k28, Dist::OffsetScale},
        };
        std::vector<harness::CaseDef> cases;
        for (const auto& c : list) {
            harness::CaseDef d;
            d.n = c.n;
            d.dist = c.dist;
            d.name = "n=" + cudalings::format_size(c.n) + ", " + harness::describe(c.dist);
            cases.push_back(d);
        }
        return cases;
    }

    harness::CaseOutcome run_case(harness::Ctx& ctx, void* fn, const harness::CaseDef& c,
                                  std::uint64_t seed) override {
        cudaStream_t s = ctx.stream;
        harness::Input in(c.n, c.dist, seed, 0, s);
        const harness::SumStats st = harness::sum_in_double(in.get(), c.n, s);
        require_margin(c.n, st);
        const std::size_t workspace_bytes = reduce_workspace_bytes(c.n);
        harness::Output<float> out(1), workspace(workspace_bytes / sizeof(float));
        out.poison(s);
        workspace.poison(s);  // garbage (NaN) on entry, as the header promises
        dev::sync_device();
        ctx.call([&] {
            return reinterpret_cast<Fn>(fn)(in.get(), c.n, out.get(), workspace.get(),
                                            workspace_bytes, s);
        });
        return judge_sum(out, &workspace, in, st, s);
    }

    std::unique_ptr<runner::TimedRun> prepare_timing(cudaStream_t s, void* fn, void* reference,
                                                     std::uint64_t seed) override {
        return std::make_unique<Timed>(s, reinterpret_cast<Fn>(fn), reinterpret_cast<Fn>(reference),
                                       seed, cudalings::kTimedSize);
    }

#ifndef CUDALINGS_EMULATOR
    std::vector<runner::Baseline> baselines() const override {
        return {
            {"cub", [](cudaStream_t s, std::uint64_t seed) -> std::unique_ptr<runner::TimedRun> {
                 return std::make_unique<CubTimed>(s, seed, cudalings::kTimedSize);
             }}};
    }
#endif
};

}  // namespace

CUDALINGS_REGISTER_SPEC(Reduce);
