// Checks of lesson 02 (reduce): *out = in[0] + ... + in[n - 1].
//
// Float addition is not associative, so every order of additions (each step of the lesson uses a
// different one) gives a slightly different, equally valid answer. The expected value is the sum
// in double precision, computed on the device; the learner's float result must lie within
// 2·√n·ε·Σ|x| of it (ε = 2^-23, Σ|x| the sum of the magnitudes, also in double). The √n is how
// the rounding errors of a sum of n terms grow when they do not all lean the same way; the
// factor 2 leaves room for orders far from a balanced tree.
//
// A result of 0 or NaN never passes: every distribution used here has |sum| > Σ|x| / 17 by
// construction, at least 8 tolerances for every n up to 2^28 (checked for every case), and a
// NaN is never within any tolerance.
#include <cmath>
#include <stdexcept>

#include "kit.h"
#include "reduce.cuh"

namespace {

using namespace kit;

constexpr double kEpsilon = 1.1920928955078125e-07;  // 2^-23, float's relative precision
constexpr double kMinMargin = 8.0;                   // |exact sum| >= this many tolerances

class ReduceSum : public Problem {
  public:
    static constexpr const char* kName = "reduce_sum";
    static constexpr const char* kSymbol = "reduce_sum";
    // A single element, a warp and its neighbours, a block (256) and two blocks' worth (512) and
    // their neighbours, non-multiples of 4 (the float4 tail), the sizes where the passes of
    // steps 1-6 need a third level (65536 = 256^2, 262144 = 512^2), the largest grids, and the
    // timed size. Each distribution appears small and large.
    static std::vector<Case> cases() {
        const Dist o = dist::offset_scale, p = dist::alternating_pairs, e = dist::all_equal,
                   h = dist::huge_one_sign;
        const u64 k20 = u64{1} << 20, k24 = u64{1} << 24;
        // clang-format off
        return table({{1, o}, {2, p}, {3, e}, {31, h}, {32, p}, {33, o}, {255, e}, {256, p},
                      {257, o}, {511, h}, {512, e}, {513, p}, {1000, o}, {1025, e}, {4099, p},
                      {65536, o}, {65537, h}, {262145, e}, {k20 + 3, p}, {k24 - 1, e}, {k24, h},
                      {kTimedSize - 3, p}, {kTimedSize, o}});
        // clang-format on
    }
    static std::vector<Case> timed() { return {Case::of(kTimedSize, dist::offset_scale)}; }

    ReduceSum(const Case& c, const Setup& s)
        : Problem(c, s),
          in_(*this, "in", n(), c.dist),
          out_(*this, "out[0]", 1),
          workspace_(*this, "the workspace", reduce_workspace_bytes(n())) {
        out_.on_overrun("Only thread 0 of the last pass should write, and only out[0].");
        workspace_.on_overrun(
            "More partial sums were written than the workspace holds, or at the wrong place: "
            "size the grid so that it fits in workspace_bytes.");
    }
    cudaError_t call(void* fn, Side side) override {
        return entry<decltype(&reduce_sum)>(fn)(in_, n(), out_.at(side), workspace_.at(side),
                                                workspace_.bytes(), stream());
    }
    void expect() override {
        exact_ = sum_in_double(in_, n(), stream());
        if (!(std::fabs(exact_.sum) >= kMinMargin * bound()))
            throw std::runtime_error("reduce_sum: generated data for " + test().label() +
                                     " has a sum too close to 0 for a meaningful check");
    }
    Outcome judge() override {
        return judge_sum(
            out_.get(), exact_, bound(), n(),
            "a float sum depends on the order of its additions (each one rounds), so any order "
            "is accepted within 2·√n·ε·Σ|x| of the exact sum (computed in double precision), "
            "where ε = 2^-23 ≈ 1.19e-7 and Σ|x| is the sum of the magnitudes: here ±" +
                format_number(bound()) + ", a relative error of " +
                format_number(exact_.sum != 0 ? bound() / std::fabs(exact_.sum) : 0) +
                " of the exact sum");
    }
    Traffic traffic() const override { return Traffic().read<float>(n()).write<float>(1); }

  private:
    double bound() const {
        return 2.0 * std::sqrt(static_cast<double>(n())) * kEpsilon * exact_.sum_abs;
    }
    Input<float> in_;
    Output<float> out_;
    Workspace workspace_;
    SumStats exact_;
};
CUDALINGS_PROBLEM(ReduceSum);

}  // namespace
