// Checks of lesson 12 (row-wise reductions): three entry points, softmax_rows (steps 1 to 4),
// layernorm_rows (step 5) and residual_rmsnorm_rows (step 6), on rows × cols matrices.
//
// Shapes cover one-element rows (cols = 1), widths around a warp (31, 32, 33), widths that are
// not multiples of 4 (the scalar path of a float4 kernel), a row as wide as a warp's registers
// (1024) and one past it, rows wider than a block holds in registers (32772, 2^16 + 1: re-read),
// many narrow rows (257 rows: a partial last block of 8 warp-rows), then large shapes on the GPU
// (the largest, 64 rows of 2^22, is the one the emulator runs smaller, for its values: few
// blocks, so it stays fast) and the timed shapes (2^28 elements at widths 128, 1024, 32768).
//
// Expected values are computed on the device in double: one thread per row gathers the row's
// statistics (softmax: max and Σ exp(x - max); LayerNorm: mean, variance by two passes, mean
// magnitude; RMSNorm: Σ s² of the float sums), then every element is judged on its own from
// them. Each tolerance is derived at the problem (u = 2^-24, float's unit roundoff; k = cols).
#include <cmath>
#include <memory>
#include <vector>

#include "kit.h"
#include "row_ops.cuh"

namespace {

using namespace kit;

constexpr double kU = 1.0 / 16777216.0;  // u = 2^-24
constexpr u64 kMi = u64{1} << 20;

Case grid_case(u64 rows, u64 cols, Dist d) { return Case::of(Shape::grid(rows, cols), d); }

// The timed shapes: 2^28 elements as rows of 128, 1024 and 32768.
std::vector<Case> timed_shapes() {
    std::vector<Case> out;
    for (u64 cols : {u64{128}, u64{1024}, u64{32768}})
        out.push_back(grid_case(kTimedSize / cols, cols, dist::uniform)
                          .timed_as("width " + std::to_string(cols)));
    return out;
}

// The shapes every problem runs, cycling through `dists`: small first (the emulator runs those),
// then the large ones.
std::vector<Case> row_ladder(const std::vector<Dist>& dists) {
    const std::pair<u64, u64> shapes[] = {
        {1, 1},       {5, 1},      {1, 2},      {3, 3},        {2, 31},      {4, 32},
        {3, 33},      {2, 100},    {3, 127},    {9, 128},      {2, 129},     {3, 255},
        {2, 1000},    {2, 1024},   {17, 64},    {1, 1025},     {2, 1028},    {1, 4097},
        {1, 8192},    {1, 12288},  {1, 32768},  {1, 32772},    {257, 33},    {201, 12},
        {1, 65537},   {3, kMi},    {100003, 12}, {kMi + 3, 4}, {4099, 1024}, {61, 32768},
        {kMi / 8, 256}, {64, u64{1} << 22}};
    std::vector<Case> out;
    for (const auto& [r, c] : shapes) out.push_back(grid_case(r, c, dists[out.size() % dists.size()]));
    return out;
}

// ---------------------------------------------------------------- per-row statistics
struct RowStats {
    double a = 0, b = 0, c = 0;  // softmax: max, Σ exp(x - max); LayerNorm: mean, var, mean|x|
};                               // RMSNorm: Σ s² / k

enum Kind : int { kSoftmax = 0, kLayerNorm = 1, kRms = 2 };

__global__ void row_stats_kernel(const float* x, const float* r, u64 rows, u64 cols, int kind,
                                 RowStats* out) {
    for (u64 row = blockIdx.x * u64{blockDim.x} + threadIdx.x; row < rows;
         row += u64{gridDim.x} * blockDim.x) {
        const float* v = x + row * cols;
        RowStats s;
        if (kind == kSoftmax) {
            double m = -INFINITY;
            for (u64 j = 0; j < cols; ++j) m = v[j] > m ? v[j] : m;
            double sum = 0;
            if (m != -INFINITY)
                for (u64 j = 0; j < cols; ++j) sum += exp(static_cast<double>(v[j]) - m);
            s = {m, sum, 0};
        } else if (kind == kLayerNorm) {
            double sum = 0, mag = 0;
            for (u64 j = 0; j < cols; ++j) {
                sum += v[j];
                mag += fabs(static_cast<double>(v[j]));
            }
            const double mean = sum / cols;
            double m2 = 0;
            for (u64 j = 0; j < cols; ++j) m2 += (v[j] - mean) * (v[j] - mean);
            s = {mean, m2 / cols, mag / cols};
        } else {
            const float* w = r + row * cols;
            double ss = 0;
            for (u64 j = 0; j < cols; ++j) {
                const double t = static_cast<double>(v[j] + w[j]);  // the float sum, as contracted
                ss += t * t;
            }
            s = {ss / cols, 0, 0};
        }
        out[row] = s;
    }
}

// What the problems share: the shape, the stats of each row, computed at expect().
class RowProblem : public Problem {
  public:
    RowProblem(const Case& c, const Setup& s, Kind kind)
        : Problem(c, s), kind_(kind), stats_(c.shape.rows) {}

