// Checks of lesson 03 (warp shuffles): five steps, five entry points, one problem each.
//
// Every step cuts the input into segments of `width` consecutive elements (32, or 8 and 16 in
// step 5); n may be any size >= 1, and when width does not divide n the last segment is partial.
// The sizes hold whole segments (32, 64, 96, 1024 + 32), partial ones (1, 31, 33, 255, 1000,
// 2^20 + 3) and large arrays.
//
// Expected values are computed while comparing, from the input: segment sums, means and prefix
// sums in double precision, counts and ranks exactly. A float sum depends on the order of its
// additions and every step may choose its own order, so sums are accepted within 32·ε·Σ|x|
// (ε = 2^-23, Σ|x| the sum of the magnitudes of the terms): adding up to 32 floats in any order
// makes at most 31 roundings of at most ε/2·Σ|x| each, so this is twice the worst case, while a
// missing, doubled or misplaced element is almost always far larger.
#include <cmath>
#include <memory>

#include "kit.h"
#include "warp_shuffle.cuh"

namespace {

using namespace kit;

constexpr double kSumBound = 32 * 1.1920928955078125e-07;  // 32·ε, per unit of Σ|x|

u64 segments_of(u64 n, u64 width) { return (n + width - 1) / width; }

// Sizes for 32-wide segments: a partial segment alone (1, 31), one and several whole segments
// (32, 64, 96: fewer than a warp-load of 4 in step 1's layout), whole plus partial (33, 255,
// 257, 1000), block-sized (256), 33 whole segments (1024 + 32), large with and without a partial
// segment, and the timed size; cycling through `dists`.
std::vector<Case> warp_ladder(const std::vector<Dist>& dists) {
    const u64 mi = u64{1} << 20;
    const u64 sizes[] = {1,   31,   32,        33,     64,      96,      255,       256,
                         257, 1000, 1024 + 32, mi + 3, mi + 96, 16 * mi, kTimedSize};
    std::vector<Case> out;
    for (std::size_t k = 0; k < sizeof sizes / sizeof sizes[0]; ++k)
        out.push_back(Case::of(sizes[k], dists[k % dists.size()]));
    return out;
}

const char* const kSumsWhy =
    "a float sum depends on the order of its additions, so each sum may differ from the exact "
    "one (computed in double) by up to 32·ε·Σ|x|, where ε = 2^-23 ≈ 1.19e-7 and Σ|x| is the sum "
    "of the magnitudes of the elements it adds: any order of up to 32 additions rounds at most "
    "31 times, by at most ε/2·Σ|x| each, so this is twice the worst case; a missing, doubled or "
    "misplaced element is far larger";

// What every step has: the input, the segments of `width` elements and, where the expected
// values need them, the segments' sums and magnitudes.
class SegmentProblem : public Problem {
  public:
    SegmentProblem(const Case& c, const Setup& s, u64 width, bool with_stats)
        : Problem(c, s), x_(*this, "in", n(), c.dist), width_(width) {
        if (with_stats) stats_ = std::make_unique<dev::Array<SegmentStats>>(segments());
    }
    void expect() override {
        if (stats_) segment_stats(x_, n(), width_, stats_->get(), stream());
    }

  protected:
    u64 segments() const { return segments_of(n(), width_); }
    const SegmentStats* stats() const { return stats_->get(); }
    Input<float> x_;
    u64 width_;
    std::unique_ptr<dev::Array<SegmentStats>> stats_;
};

// ---------------------------------------------------------------- step 1: sums[s]
struct SumOf {
    const SegmentStats* st;
    __host__ __device__ Want operator()(u64 s) const {
        return Want::near(st[s].sum, kSumBound * st[s].abs_sum);
    }
};

class SegmentSum : public SegmentProblem {
  public:
    static constexpr const char* kName = "segment_sum";
    static constexpr const char* kSymbol = "segment_sum";
    static std::vector<Case> cases() {
        return warp_ladder({dist::uniform, dist::wide, dist::small_integers, dist::large,
                            dist::alternating, dist::all_equal});
    }
    static std::vector<Case> timed() { return {Case::of(kTimedSize, dist::uniform)}; }
    SegmentSum(const Case& c, const Setup& s)
        : SegmentProblem(c, s, 32, true), sums_(*this, "sums", segments()) {}
    cudaError_t call(void* fn, Side side) override {
        return entry<decltype(&segment_sum)>(fn)(x_, sums_.at(side), n(), stream());
    }
    Outcome judge() override {
        return judge_values(compare(sums_.get(), segments(), SumOf{stats()}, stream()), kSumsWhy,
                            "sums");
    }
    Traffic traffic() const override { return Traffic().read<float>(n()).write<float>(segments()); }

