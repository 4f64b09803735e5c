// Spec for lesson 01 (vector add): c[i] = a[i] + b[i].
//
// One float addition is correctly rounded (IEEE 754), so there is exactly one right answer
// per element and the comparison is bit-exact. The expected output is computed on the
// device in double precision and rounded once, which gives that same answer.
#include "../runner/harness.h"
#include "../runner/spec.h"

namespace {

using Fn = cudaError_t (*)(const float*, const float*, float*, size_t, cudaStream_t);

__global__ void expected_kernel(const float* a, const float* b, float* c, std::uint64_t n) {
    for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < n;
         i += std::uint64_t{gridDim.x} * blockDim.x)
        c[i] = static_cast<float>(static_cast<double>(a[i]) + static_cast<double>(b[i]));
}

harness::Tolerance tolerance() {
    harness::Tolerance t;
    t.exact = true;
    t.why =
        "bit-exact: one float addition is correctly rounded, so each element has exactly "
        "one right answer";
    return t;
}

void expected(const harness::Input& a, const harness::Input& b, float* out, cudaStream_t s) {
    expected_kernel<<<4096, 256, 0, s>>>(a.get(), b.get(), out, a.size());
    DEV_CHECK(cudaGetLastError());
}

class Timed : public runner::TimedRun {
  public:
    Timed(cudaStream_t s, Fn fn, Fn ref, std::uint64_t seed, std::uint64_t size)
        : fn_(fn),
          ref_(ref),
          a_(size, harness::Dist::Uniform, seed, 0, s),
          b_(size, harness::Dist::Uniform, seed, 1, s),
          out_(size),
          ref_out_(size),
          expected_(size) {
        n = size;
        bytes = 12.0 * static_cast<double>(size);  // read a and b, write c
        expected(a_, b_, expected_.get(), s);
        out_.poison(s);
    }
    cudaError_t learner(cudaStream_t s) override {
        return fn_(a_.get(), b_.get(), out_.get(), n, s);
    }
    cudaError_t reference(cudaStream_t s) override {
        return ref_(a_.get(), b_.get(), ref_out_.get(), n, s);
    }
    bool refresh(cudaStream_t s, std::uint64_t seed) override {
        a_.regenerate(seed, 0, s);
        b_.regenerate(seed, 1, s);
        expected(a_, b_, expected_.get(), s);
        out_.poison(s);
        return true;
    }
    harness::CaseOutcome verify_learner(cudaStream_t s) override {
        auto t = tolerance();
        return harness::judge(out_.check_guards(s), a_.changed(s) + b_.changed(s),
                              harness::compare(out_.get(), expected_.get(), n, t, s), t);
    }

  private:
    Fn fn_, ref_;
    harness::Input a_, b_;
    harness::Output<float> out_;
    dev::Array<float> ref_out_, expected_;
};

class VectorAdd : public runner::Spec {
  public:
    const char* name() const override { return "vector_add"; }
    const char* symbol() const override { return "vector_add"; }
    std::vector<harness::CaseDef> cases() const override {
        using harness::Dist;
        return harness::ladder({Dist::Uniform, Dist::Wide, Dist::Large});
    }
    harness::CaseOutcome run_case(harness::Ctx& ctx, void* fn, const harness::CaseDef& c,
                                  std::uint64_t seed) override {
        cudaStream_t s = ctx.stream;
        harness::Input a(c.n, c.dist, seed, 0, s), b(c.n, c.dist, seed, 1, s);
        harness::Output<float> out(c.n);
        dev::Array<float> want(c.n);
        expected(a, b, want.get(), s);
        out.poison(s);
        dev::sync_device();
        ctx.call([&] { return reinterpret_cast<Fn>(fn)(a.get(), b.get(), out.get(), c.n, s); });
        auto t = tolerance();
        return harness::judge(out.check_guards(s), a.changed(s) + b.changed(s),
                              harness::compare(out.get(), want.get(), c.n, t, s), t);
    }
    std::unique_ptr<runner::TimedRun> prepare_timing(cudaStream_t s, void* fn, void* reference,
                                                     std::uint64_t seed) override {
        return std::make_unique<Timed>(s, reinterpret_cast<Fn>(fn), reinterpret_cast<Fn>(reference),
                                       seed, std::uint64_t{1} << 28);
    }
};

}  // namespace

CUDALINGS_REGISTER_SPEC(VectorAdd);