  protected:
    u64 rows() const { return shape().rows; }
    u64 cols() const { return shape().cols; }
    void compute_stats(const float* x, const float* r) {
        row_stats_kernel<<<grid_for(rows(), 64), 64, 0, stream()>>>(x, r, rows(), cols(), kind_,
                                                                    stats_.get());
        DEV_CHECK(cudaGetLastError());
    }
    Kind kind_;
    dev::Array<RowStats> stats_;
};

// ---------------------------------------------------------------- softmax
// The input: a built-in distribution, with -inf entries by `mask`:
//   1: about one entry in four is -inf;
//   2: the same, and every row starts with -inf (the first two entries in odd rows);
//   3: as 2, and every third row (rows 1, 4, 7, ...) is -inf throughout.
struct MaskedGen {
    Dist dist;
    u64 cols;
    int mask;
    __host__ __device__ float operator()(u64 base, u64 i) const {
        const u64 row = i / cols, col = i % cols;
        const bool masked =
            (mask >= 1 && (element_hash(base ^ 0x3a5cull, i) & 3) == 0 && cols > 1) ||
            (mask >= 2 && (col == 0 || (col == 1 && (row & 1)))) || (mask == 3 && row % 3 == 1);
        return masked ? -INFINITY : sample_float(dist, base, i, cols);
    }
};

constexpr double kEps = 2 * kU;        // ε = 2^-23
constexpr double kTiny = 7.52316e-37;  // 2^-120: outputs this small may flush or underflow to 0

// y = exp(x - m) / S. Relative error allowed: ε·(k + 2|x - m| + 8). The float sum of k terms
// of one sign, in any order, is within (k - 1)·u relatively; x - m rounds once, which moves
// exp(x - m) by up to |x - m|·u relatively (and an exp2-based exp by as much again); expf,
// the division and the product add a few u. Summed that is under half of this bound. An all
// -inf row (m = -inf) must be exactly 0, a -inf entry within kTiny of 0.
struct SoftmaxWant {
    const float* x;
    const RowStats* st;
    u64 cols;
    __host__ __device__ Want operator()(u64 i) const {
        const RowStats& s = st[i / cols];
        if (s.a == -INFINITY) return Want::near(0.0, 0.0);
        const double d = static_cast<double>(x[i]) - s.a;  // <= 0, or -inf
        if (d == -INFINITY) return Want::near(0.0, kTiny);
        const double y = exp(d) / s.b;
        return Want::near(y, y * kEps * (static_cast<double>(cols) + 2 * fabs(d) + 8) + kTiny);
    }
};

class Softmax : public RowProblem {
  public:
    static constexpr const char* kName = "softmax";
    static constexpr const char* kSymbol = "softmax_rows";
    static std::vector<Case> cases() {
        std::vector<Case> out =
            row_ladder({dist::uniform, dist::large, dist::wide, dist::small_integers,
                        dist::all_equal, dist::uniform, dist::large});
        const char* texts[] = {"", "-inf entries", "rows start with -inf",
                               "some rows all -inf"};
        for (std::size_t k = 0; k < out.size(); ++k) {
            const int mask = k % 5 == 1 ? 1 : k % 5 == 3 ? 2 : k % 5 == 4 ? 3 : 0;
            if (mask && !(mask == 1 && out[k].shape.cols == 1))  // one element: never masked
                out[k].with("mask", mask, texts[mask]);
        }
        // One-element rows that are -inf, alone and among finite ones.
        out.insert(out.begin() + 2, grid_case(4, 1, dist::uniform).with("mask", 3, texts[3]));
        return out;
    }
    static std::vector<Case> timed() { return timed_shapes(); }
    Softmax(const Case& c, const Setup& s)
        : RowProblem(c, s, kSoftmax),
          x_(*this, "x", n(),
             MaskedGen{c.dist, c.shape.cols, static_cast<int>(c.params.number_or("mask", 0))}),
          y_(*this, "y", n()) {}
    void expect() override { compute_stats(x_, nullptr); }
    cudaError_t call(void* fn, Side side) override {
        return entry<decltype(&softmax_rows)>(fn)(x_, y_.at(side), rows(), cols(), stream());
    }
    Outcome judge() override {
        Outcome o = judge_values(
            compare(y_.get(), n(), SoftmaxWant{x_, stats_.get(), cols()}, stream()),
            "relative ε·(cols + 2·|x - max| + 8), ε = 2^-23, plus 2^-120 absolute: a float sum "
            "of cols positive terms in any order is within (cols - 1)·2^-24 of the exact sum, "
            "rounding x - max moves exp(x - max) by up to |x - max|·2^-24, and exp, the division "
            "and the product a few 2^-24 more; -inf entries must give 0, and a row that is all "
            "-inf gives exactly 0 by the contract");
        if (!o.pass() && (test().dist == dist::large || test().dist == dist::wide))
            o.explain("This row holds entries far above 88.7, where expf overflows to inf: "
                      "subtract the row's max before exp, so every exponent is <= 0.");
        if (!o.pass() && params().has("mask"))
            o.explain("This case has -inf entries: exp(-inf - m) = 0 is fine, but -inf - (-inf) "
                      "is NaN, so a running max that is still -inf must not rescale anything, and "
                      "a row that is all -inf must write zeros.");
        return o;
    }
    Traffic traffic() const override { return Traffic().read<float>(n()).write<float>(n()); }

