// Checks of lesson 10 (gemm): C = alpha·A·B + beta·C in fp32, row-major, leading dimensions
// equal to the widths. One entry point, every step.
//
// C is read and written (beta·C): it is no plain output. `Accumulator` below is an output
// buffer whose "poison" before each call is C's input values instead of NaN, generated like an
// input (counter-based from A's current seed, so every timed sample gets fresh values and the
// expected result can recompute them anywhere). The guard zones around it are the kit's.
//
// Expected values are computed while comparing, on the device, element by element: the exact
// sum Σp A(i,p)·B(p,j) in double (each product of two floats is exact in double; k <= 2^18
// additions in double lose nothing a float tolerance can see), together with Σp |A(i,p)·B(p,j)|
// for the bound. At 4096³ that is 2^36 double multiply-adds per comparison: a fraction of a
// second on an H100, paid once per timed sample, untimed.
//
// The tolerance (README, "How close is right"): |got - exact| <= 2^-24 · (g(k) + 3) ·
// (|alpha|·Σp|A(i,p)·B(p,j)| + |beta·C(i,j)|), with g(k) = min(k, 8·√k). A float sum of k
// products rounds k times, each rounding at most 2^-24 of the running sum: k·2^-24·Σ|terms| is
// the worst case (g = k, used for small k), and rounding errors of random sign grow like √k
// (8·√k: a margin of more than 10 standard deviations over the errors measured for fp32 sums
// of one-sign products, the least favourable inputs here). The +3 covers the roundings of
// alpha·sum, beta·C and their sum. A product left out, counted twice, or read from the wrong
// row or column is an error of the size of one term, |A·B| ~ Σ|terms| / k, which is larger
// than the bound for every k up to 2^18 (at k = 4096 the bound is 515·2^-24 ≈ 3·10^-5 of
// Σ|terms|, one term 2.4·10^-4 of it).
//
// Shapes (m × n × k): every one up to 2^16 + 3 elements of C runs under the emulator too, so
// those carry the edge cases with small k: 1×1×1, a single long dot product (1×1×1000), one row
// (1×33×31), one column (33×1×31), sides one below and one above the tiles of every step (31,
// 33, 127, 129, 255, 257), k not a multiple of 4 or of a slice (2, 3, 5, 9, 12, 31, 129, 1000), n
// multiple of 4 with m not (float4 rows of B and C with partial row tiles), full tiles
// (128×128×16). Every small case keeps m·n·k under 6·10^5: the emulator runs a few million
// multiply-adds a second. Larger (the GPU): 1000×1100×1000, tall and wide shapes with small n
// or m, k = 1, 2049×2047×4097, and the timed 4096³ and 16384×16384×256. Under the emulator the
// first large shape runs halved (2050×17×5), then whole (4099×17×5) for its values, then the
// rest for their launches only (every one over 2^20 + 1025 elements).
//
// Values: uniform in [-1, 1); small integers (the sums are exact: every order gives the same
// bits); many magnitudes with both signs (2^-20 .. 2^20); alternating signs (cancellation);
// offset one-sign values (sums that grow with k: the accumulation order shows most there).
#include <cmath>
#include <string>
#include <vector>

#include "gemm.cuh"
#include "kit.h"

namespace {

using namespace kit;

// ---------------------------------------------------------------- C's input values
// C's values before the call: uniform in [-1, 1), from a base derived from A's (A is
// regenerated with every seed; C follows it).
struct CValues {
    u64 base;
    __host__ __device__ float operator()(u64 i) const {
        return sample_float(dist::uniform, base, i);
    }
};
inline u64 c_base(u64 a_base) { return splitmix64(a_base ^ 0xc0ffee5eed5ull); }

__global__ void fill_c_kernel(float* c, u64 count, CValues values) {
    for (u64 i = blockIdx.x * u64{blockDim.x} + threadIdx.x; i < count;
         i += u64{gridDim.x} * blockDim.x)
        c[i] = values(i);
}

// An output that the step also reads: before every call (where the kit poisons outputs) it
// holds C's input values, both its own copy and the reference's spare one.
class Accumulator : public OutputBytes {
  public:
    Accumulator(Problem& owner, std::string name, u64 count, const Input<float>& a)
        : OutputBytes(owner, std::move(name), count, 4), a_(a) {}
    void poison(cudaStream_t s) override {
        fill_guards_only(s);
        for (Side side : {Side::Learner, Side::Reference}) {
            fill_c_kernel<<<grid_for(n_), 256, 0, s>>>(at(side), n_, values());
            DEV_CHECK(cudaGetLastError());
        }
    }
    CValues values() const { return CValues{c_base(a_.base())}; }
    float* get() const { return at(Side::Learner); }
    float* at(Side side) const { return reinterpret_cast<float*>(data(side)); }

