// Checks of lesson 04 (block reduce): five steps, five entry points, one problem each.
//   atomic_sum                step 1  one float: the sum (cases and timing up to 2^24)
//   block_partial_sums        step 2  one float per 256-element tile
//   block_reduce_ops          step 3  sum, max, min, argmax per tile
//   device_sum_deterministic  step 4  the sum, the same bits on every call
//   device_sum_fast           step 5  the same, timed beside CUB
//
// Tolerances. A float sum is rounded at every addition, and its error depends on the order of the
// additions, the learner's choice. Each addition is off by at most u = 2^-24 relative to its
// result, and no result exceeds the sum of magnitudes S = Σ|x|, so:
//   - a sum of k + 1 numbers, in any order, is within k·u·S (to first order) of the exact sum.
//     Tiles (256 elements) use this worst case, which holds for every algorithm.
//   - For a whole array that worst case is useless (2^28 · 2^-24 = 16 S). Rounding errors add up
//     like a random walk: about √n·u·S. The whole-array tolerance is 4·√n·u·S (or the worst case
//     when smaller, n <= 16); step 1's worst case, n = 2^24 in [0, 1), errs by about u·S·√n / 3.
//   - Small integers (in [-100, 100]) sum exactly in any order: every partial sum is an integer
//     far below 2^24, where floats are exact. Those cases are bit-exact.
// A tolerance proportional to S only means something if the exact sum is not small next to S:
// whole-array sums use data whose sum is far from 0 by construction, or exact integers, and every
// case's |sum| is checked to be at least 8 tolerances. Argmax ties are tested with small integers
// and with all elements equal (the answer is then the tile's first index). Step 1 stops at 2^24
// and gets no data whose partial sums outgrow 2^24 times their elements: there the rounding of
// one accumulator leans one way every time and its error grows like n, not √n.
#include <cmath>
#include <stdexcept>

#include "block_reduce.cuh"
#include "kit.h"

namespace {

using namespace kit;

constexpr double kUnitRoundoff = 1.0 / 16777216.0;  // 2^-24: float's relative rounding error
constexpr double kMinMargin = 8.0;
constexpr u64 kAtomicMaxN = u64{1} << 24;

// γ_k = k·u / (1 - k·u): the first-order bound k·u, made rigorous.
__host__ __device__ inline double gamma_k(double k) {
    return k * kUnitRoundoff / (1.0 - k * kUnitRoundoff);
}

// The standard sizes up to max_n, cycling through dists, then the extra cases.
std::vector<Case> cases_from(const std::vector<Dist>& dists, u64 max_n,
                             const std::vector<std::pair<u64, Dist>>& extra) {
    std::vector<Case> cases = ladder(dists, max_n), more = table(extra);
    cases.insert(cases.end(), more.begin(), more.end());
    return cases;
}

// ---------------------------------------------------------------- whole sums (steps 1, 4, 5)
class WholeSum : public Problem {
  public:
    WholeSum(const Case& c, const Setup& s, bool workspace)
        : Problem(c, s), x_(*this, "x", n(), c.dist), sum_(*this, "the sum", 1) {
        sum_.on_overrun("Only one thread should write it, and only sum[0].");
        if (!workspace) return;
        ws_ = std::make_unique<Workspace>(*this, "the workspace", device_sum_workspace_bytes(n()));
        ws_->on_overrun(
            "More partials were written than the workspace holds: launch at most kMaxBlocks "
            "blocks in pass 1.");
    }
    void expect() override {
        exact_ = sum_in_double(x_, n(), stream());
        if (!exact() && !(std::fabs(exact_.sum) >= kMinMargin * bound()))
            throw std::runtime_error("block_reduce: generated data for " + test().label() +
                                     " has a sum too close to 0 for a meaningful check");
    }
    Outcome judge() override { return judge_sum(sum_.get(), exact_, bound(), n(), why()); }
    Traffic traffic() const override { return Traffic().read<float>(n()).write<float>(1); }

  protected:
    Input<float> x_;
    Output<float> sum_;
    std::unique_ptr<Workspace> ws_;

