// Checks of lesson 90 (saxpy): out[i] = a * x[i] + y[i], for a few values of a.
//
// A product and a sum round twice, or once when the compiler fuses them (an FMA): each element
// is accepted within 2^-23 · (|a·x[i]| + |y[i]|) of the exact value, which covers both roundings,
// while a missing term or a wrong index is far larger.
#include <cmath>

#include "kit.h"
#include "saxpy.cuh"

namespace {

using namespace kit;

struct Saxpy {  // what out[i] must be
    const float* x;
    const float* y;
    double a;
    __host__ __device__ Want operator()(u64 i) const {
        const double ax = a * x[i];
        return Want::near(ax + y[i], (fabs(ax) + fabs(static_cast<double>(y[i]))) / 8388608.0);
    }
};

class SaxpyProblem : public Problem {
  public:
    static constexpr const char* kName = "saxpy";
    static constexpr const char* kSymbol = "saxpy";
    static std::vector<Case> cases() {
        std::vector<Case> cases = ladder({dist::uniform, dist::wide});
        for (std::size_t k = 0; k < cases.size(); ++k) {
            const float a = k % 3 == 0 ? 2.0f : k % 3 == 1 ? -0.5f : 3.25f;
            cases[k].with("a", a, "a = " + format_number(a));
        }
        return cases;
    }
    static std::vector<Case> timed() {
        return {Case::of(kTimedSize, dist::uniform).with("a", 2.0, "a = 2")};
    }
    SaxpyProblem(const Case& c, const Setup& s)
        : Problem(c, s),
          x_(*this, "x", n(), c.dist),
          y_(*this, "y", n(), c.dist),
          out_(*this, "the output", n()) {}
    cudaError_t call(void* fn, Side side) override {
        return entry<decltype(&saxpy)>(fn)(x_, y_, out_.at(side), n(), params().f32("a"), stream());
    }
    Outcome judge() override {
        return judge_values(compare(out_.get(), n(), Saxpy{x_, y_, params().number("a")}, stream()),
                            "|got - exact| <= 2^-23·(|a·x| + |y|): a product and a sum round at "
                            "most twice (once when fused)");
    }
    Traffic traffic() const override { return Traffic().read<float>(2.0 * n()).write<float>(n()); }

  private:
    Input<float> x_, y_;
    Output<float> out_;
};
CUDALINGS_PROBLEM(SaxpyProblem);

}  // namespace