  private:
    void fill_guards_only(cudaStream_t s) { mem_.fill_guards(s); }
    const Input<float>& a_;
};

// ---------------------------------------------------------------- what C must be
struct Gemm {
    const float* A;
    const float* B;
    CValues c0;
    u64 n, k;
    double alpha, beta, rel;                                    // rel: 2^-24·(g(k) + 3)
    bool with_alpha = true, with_beta = true, with_sum = true;  // diagnoses: a term left out
    __host__ __device__ Want operator()(u64 o) const {
        const u64 i = o / n, j = o % n;
        const float* a = A + i * k;
        const float* b = B + j;
        double sum = 0, mag = 0;
        for (u64 p = 0; p < k; ++p) {
            const double t = static_cast<double>(a[p]) * static_cast<double>(b[p * n]);
            sum += t;
            mag += fabs(t);
        }
        const double c = c0(o);
        const double al = with_alpha ? alpha : 1.0;
        const double be = with_beta ? beta : 0.0;
        const double s = with_sum ? sum : 0.0, sm = with_sum ? mag : 0.0;
        return Want::near(al * s + be * c, rel * (fabs(al) * sm + fabs(be * c)));
    }
};
struct Unchanged {  // C still holds its input values
    CValues c0;
    __host__ __device__ Want operator()(u64 o) const { return Want::exactly_as(c0(o)); }
};

double relative_bound(u64 k) {
    const double g = std::fmin(static_cast<double>(k), 8.0 * std::sqrt(static_cast<double>(k)));
    return std::ldexp(g + 3.0, -24);
}

std::string tolerance_text(u64 k) {
    return "|got - exact| <= 2^-24·(g(k) + 3)·(|alpha|·Σ|A(i,p)·B(p,j)| + |beta·C(i,j)|), g(k) = "
           "min(k, 8·√k) = " +
           format_number(relative_bound(k) * 16777216.0 - 3.0, 4) +
           " here: k float roundings of the running sum, whose errors grow like √k (k for small "
           "k), plus the roundings of alpha·sum + beta·C";
}

// ---------------------------------------------------------------- cases
struct Scalars {
    double alpha, beta;
};
constexpr Scalars kScalars[] = {{1.5, -0.5}, {-1.0, 2.0}, {0.75, 0.25}, {2.0, -1.25}};

class GemmProblem : public Problem {
  public:
    static constexpr const char* kName = "gemm";
    static constexpr const char* kSymbol = "gemm";

    static Case make(u64 m, u64 n, u64 k, Dist d, int scalars) {
        const Scalars s = kScalars[scalars % 4];
        Case c = Case::of(Shape::grid(m, n), d);
        c.with("k", static_cast<double>(k), "k = " + format_size(k));
        c.with("alpha", s.alpha, "alpha = " + format_number(s.alpha));
        c.with("beta", s.beta, "beta = " + format_number(s.beta));
        return c;
    }
    static std::vector<Case> cases() {
        std::vector<Case> out;
        int next = 0;
        auto add = [&](u64 m, u64 n, u64 k, Dist d) { out.push_back(make(m, n, k, d, next++)); };
        // small (the emulator runs every one): edges of every step's tiles, with small k
        add(1, 1, 1, dist::uniform);
        add(1, 1, 1000, dist::offset_scale);  // one long dot product
        add(2, 2, 2, dist::small_integers);
        add(1, 33, 31, dist::uniform);  // one row
        add(33, 1, 31, dist::wide);     // one column
        add(31, 33, 2, dist::uniform);
        add(33, 31, 129, dist::alternating);
        add(127, 129, 12, dist::uniform);
        add(129, 127, 5, dist::small_integers);
        add(128, 128, 16, dist::uniform);  // full tiles everywhere
        add(2, 1000, 3, dist::uniform);
        add(1000, 2, 5, dist::wide);
        add(64, 256, 4, dist::uniform);        // every row float4-aligned
        add(3, 33, 1000, dist::offset_scale);  // long sums of one sign
        add(129, 129, 9, dist::wide);
        add(255, 257, 2, dist::uniform);
        add(33, 260, 36, dist::small_integers);  // n, k multiples of 4, m not
        // large (the GPU). Under emulation the first runs halved (2050×17×5), then again whole
        // for its values, as the largest case of up to 2^20 + 1025 elements of C: every other
        // large case has a k too long to emulate, so it has more elements than that (it runs
        // for its launches only)
        add(4099, 17, 5, dist::uniform);
        add(1000, 1100, 1000, dist::uniform);
        add(16384, 65, 2048, dist::offset_scale);
        add(65, 16384, 2048, dist::uniform);
        add(8192, 8192, 1, dist::wide);
        add(2049, 2047, 4097, dist::alternating);
        add(4096, 4096, 4096, dist::uniform);
        add(16384, 16384, 256, dist::uniform);
        return out;
    }
    static std::vector<Case> timed() {
        return {make(4096, 4096, 4096, dist::uniform, 0).timed_as("4096³"),
                make(16384, 16384, 256, dist::uniform, 0).timed_as("16384×16384×256")};
    }
    static Advice advice() {
        return {{"CRASH",
                 "If the launch itself failed (cudaErrorInvalidConfiguration or "
                 "cudaErrorLaunchOutOfResources), look at the block: more than 1024 threads, "
                 "more than 48 KiB of static shared memory, or more registers per thread than "
                 "the block size allows (__launch_bounds__ tells the compiler the block size)."},
                {"MEMORY_ERROR/guard zone",
                 "A write past C's end is an edge tile written without its bounds test: the "
                 "register tile of a thread can hang over C's last rows or columns."}};
    }