  private:
    Input<float> x_;
    Output<float> y_;
};
CUDALINGS_PROBLEM(Softmax);

// ---------------------------------------------------------------- LayerNorm
// Values `offset` + uniform in [-1, 1): a mean far from 0 against a spread of 0.58, the case
// where σ² = E[x²] - E[x]² cancels catastrophically.
struct OffsetGen {
    float offset;
    __host__ __device__ float operator()(u64 base, u64 i) const {
        return offset + (2.0f * unit_float(element_hash(base, i)) - 1.0f);
    }
};
struct SourceGen {  // the case's distribution, or OffsetGen when the case has an offset
    Dist dist;
    u64 cols;
    float offset;
    __host__ __device__ float operator()(u64 base, u64 i) const {
        return offset != 0 ? OffsetGen{offset}(base, i) : sample_float(dist, base, i, cols);
    }
};

// y = x̂·γ + β, x̂ = (x - μ)·rstd, rstd = 1/sqrt(σ² + eps). With g = 2(k + 2)·u (twice the worst
// case of a float sum of k terms, then a division), the float mean is within g·mean|x| of μ,
// which moves x̂ by a = g·mean|x|·rstd; the variance, from deviations to that mean (Welford, or
// two passes), is within g relatively plus a², which moves x̂ by |x̂|·(g + a²)/2; rsqrt and the
// products add a few u. The bound is twice the sum. The naive E[x²] - E[x]² loses u·μ²/σ² of
// the variance instead: for the offset cases (μ = 4096, σ² = 1/3, up to 128 per row) that is
// 3 times the variance itself, where this bound allows under 6%.
struct LayerNormWant {
    const float* x;
    const float* gamma;
    const float* beta;
    const RowStats* st;
    u64 cols;
    double eps;
    __host__ __device__ Want operator()(u64 i) const {
        const RowStats& s = st[i / cols];
        const u64 j = i % cols;
        const double rstd = 1.0 / sqrt(s.b + eps), k = static_cast<double>(cols);
        const double xh = (x[i] - s.a) * rstd, g = gamma[j], b = beta[j];
        const double gg = 2 * (k + 2) * kU, a = gg * s.c * rstd;
        const double err = fabs(g) * (a + fabs(xh) * ((gg + a * a) / 2 + 4 * kU)) +
                           (fabs(g * xh) + fabs(b)) * 2 * kU;
        return Want::near(g * xh + b, 2 * err);
    }
};

class LayerNorm : public RowProblem {
  public:
    static constexpr const char* kName = "layernorm";
    static constexpr const char* kSymbol = "layernorm_rows";
    static std::vector<Case> cases() {
        std::vector<Case> out = row_ladder(
            {dist::uniform, dist::wide, dist::all_equal, dist::offset_scale, dist::small_integers});
        for (std::size_t k = 0; k < out.size(); ++k)
            out[k].with("eps", k % 3 == 2 ? 1e-2 : 1e-5, k % 3 == 2 ? "eps = 1e-2" : "eps = 1e-5");
        // Cancellation: mean 4096, spread 0.58 (the naive variance formula fails these).
        const std::pair<u64, u64> offset_shapes[] = {{3, 64}, {5, 100}, {2, 128}, {64, 128}};
        std::size_t at = 3;
        for (const auto& [r, c] : offset_shapes) {
            out.insert(out.begin() + at,
                       grid_case(r, c, dist::uniform)
                           .with("offset", 4096, "values 4096 ± 1")
                           .with("eps", 1e-5, "eps = 1e-5"));
            at += 4;
        }
        return out;
    }
    static std::vector<Case> timed() {
        std::vector<Case> out = timed_shapes();
        for (Case& c : out) c.with("eps", 1e-5, "eps = 1e-5");
        return out;
    }
    LayerNorm(const Case& c, const Setup& s)
        : RowProblem(c, s, kLayerNorm),
          x_(*this, "x", n(),
             SourceGen{c.dist, c.shape.cols, static_cast<float>(c.params.number_or("offset", 0))}),
          gamma_(*this, "gamma", c.shape.cols, dist::uniform),
          beta_(*this, "beta", c.shape.cols, dist::uniform),
          y_(*this, "y", n()) {}
    void expect() override { compute_stats(x_, nullptr); }
    cudaError_t call(void* fn, Side side) override {
        return entry<decltype(&layernorm_rows)>(fn)(x_, gamma_, beta_, y_.at(side), rows(), cols(),
                                                    eps(), stream());
    }
    Outcome judge() override {
        Outcome o = judge_values(
            compare(y_.get(), n(),
                    LayerNormWant{x_, gamma_, beta_, stats_.get(), cols(), eps()}, stream()),
            "|y - exact| <= 2·(|γ|·(a + |x̂|·((g + a²)/2 + 4u)) + 2u·(|γ·x̂| + |β|)), u = 2^-24, "
            "g = 2·(cols + 2)·u (twice a float sum's worst case), a = g·mean|x|·rstd: the error "
            "a float mean in any order carries into x̂, and what it and the variance's rounding "
            "do to the scale");
        if (!o.pass() && params().has("offset"))
            o.explain("The values are 4096 ± 1: E[x²] - E[x]² subtracts two numbers near 1.7e7, "
                      "where floats are 1 or 2 apart, to find a variance of 0.33. Use Welford's "
                      "update (or deviations from the mean), never the sum of squares.");
        return o;
    }
    Traffic traffic() const override {
        return Traffic().read<float>(n() + 2.0 * cols()).write<float>(n());
    }