  private:
    Output<float> sums_;
};
CUDALINGS_PROBLEM(SegmentSum);

// ---------------------------------------------------------------- step 2: out[i] = in[i] / sum
struct Normalized {
    const float* x;
    const SegmentStats* st;
    __host__ __device__ Want operator()(u64 i) const {
        const double v = x[i] / st[i / 32].sum;
        return Want::near(v, kSumBound * fabs(v));
    }
};

class SegmentNormalize : public SegmentProblem {
  public:
    static constexpr const char* kName = "segment_normalize";
    static constexpr const char* kSymbol = "segment_normalize";
    // Positive weights: a segment's sum is never zero and never cancels.
    static std::vector<Case> cases() { return warp_ladder({dist::positive, dist::all_equal}); }
    static std::vector<Case> timed() { return {Case::of(kTimedSize, dist::positive)}; }
    SegmentNormalize(const Case& c, const Setup& s)
        : SegmentProblem(c, s, 32, true), out_(*this, "the output", n()) {}
    cudaError_t call(void* fn, Side side) override {
        return entry<decltype(&segment_normalize)>(fn)(x_, out_.at(side), n(), stream());
    }
    Outcome judge() override {
        return judge_values(
            compare(out_.get(), n(), Normalized{x_, stats()}, stream()),
            "relative 32·ε ≈ 3.8e-6 (ε = 2^-23): the inputs are positive, so a segment's float "
            "sum, in any order, is within 31·ε/2 of the exact sum, relatively, and the division "
            "adds ε/2 more; this is twice that. An element divided by a partial sum, or by "
            "another segment's sum, is off by far more");
    }
    Traffic traffic() const override { return Traffic().read<float>(n()).write<float>(n()); }

  private:
    Output<float> out_;
};
CUDALINGS_PROBLEM(SegmentNormalize);

// ---------------------------------------------------------------- step 3: inclusive scans
struct SegmentPrefix {  // walked along each segment
    const float* x;
    static constexpr u64 kRun = 32;
    struct State {
        double sum = 0, magnitude = 0;
    };
    __host__ __device__ State start(u64) const { return {}; }
    __host__ __device__ Want next(State& st, u64 i) const {
        st.sum += x[i];
        st.magnitude += fabs(static_cast<double>(x[i]));
        return Want::near(st.sum, kSumBound * st.magnitude);
    }
};

class SegmentScan : public SegmentProblem {
  public:
    static constexpr const char* kName = "segment_scan";
    static constexpr const char* kSymbol = "segment_scan";
    static std::vector<Case> cases() {
        return warp_ladder(
            {dist::uniform, dist::wide, dist::small_integers, dist::alternating, dist::large});
    }
    static std::vector<Case> timed() { return {Case::of(kTimedSize, dist::uniform)}; }
    SegmentScan(const Case& c, const Setup& s)
        : SegmentProblem(c, s, 32, false), out_(*this, "the output", n()) {}
    cudaError_t call(void* fn, Side side) override {
        return entry<decltype(&segment_scan)>(fn)(x_, out_.at(side), n(), stream());
    }
    Outcome judge() override {
        return judge_values(compare(out_.get(), n(), SegmentPrefix{x_}, stream()), kSumsWhy);
    }
    Traffic traffic() const override { return Traffic().read<float>(n()).write<float>(n()); }

  private:
    Output<float> out_;
};
CUDALINGS_PROBLEM(SegmentScan);

// ---------------------------------------------------------------- step 4: counts and ranks
struct RankOf {  // kept elements before i in its segment
    const float* x;
    float threshold;
    static constexpr u64 kRun = 32;
    struct State {
        std::uint32_t kept = 0;
    };
    __host__ __device__ State start(u64) const { return {}; }
    __host__ __device__ Want next(State& st, u64 i) const {
        const Want w = Want::exactly(st.kept);
        st.kept += x[i] > threshold ? 1u : 0u;
        return w;
    }
};
struct CountOf {  // kept elements of segment s
    const float* x;
    u64 n;
    float threshold;
    __host__ __device__ Want operator()(u64 s) const {
        std::uint32_t kept = 0;
        for (u64 i = 32 * s; i < 32 * s + 32 && i < n; ++i) kept += x[i] > threshold ? 1u : 0u;
        return Want::exactly(kept);
    }
};

class SegmentSelectRank : public SegmentProblem {
  public:
    static constexpr const char* kName = "segment_select_rank";
    static constexpr const char* kSymbol = "segment_select_rank";
    // About half kept; x > 0 with exact zeros among the inputs; sparse (about 10% kept); every
    // element kept; none kept; every other one; half, over many magnitudes.
    static std::vector<Case> cases() {
        const std::pair<Dist, float> kinds[] = {
            {dist::uniform, 0.0f},    {dist::small_integers, 0.0f}, {dist::positive, 0.9f},
            {dist::all_equal, -1.0f}, {dist::uniform, 2.0f},        {dist::alternating, 0.0f},
            {dist::wide, 0.0f}};
        std::vector<Case> out = warp_ladder({dist::uniform});
        for (std::size_t k = 0; k < out.size(); ++k) {
            const auto& [d, t] = kinds[k % (sizeof kinds / sizeof kinds[0])];
            out[k].dist = d;
            out[k].with("threshold", t, "keep x > " + format_number(t));
        }
        return out;
    }
    static std::vector<Case> timed() {
        return {Case::of(kTimedSize, dist::uniform).with("threshold", 0.0, "keep x > 0")};
    }
    SegmentSelectRank(const Case& c, const Setup& s)
        : SegmentProblem(c, s, 32, false),
          ranks_(*this, "ranks", n()),
          counts_(*this, "counts", segments()) {}
    cudaError_t call(void* fn, Side side) override {
        return entry<decltype(&segment_select_rank)>(fn)(x_, ranks_.at(side), counts_.at(side), n(),
                                                         threshold(), stream());
    }
    Outcome judge() override {
        const char* why =
            "exact: counts and ranks are whole numbers, and `in[i] > threshold` has one answer";
        return judge_parts(
            {{"ranks", compare(ranks_.get(), n(), RankOf{x_, threshold()}, stream()), why,
              "element"},
             {"counts", compare(counts_.get(), segments(), CountOf{x_, n(), threshold()}, stream()),
              why, "segment"}});
    }
    Traffic traffic() const override {
        return Traffic().read<float>(n()).write<unsigned>(n()).write<unsigned>(segments());
    }