  private:
    bool exact() const { return test().dist == dist::small_integers || n() == 1; }
    double bound() const {
        if (exact()) return 0;
        const double worst = static_cast<double>(n() - 1), walk = 4 * std::sqrt(double(n()));
        return gamma_k(worst < walk ? worst : walk) * exact_.sum_abs;
    }
    std::string why() const {
        if (n() == 1) return "exact: the sum of one element is that element";
        if (exact())
            return "bit-exact: the elements are small integers, so every partial sum is an "
                   "integer far below 2^24, where float addition is exact in any order";
        const std::string within = "|got - exact sum| <= " + format_number(bound(), 3);
        if (static_cast<double>(n() - 1) <= 4 * std::sqrt(double(n())))
            return within +
                   " ((n-1)·2^-24·Σ|x|): each of the n-1 float additions rounds by at "
                   "most 2^-24 of its result, whatever their order";
        return within +
               " (4·√n·2^-24·Σ|x|): every float addition rounds, and the error depends "
               "on the order of the additions, which is yours to choose. Rounding "
               "errors fall up and down like a random walk, so they grow with √n; four "
               "times that allows any sensible order, atomics in any order included";
    }
    SumStats exact_;
};

class AtomicSum : public WholeSum {
  public:
    static constexpr const char* kName = "atomic_sum";
    static constexpr const char* kSymbol = "atomic_sum";
    // Data whose running sum stays within 2^24 of its elements (see the top of the file).
    static std::vector<Case> cases() {
        const Dist ints = dist::small_integers;
        return cases_from({dist::positive, ints, dist::alternating_pairs}, kAtomicMaxN,
                          {{(1u << 20) + 3, ints},
                           {(1u << 20) + 3, dist::positive},
                           {kAtomicMaxN, ints},
                           {kAtomicMaxN, dist::alternating_pairs}});
    }
    // 2^24, not 2^28: 2^28 serialized atomics per call would make a timing take minutes.
    static std::vector<Case> timed() { return {Case::of(kAtomicMaxN, dist::positive)}; }
    AtomicSum(const Case& c, const Setup& s) : WholeSum(c, s, false) {}
    cudaError_t call(void* fn, Side side) override {
        return entry<decltype(&atomic_sum)>(fn)(x_, n(), sum_.at(side), stream());
    }
};
CUDALINGS_PROBLEM(AtomicSum);

// Steps 4 and 5 share their cases: every kind of sum that is far from 0, sizes around float4
// packs and unrolled loads, several flavours at 2^24 and 2^28 (where the partials of many
// blocks meet, and where an order that changes between calls shows). Each case calls the step
// five times: the same bits every time.
std::vector<Case> device_sum_cases() {
    const Dist p = dist::positive, i = dist::small_integers, o = dist::offset_scale,
               e = dist::all_equal, a = dist::alternating_pairs;
    const u64 k24 = u64{1} << 24;
    // clang-format off
    std::vector<Case> cases = cases_from({p, i, o, e, a, dist::huge_one_sign}, kTimedSize,
        {{2, p}, {3, o}, {4, p}, {5, i}, {1023, o}, {1025, i}, {4097, e}, {(3u << 20) + 7, a},
         {k24, p}, {k24, i}, {kTimedSize, o}, {kTimedSize, p}});
    // clang-format on
    for (auto& c : cases) c.repeated(5, true);
    return cases;
}

template <cudaError_t (*kEntry)(const float*, size_t, float*, void*, size_t, cudaStream_t)>
class DeviceSum : public WholeSum {
  public:
    static std::vector<Case> cases() { return device_sum_cases(); }
    static std::vector<Case> timed() { return {Case::of(kTimedSize, dist::offset_scale)}; }
    DeviceSum(const Case& c, const Setup& s) : WholeSum(c, s, true) {}
    cudaError_t call(void* fn, Side side) override {
        return entry<decltype(kEntry)>(fn)(x_, n(), sum_.at(side), ws_->at(side), ws_->bytes(),
                                           stream());
    }
};
struct DeviceSumDeterministic : DeviceSum<&device_sum_deterministic> {
    static constexpr const char* kName = "device_sum_deterministic";
    static constexpr const char* kSymbol = "device_sum_deterministic";
    using DeviceSum::DeviceSum;
};
struct DeviceSumFast : DeviceSum<&device_sum_fast> {
    static constexpr const char* kName = "device_sum_fast";
    static constexpr const char* kSymbol = "device_sum_fast";
    using DeviceSum::DeviceSum;
};
CUDALINGS_PROBLEM(DeviceSumDeterministic);
CUDALINGS_PROBLEM(DeviceSumFast);

// ---------------------------------------------------------------- tiles (steps 2, 3)
struct TileSum {  // the tile's sum, within the worst case of any order
    const SegmentStats* st;
    u64 n;
    __host__ __device__ Want operator()(u64 b) const {
        const u64 begin = b * kTile, len = n - begin < kTile ? n - begin : kTile;
        return Want::near(st[b].sum, gamma_k(static_cast<double>(len - 1)) * st[b].abs_sum);
    }
};
struct TileMax {
    const SegmentStats* st;
    __host__ __device__ Want operator()(u64 b) const { return Want::near(st[b].max, 0); }
};
struct TileMin {
    const SegmentStats* st;
    __host__ __device__ Want operator()(u64 b) const { return Want::near(st[b].min, 0); }
};
struct TileArgmax {
    const SegmentStats* st;
    __host__ __device__ Want operator()(u64 b) const {
        return Want::exactly(static_cast<std::uint32_t>(st[b].argmax));
    }
};

class Tiles : public Problem {
  public:
    static std::vector<Case> timed() { return {Case::of(kTimedSize, dist::uniform)}; }
    Tiles(const Case& c, const Setup& s, bool all_four)
        : Problem(c, s),
          x_(*this, "x", n(), c.dist),
          stats_(tile_count(n())),
          sum_(*this, all_four ? "block_sum" : "partials", tile_count(n())) {
        if (!all_four) return;
        max_ = std::make_unique<Output<float>>(*this, "block_max", tiles());
        min_ = std::make_unique<Output<float>>(*this, "block_min", tiles());
        argmax_ = std::make_unique<Output<unsigned>>(*this, "block_argmax", tiles());
    }
    void expect() override { segment_stats(x_, n(), kTile, stats_.get(), stream()); }
    Outcome judge() override {
        const SegmentStats* st = stats_.get();
        std::vector<Part> parts{{sum_.name(),
                                 compare(sum_.get(), tiles(), TileSum{st, n()}, stream()),
                                 "per tile, |got - exact| <= k·2^-24·Σ|x| over the tile's "
                                 "elements, k = elements - 1: the worst case of any order of the "
                                 "additions (each rounds by at most 2^-24 of its result)",
                                 "tile"}};
        if (max_) {
            parts.push_back({"block_max", compare(max_->get(), tiles(), TileMax{st}, stream()),
                             "bit-exact: the largest element is one of the inputs", "tile"});
            parts.push_back({"block_min", compare(min_->get(), tiles(), TileMin{st}, stream()),
                             "bit-exact: the smallest element is one of the inputs", "tile"});
            parts.push_back({"block_argmax",
                             compare(argmax_->get(), tiles(), TileArgmax{st}, stream()),
                             "exact: the index in x of the tile's largest element; on a tie, "
                             "the smallest such index",
                             "tile"});
        }
        return judge_parts(parts);
    }
    // Read x; write one float per tile (step 2) or four 4-byte results per tile (step 3).
    Traffic traffic() const override {
        return Traffic().read<float>(n()).write<float>((max_ ? 4.0 : 1.0) * tiles());
    }