    GemmProblem(const Case& c, const Setup& s)
        : Problem(c, s),
          a_(*this, "A", rows() * depth(), c.dist),
          b_(*this, "B", depth() * cols(), c.dist),
          c_(*this, "C", rows() * cols(), a_) {
        c_.on_overrun(
            "C is m x n: every store needs row < m and column < n, including the stores of a "
            "thread's register tile and of a float4 that would cross the row's end.");
    }
    cudaError_t call(void* fn, Side side) override {
        return entry<decltype(&gemm)>(fn)(a_, b_, c_.at(side), rows(), cols(), depth(),
                                          params().f32("alpha"), params().f32("beta"), stream());
    }
    Outcome judge() override {
        Outcome o = judge_values(compare(c_.get(), n(), want(), stream()), tolerance_text(depth()));
        if (o.pass()) return o;
        const std::string known = diagnose();
        if (!known.empty()) {
            o.explain(known);
            return o;
        }
        o.explain(where(o.cmp));
        if (o.cmp.wrong < n()) o.explain(edges());
        return o;
    }
    // Reads A, B and C, writes C: the least any step must move. The work: a multiply and an add
    // per (row, column, k), 2mnk FP32 operations (alpha and beta's 3mn left out, as usual), so
    // the timings show the share of the GPU's FP32 rate and the arithmetic intensity.
    Traffic traffic() const override {
        return Traffic()
            .read<float>(static_cast<double>(rows()) * depth())
            .read<float>(static_cast<double>(depth()) * cols())
            .read<float>(static_cast<double>(n()))
            .write<float>(static_cast<double>(n()))
            .fp32(2.0 * static_cast<double>(n()) * static_cast<double>(depth()));
    }

  private:
    u64 rows() const { return shape().rows; }
    u64 cols() const { return shape().cols; }
    u64 depth() const { return static_cast<u64>(params().integer("k")); }

    Gemm want() const {
        return Gemm{a_,
                    b_,
                    c_.values(),
                    cols(),
                    depth(),
                    params().number("alpha"),
                    params().number("beta"),
                    relative_bound(depth())};
    }

    // Where the wrong elements are, as rows and columns of C.
    std::string where(const Comparison& cmp) const {
        const u64 r0 = cmp.first / cols(), r1 = cmp.last / cols();
        std::string s = "The wrong elements lie in rows " + std::to_string(r0) + " to " +
                        std::to_string(r1) + " of " + std::to_string(rows()) +
                        " (the first at column " + std::to_string(cmp.first % cols()) + ").";
        return s;
    }

    // What a wrong C most often is: a term of the formula missing.
    std::string diagnose() const {
        if (compare(c_.get(), n(), Unchanged{c_.values()}, stream()).wrong == 0)
            return "C still holds its input values: nothing was written.";
        Gemm no_sum = want();
        no_sum.with_sum = false;
        if (compare(c_.get(), n(), no_sum, stream()).wrong == 0)
            return "C holds beta·C alone: no product reached the sum (acc stayed 0).";
        Gemm no_beta = want();
        no_beta.with_beta = false;
        if (compare(c_.get(), n(), no_beta, stream()).wrong == 0)
            return "C holds alpha·A·B without beta·C: read C(i, j) before you overwrite it and "
                   "add beta times it.";
        Gemm no_alpha = want();
        no_alpha.with_alpha = false;
        if (compare(c_.get(), n(), no_alpha, stream()).wrong == 0)
            return "C holds A·B + beta·C: the sum of products is not multiplied by alpha.";
        return {};
    }

    // Some elements right, some wrong: the usual suspects for this shape.
    std::string edges() const {
        const u64 k = depth();
        std::string s;
        if (rows() != cols() || rows() != k)
            s += "This shape is not a cube: if the square shapes pass, an index uses m, n or k "
                 "in place of another (A is m x k with row length k, B is k x n with row length "
                 "n). ";
        if (k % 4 != 0 || cols() % 4 != 0)
            s += "Here k or n is not a multiple of 4: a float4 load of a row of A (or B) that "
                 "starts at an unaligned address or reads past the row's end needs the "
                 "single-float path. ";
        if (k > 8 && (k % 8 != 0 || k % 32 != 0))
            s += "k is not a multiple of the slice: the last slice must load zeros where p >= k "
                 "(and still reach both barriers).";
        return s;
    }

    Input<float> a_, b_;
    Accumulator c_;
};
CUDALINGS_PROBLEM(GemmProblem);

}  // namespace