  private:
    float eps() const { return params().f32("eps"); }
    Input<float> x_, gamma_, beta_;
    Output<float> y_;
};
CUDALINGS_PROBLEM(LayerNorm);

// ---------------------------------------------------------------- residual + RMSNorm
// sum must be exactly the float x + r. y = s·rstd·w, rstd = 1/sqrt(Σs²/k + eps): Σs² has k
// terms of one sign (within (k - 1)·u in any order), the division, the addition of eps and
// rsqrt a few u, and the two products two more; as a factor of |y| that is under
// (k + 8)·u / 2 + 6u. The bound is twice that, plus 2^-120.
struct SumWant {
    const float* x;
    const float* r;
    __host__ __device__ Want operator()(u64 i) const { return Want::exactly_as(x[i] + r[i]); }
};
struct RmsWant {
    const float* x;
    const float* r;
    const float* w;
    const RowStats* st;
    u64 cols;
    double eps;
    __host__ __device__ Want operator()(u64 i) const {
        const double s = static_cast<double>(x[i] + r[i]);
        const double y = s / sqrt(st[i / cols].a + eps) * w[i % cols];
        const double k = static_cast<double>(cols);
        return Want::near(y, 2 * fabs(y) * ((k + 8) * kU / 2 + 6 * kU) + kTiny);
    }
};

class ResidualRmsNorm : public RowProblem {
  public:
    static constexpr const char* kName = "residual_rmsnorm";
    static constexpr const char* kSymbol = "residual_rmsnorm_rows";
    static std::vector<Case> cases() {
        std::vector<Case> out =
            row_ladder({dist::uniform, dist::wide, dist::offset_scale, dist::small_integers,
                        dist::all_equal});
        for (std::size_t k = 0; k < out.size(); ++k)
            out[k].with("eps", k % 3 == 2 ? 1e-2 : 1e-6, k % 3 == 2 ? "eps = 1e-2" : "eps = 1e-6");
        return out;
    }
    static std::vector<Case> timed() {
        std::vector<Case> out = timed_shapes();
        for (Case& c : out) c.with("eps", 1e-6, "eps = 1e-6");
        return out;
    }
    ResidualRmsNorm(const Case& c, const Setup& s)
        : RowProblem(c, s, kRms),
          x_(*this, "x", n(), c.dist),
          r_(*this, "residual", n(), c.dist),
          w_(*this, "weight", c.shape.cols, dist::uniform),
          y_(*this, "y", n()),
          sum_(*this, "sum", n()) {}
    void expect() override { compute_stats(x_, r_); }
    cudaError_t call(void* fn, Side side) override {
        return entry<decltype(&residual_rmsnorm_rows)>(fn)(x_, r_, w_, y_.at(side), sum_.at(side),
                                                           rows(), cols(), eps(), stream());
    }
    Outcome judge() override {
        Outcome o = judge_parts(
            {{"sum", compare(sum_.get(), n(), SumWant{x_, r_}, stream()),
              "exact: the float x + residual, one rounding"},
             {"y",
              compare(y_.get(), n(), RmsWant{x_, r_, w_, stats_.get(), cols(), eps()}, stream()),
              "relative 2·((cols + 8)·2^-24/2 + 6·2^-24), plus 2^-120: Σ s² of cols terms of one "
              "sign in any order, then the mean, eps, rsqrt and two products"}});
        if (!o.pass() && o.reason.find("sum") != std::string::npos)
            o.explain("`sum` is the new residual stream the next layer reads: write x + residual "
                      "to it, from the same registers that feed the norm.");
        return o;
    }
    Traffic traffic() const override {
        return Traffic().read<float>(2.0 * n() + cols()).write<float>(2.0 * n());
    }

  private:
    float eps() const { return params().f32("eps"); }
    Input<float> x_, r_, w_;
    Output<float> y_, sum_;
};
CUDALINGS_PROBLEM(ResidualRmsNorm);

}  // namespace