  private:
    float threshold() const { return params().f32("threshold"); }
    Output<unsigned> ranks_, counts_;
};
CUDALINGS_PROBLEM(SegmentSelectRank);

// ---------------------------------------------------------------- step 5: narrow segments
// x - mean, m the segment's element count; the bound covers the mean's rounding (the segment's
// float sum, then the division: ε·Σ|x| at most, Σ|x| = m·mean|x|) and the subtraction, with the
// same factor-of-2 room as the sums.
struct Centered {
    const float* x;
    const SegmentStats* st;
    u64 n, width;
    __host__ __device__ Want operator()(u64 i) const {
        const u64 s = i / width, left = n - s * width;
        const double m = static_cast<double>(left < width ? left : width);
        const double v = x[i];
        return Want::near(v - st[s].sum / m, kSumBound * (st[s].abs_sum / m + fabs(v)));
    }
};

class SegmentCenter : public SegmentProblem {
  public:
    static constexpr const char* kName = "segment_center";
    static constexpr const char* kSymbol = "segment_center";
    // Both widths on the small sizes around them (a partial segment alone, whole ones, whole
    // plus partial, a chunk of 32 that ends inside a segment), then large ones.
    static std::vector<Case> cases() {
        const Dist dists[] = {dist::uniform, dist::wide, dist::small_integers, dist::large};
        std::vector<Case> out;
        auto add = [&](u64 n, unsigned width) {
            out.push_back(width_case(n, dists[out.size() % 4], width));
        };
        for (u64 n : {1, 7, 8, 9, 15, 16, 17, 24, 31, 33, 40, 1000})
            for (unsigned width : {8u, 16u}) add(n, width);
        add((1u << 20) + 3, 8);
        add((1u << 20) + 3, 16);
        add(1u << 24, 16);
        add(kTimedSize, 8);
        return out;
    }
    static std::vector<Case> timed() { return {width_case(kTimedSize, dist::uniform, 8)}; }
    SegmentCenter(const Case& c, const Setup& s)
        : SegmentProblem(c, s, static_cast<u64>(c.params.integer("width")), true),
          out_(*this, "the output", n()) {}
    cudaError_t call(void* fn, Side side) override {
        return entry<decltype(&segment_center)>(fn)(x_, out_.at(side), n(),
                                                    static_cast<int>(width_), stream());
    }
    Outcome judge() override {
        return judge_values(
            compare(out_.get(), n(), Centered{x_, stats(), n(), width_}, stream()),
            "each output may differ from the exact in[i] - mean (computed in double) by up to "
            "32·ε·(mean|x| + |in[i]|), ε = 2^-23 ≈ 1.19e-7, mean|x| the mean magnitude of the "
            "segment: the mean carries the rounding of the segment's float sum (at most about "
            "ε·Σ|x| / m) and the subtraction rounds once more; this leaves room to spare, while "
            "a wrong m, a missing element or another segment's mean is far larger");
    }
    Traffic traffic() const override { return Traffic().read<float>(n()).write<float>(n()); }

  private:
    static Case width_case(u64 n, Dist d, unsigned width) {
        return Case::of(n, d).with("width", width, "width " + std::to_string(width));
    }
    Output<float> out_;
};
CUDALINGS_PROBLEM(SegmentCenter);

}  // namespace