  protected:
    u64 tiles() const { return tile_count(n()); }
    Input<float> x_;
    dev::Array<SegmentStats> stats_;
    Output<float> sum_;
    std::unique_ptr<Output<float>> max_, min_;
    std::unique_ptr<Output<unsigned>> argmax_;
};

class BlockPartialSums : public Tiles {
  public:
    static constexpr const char* kName = "block_partial_sums";
    static constexpr const char* kSymbol = "block_partial_sums";
    static std::vector<Case> cases() {
        return cases_from({dist::positive, dist::uniform, dist::small_integers, dist::wide,
                           dist::all_equal, dist::alternating, dist::large},
                          kTimedSize,
                          {{2 * kTile - 1, dist::uniform},
                           {3 * kTile + 1, dist::wide},
                           {(1u << 20) + 3, dist::offset_scale},
                           {kTimedSize, dist::alternating_pairs}});
    }
    BlockPartialSums(const Case& c, const Setup& s) : Tiles(c, s, false) {}
    cudaError_t call(void* fn, Side side) override {
        return entry<decltype(&block_partial_sums)>(fn)(x_, n(), sum_.at(side), stream());
    }
};
CUDALINGS_PROBLEM(BlockPartialSums);

class BlockReduceOps : public Tiles {
  public:
    static constexpr const char* kName = "block_reduce_ops";
    static constexpr const char* kSymbol = "block_reduce_ops";
    // Ties for argmax: small integers (a tile often holds its maximum twice) and all-equal
    // (every element ties, so the answer is the tile's first index).
    static std::vector<Case> cases() {
        const Dist ints = dist::small_integers;
        return cases_from({ints, dist::uniform, dist::all_equal, dist::wide, dist::alternating,
                           dist::large, dist::positive},
                          kTimedSize,
                          {{kTile + 1, ints},
                           {1000, dist::all_equal},
                           {(1u << 20) + 3, ints},
                           {(1u << 20) + 3, dist::huge_one_sign},
                           {u64{1} << 24, ints},
                           {kTimedSize, ints}});
    }
    BlockReduceOps(const Case& c, const Setup& s) : Tiles(c, s, true) {}
    cudaError_t call(void* fn, Side side) override {
        return entry<decltype(&block_reduce_ops)>(fn)(x_, n(), sum_.at(side), max_->at(side),
                                                      min_->at(side), argmax_->at(side), stream());
    }
};
CUDALINGS_PROBLEM(BlockReduceOps);

}  // namespace
