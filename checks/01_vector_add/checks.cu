// Checks of lesson 01 (vector add): c[i] = a[i] + b[i].
//
// One float addition is correctly rounded (IEEE 754), so each element has exactly one right
// answer and the comparison is bit-exact. The expected element is computed while comparing, from
// the two inputs, in double precision and rounded once: that same answer.
#include "kit.h"
#include "vector_add.cuh"

namespace {

using namespace kit;

struct Sum {  // what c[i] must be
    const float* a;
    const float* b;
    __host__ __device__ Want operator()(u64 i) const {
        return Want::exactly_as(static_cast<float>(static_cast<double>(a[i]) + b[i]));
    }
};

class VectorAdd : public Problem {
  public:
    static constexpr const char* kName = "vector_add";
    static constexpr const char* kSymbol = "vector_add";
    static constexpr bool kSampledValues = true;  // c[i] from a[i] and b[i] alone
    static std::vector<Case> cases() { return ladder({dist::uniform, dist::wide, dist::large}); }
    static std::vector<Case> timed() { return {Case::of(kTimedSize, dist::uniform)}; }

    VectorAdd(const Case& c, const Setup& s)
        : Problem(c, s),
          a_(*this, "a", n(), c.dist),
          b_(*this, "b", n(), c.dist),
          c_(*this, "the output", n()) {}
    cudaError_t call(void* fn, Side side) override {
        return entry<decltype(&vector_add)>(fn)(a_, b_, c_.at(side), n(), stream());
    }
    Outcome judge() override {
        return judge_values(compare(c_.get(), n(), Sum{a_, b_}, stream()),
                            "bit-exact: one float addition is correctly rounded, so each element "
                            "has exactly one right answer");
    }
    Traffic traffic() const override { return Traffic().read<float>(2.0 * n()).write<float>(n()); }

  private:
    Input<float> a_, b_;
    Output<float> c_;
};
CUDALINGS_PROBLEM(VectorAdd);

}  // namespace
