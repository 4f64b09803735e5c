// Specs for lesson 04 (block reduce). The steps have different signatures, so each has its own
// spec (course.json names it per step):
//   block_reduce_atomic      step 1  atomic_sum                one float: the sum
//   block_reduce_partials    step 2  block_partial_sums        one float per 256-element tile
//   block_reduce_ops         step 3  block_reduce_ops          sum, max, min, argmax per tile
//   block_reduce_device_sum  step 4  device_sum_deterministic  the sum, the same bits each call
//   block_reduce_fast        step 5  device_sum_fast           the same, timed beside CUB
//
// Tolerances. A float sum is rounded at every addition, and its error depends on the order of
// the additions, which is the learner's choice (a tree, a grid-stride loop, atomics in whatever
// order they arrive). Each addition is off by at most u = 2^-24 relative to its result, and no
// result exceeds the sum of magnitudes S = sum |x|, so:
//   - a sum of k + 1 numbers, in any order, is within k·u·S (to first order) of the exact sum.
//     Tiles (256 elements) use this worst case, which holds for every algorithm.
//   - For a whole array that worst case is useless (2^28 · 2^-24 = 16 times S). Rounding
//     errors fall up and down at random, so they add up like a random walk: about √n·u·S. The
//     whole-array tolerance is 4·√n·u·S (or the worst case when that is smaller, n <= 16).
//     Sequential float accumulation of n = 2^24 values in [0, 1), the worst case of step 1,
//     has an error of about u·S·√n / 3 (a twelfth of the tolerance).
//   - Small integers (in [-100, 100]) sum exactly in any order: every partial sum is an integer
//     far below 2^24, where floats are exact. Those cases are bit-exact.
// The expected values are computed on the device in double precision (harness::sum_in_double,
// harness::segment_stats): max, min and argmax exactly, the sums to about 1e-16.
//
// Data. A tolerance proportional to S only means something if the exact sum is not small next
// to S, so the whole-array sums use data whose sum is far from 0 by construction (uniform in
// [0, 1), one value repeated, the reduction distributions with |sum| > S / 17) or exact (small
// integers); the spec checks that every such case's |sum| is at least 8 tolerances, so a
// result of 0 never passes, and NaN never does. Tiles have a tolerance per tile, so they also
// get signed data of every magnitude. Argmax ties (which index wins) are tested with small
// integers (a 256-element tile of integers in [-100, 100] often holds its maximum twice) and
// with all elements equal (the answer is the tile's first index).
//
// Step 1 stops at n = 2^24 and is timed there, on uniform [0, 1) data: one float accumulator
// updated n times is slow (n serialized atomics), and past 2^24 also wrong: once it exceeds
// 2^24, adding a value below 1 leaves it unchanged. For the same reason step 1 gets no data
// whose partial sums outgrow 2^24 times their elements (all-equal, one-sign offsets): there the
// rounding of one accumulator leans one way every time and its error grows like n, not √n.
//
// Steps 4 and 5 must give the same bits on every call: each case calls them five times.
// Step 5 is timed beside two baselines, "cub_device_reduce" (cub::DeviceReduce::Sum) and
// "cub_block_reduce" (step 5's structure with cub::BlockReduce as the block stage); under the
// CPU emulator (no CUB) they are left out.
#ifndef CUDALINGS_EMULATOR
#include <cub/cub.cuh>
#endif

#include <cmath>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "../../lessons/04_block_reduce/block_reduce.cuh"
#include "../core/cases.h"
#include "../runner/harness.h"
#include "../runner/spec.h"

namespace {

using harness::Dist;

using AtomicSumFn = cudaError_t (*)(const float*, size_t, float*, cudaStream_t);
using PartialsFn = cudaError_t (*)(const float*, size_t, float*, cudaStream_t);
using OpsFn = cudaError_t (*)(const float*, size_t, float*, float*, float*, unsigned int*,
                              cudaStream_t);
using DeviceSumFn = cudaError_t (*)(const float*, size_t, float*, void*, size_t, cudaStream_t);

constexpr double kUnitRoundoff = 1.0 / 16777216.0;  // 2^-24: float's relative rounding error
constexpr double kRandomWalkFactor = 4.0;
constexpr std::uint64_t kAtomicMaxN = std::uint64_t{1} << 24;  // step 1's largest case and timing
constexpr int kDeterminismCalls = 5;
// The input of the timed device sums (steps 4 and 5, and the CUB baselines), as in lesson 02.
constexpr Dist kTimedSumDist = Dist::OffsetScale;

// ---------------------------------------------------------------- cases
harness::CaseDef make_case(std::uint64_t n, Dist d) {
    harness::CaseDef c;
    c.n = n;
    c.dist = d;
    c.name = "n=" + cudalings::format_size(n) + ", " + harness::describe(d);
    return c;
}

// The standard sizes up to max_n, cycling through dists, then the extra cases.
std::vector<harness::CaseDef> cases_from(const std::vector<Dist>& dists, std::uint64_t max_n,
                                         const std::vector<std::pair<std::uint64_t, Dist>>& extra) {
    std::vector<harness::CaseDef> cases;
    auto sizes = cudalings::standard_sizes();
    for (std::size_t i = 0; i < sizes.size(); ++i)
        if (sizes[i] <= max_n) cases.push_back(make_case(sizes[i], dists[i % dists.size()]));
    for (const auto& [n, d] : extra) cases.push_back(make_case(n, d));
    return cases;
}

// ---------------------------------------------------------------- tolerances
// γ_k = k·u / (1 - k·u): the first-order bound k·u, made rigorous.
__host__ __device__ inline double gamma_k(double k) {
    return k * kUnitRoundoff / (1.0 - k * kUnitRoundoff);
}

// The allowed error of a float sum of n numbers whose magnitudes add up to abs_sum.
double whole_sum_bound(std::uint64_t n, double abs_sum) {
    double worst = static_cast<double>(n - 1);
    double walk = kRandomWalkFactor * std::sqrt(static_cast<double>(n));
    return gamma_k(worst < walk ? worst : walk) * abs_sum;
}

harness::Tolerance whole_sum_tolerance(const harness::CaseDef& c, const harness::SumStats& st) {
    harness::Tolerance t;
    if (c.dist == Dist::SmallIntegers) {
        t.exact = true;
        t.why =
            "bit-exact: the elements are small integers, so every partial sum is an integer "
            "far below 2^24, where float addition is exact in any order";
        return t;
    }
    t.exact = false;
    t.rel = 0;
    t.abs = whole_sum_bound(c.n, st.sum_abs);
    if (c.n == 1) {
        t.why = "exact: the sum of one element is that element";
    } else if (static_cast<double>(c.n - 1) <=
               kRandomWalkFactor * std::sqrt(static_cast<double>(c.n))) {
        t.why = "|got - exact sum| <= " + cudalings::format_number(t.abs, 3) +
                " ((n-1)·2^-24·Σ|x|): each of the n-1 float additions rounds by at most 2^-24 "
                "of its result, whatever their order";
    } else {
        t.why = "|got - exact sum| <= " + cudalings::format_number(t.abs, 3) +
                " (4·√n·2^-24·Σ|x|): every float addition rounds, and the error depends on the "
                "order of the additions, which is yours to choose. Rounding errors fall up and "
                "down like a random walk, so they grow with √n; four times that allows any "
                "sensible order, atomics in any order included";
    }
    return t;
}

harness::Tolerance tile_sum_tolerance() {
    harness::Tolerance t;
    t.exact = false;
    t.why =
        "per tile, |got - exact| <= k·2^-24·Σ|x| over the tile's elements, k = elements - 1: "
        "the worst case of any order of the additions (each addition rounds by at most "
        "2^-24 of its result)";
    return t;
}

harness::Tolerance exact_tolerance(const char* what) {
    harness::Tolerance t;
    t.exact = true;
    t.why = std::string("bit-exact: ") + what;
    return t;
}

// ---------------------------------------------------------------- judging several outputs
struct Part {
    const char* name;
    harness::GuardReport guards;
    harness::Comparison cmp;
    harness::Tolerance tol;
};

// Guards of every output first, then the input, then the values; names the outputs that are
// wrong and shows the first mismatches of the first of them. `unit` names what an index counts.
harness::CaseOutcome judge_parts(const std::vector<Part>& parts, std::uint64_t inputs_changed,
                                 std::uint64_t count, const char* unit) {
    for (const auto& p : parts) {
        if (!p.guards.hit) continue;
        auto o = harness::judge(p.guards, 0, {}, p.tol);
        o.detail = std::string(p.name) + ": " + o.detail;
        return o;
    }
    const Part* first_wrong = nullptr;
    std::string wrong, right;
    for (const auto& p : parts) {
        if (p.cmp.wrong) {
            if (!first_wrong) first_wrong = &p;
            if (!wrong.empty()) wrong += ", ";
            wrong += std::string(p.name) + " in " + std::to_string(p.cmp.wrong) + " of " +
                     std::to_string(count) + " " + unit + "s";
            if (p.cmp.unwritten == p.cmp.wrong) wrong += " (never written)";
        } else {
            if (!right.empty()) right += ", ";
            right += p.name;
        }
    }
    const Part& shown = first_wrong ? *first_wrong : parts.front();
    auto o = harness::judge({}, inputs_changed, shown.cmp, shown.tol);
    if (o.status == "wrong" && first_wrong) {
        o.detail = "Wrong: " + wrong + "." + (right.empty() ? "" : " Right: " + right + ".") +
                   " The mismatches shown are those of " + first_wrong->name + "; an index is a " +
                   unit + " number (block b reduces elements " + std::to_string(kTile) + "·b to " +
                   std::to_string(kTile) + "·b + " + std::to_string(kTile - 1) + ").";
    }
    return o;
}

// What a wrong single sum looks like, in a sentence.
std::string describe_sum(const harness::Comparison& cmp, double expected, double bound) {
    if (!cmp.wrong) return {};
    if (cmp.unwritten)
        return "The sum was never written: it still holds the NaN the checker put there before "
               "the call.";
    if (cmp.samples.empty()) return {};
    const std::string& got = cmp.samples.front().got;
    double g = std::strtod(got.c_str(), nullptr);
    if (std::isnan(g))
        return "The sum is NaN, and not the checker's own marker: a NaN got into it. Outputs and "
               "the workspace hold NaN when you are called: was an accumulator never zeroed, or a "
               "partial read that was never written?";
    if (g == 0.0) return "The sum is 0: nothing was added (or the result was never stored).";
    std::string s = "Got " + got + ", expected " + cudalings::format_number(expected, 3) +
                    ": off by " + cudalings::format_number(std::fabs(g - expected), 3);
    if (bound > 0)
        s += ", " + cudalings::format_number(std::fabs(g - expected) / bound, 3) +
             " times the tolerance";
    s += ".";
    if (expected != 0 && std::fabs(g / expected - 1.0) > 0.01)
        s += " That is no rounding error: elements are missing or counted twice.";
    return s;
}

float read_float(const float* device_value) {
    float v;
    dev::copy_to_host(&v, device_value, sizeof v);
    return v;
}

std::uint32_t float_bits(float v) {
    std::uint32_t b;
    std::memcpy(&b, &v, sizeof b);
    return b;
}

// ---------------------------------------------------------------- whole-array sums (1, 4, 5)
constexpr double kMinMargin = 8.0;  // |exact sum| >= this many tolerances (non-exact cases)

// Every case's data must make a wrong-but-plausible answer (0, NaN) fail by a wide margin.
void require_margin(const harness::CaseDef& c, const harness::SumStats& st) {
    if (c.dist == Dist::SmallIntegers) return;  // checked bit-exact
    if (!(std::fabs(st.sum) >= kMinMargin * whole_sum_bound(c.n, st.sum_abs)))
        throw std::runtime_error("block_reduce spec: generated data for " + c.name +
                                 " has a sum too close to 0 for a meaningful check");
}

// One workspace-free signature (step 1) and one with a workspace (steps 4 and 5).
cudaError_t call_sum(void* fn, bool workspace_kind, const float* x, std::uint64_t n, float* out,
                     void* workspace, cudaStream_t s) {
    if (!workspace_kind) return reinterpret_cast<AtomicSumFn>(fn)(x, n, out, s);
    return reinterpret_cast<DeviceSumFn>(fn)(x, n, out, workspace, device_sum_workspace_bytes(n),
                                             s);
}

// The workspace, as floats: an Output, so it has guard zones and is refilled with NaN.
std::uint64_t workspace_floats(std::uint64_t n) {
    return device_sum_workspace_bytes(n) / sizeof(float);
}

// Guards (the sum, then the workspace), then the input, then the value.
harness::CaseOutcome judge_sum(const harness::Output<float>& out, const harness::Output<float>* ws,
                               const harness::Input& x, const harness::CaseDef& c,
                               const harness::SumStats& st, cudaStream_t s) {
    const harness::Tolerance t = whole_sum_tolerance(c, st);
    harness::ScalarJudging how;
    how.output_name = "the sum";
    how.output_advice = "only one thread should write it, and only sum[0].";
    how.workspace_advice =
        "more partials were written than the workspace holds. Launch at most kMaxBlocks blocks "
        "in pass 1.";
    how.explain = [&](const harness::Comparison& cmp) {
        return describe_sum(cmp, st.sum, t.exact ? 0.0 : t.abs);
    };
    return harness::judge_scalar(out, ws, x, st.sum, t, how, s);
}

harness::CaseOutcome run_sum_case(harness::Ctx& ctx, void* fn, bool workspace_kind,
                                  bool check_determinism, const harness::CaseDef& c,
                                  std::uint64_t seed) {
    cudaStream_t s = ctx.stream;
    harness::Input x(c.n, c.dist, seed, 0, s);
    const harness::SumStats st = harness::sum_in_double(x.get(), c.n, s);
    require_margin(c, st);
    harness::Output<float> out(1);
    std::unique_ptr<harness::Output<float>> ws;
    if (workspace_kind) ws = std::make_unique<harness::Output<float>>(workspace_floats(c.n));
    auto call_once = [&] {
        out.poison(s);
        if (ws) ws->poison(s);  // the workspace holds garbage at every call
        dev::sync_device();
        ctx.call([&] {
            return call_sum(fn, workspace_kind, x.get(), c.n, out.get(), ws ? ws->get() : nullptr,
                            s);
        });
    };
    call_once();
    auto o = judge_sum(out, ws.get(), x, c, st, s);
    if (!check_determinism || o.status != "pass") return o;

    // The same input again: a deterministic sum gives the same bits every time.
    std::vector<float> results{read_float(out.get())};
    for (int k = 1; k < kDeterminismCalls; ++k) {
        call_once();
        results.push_back(read_float(out.get()));
    }
    bool same = true;
    for (float r : results) same = same && float_bits(r) == float_bits(results.front());
    if (same) return o;
    o.status = "wrong";
    o.reason = "non-deterministic";
    std::string values;
    for (std::size_t k = 0; k < results.size(); ++k)
        values += (k ? ", " : "") + harness::format_value(results[k]);
    o.detail = std::to_string(kDeterminismCalls) +
               " calls on the same input gave different bits: " + values +
               ". Each may be within the tolerance, but this step must give the same "
               "bits on every run. A float sum's last bits depend on the order of its additions, "
               "so something adds in an order that changes from run to run: one atomicAdd per "
               "block, for example, adds the partials in the order the blocks happen to finish. "
               "Add them in a fixed order instead (a second pass).";
    return o;
}

class TimedSum : public runner::TimedRun {
  public:
    TimedSum(cudaStream_t s, void* fn, void* ref, bool workspace_kind, Dist dist,
             std::uint64_t seed, std::uint64_t size)
        : fn_(fn),
          ref_(ref),
          workspace_kind_(workspace_kind),
          case_(make_case(size, dist)),
          x_(size, dist, seed, 0, s),
          out_(1),
          ref_out_(1),
          ws_(workspace_floats(size)),
          ref_ws_(workspace_floats(size)) {
        n = size;
        bytes = 4.0 * static_cast<double>(size) + 4.0;  // read x, write the sum
        stats_ = harness::sum_in_double(x_.get(), size, s);
        require_margin(case_, stats_);
        out_.poison(s);
        ws_.poison(s);
        ref_out_.poison(s);
        ref_ws_.poison(s);
    }
    cudaError_t learner(cudaStream_t s) override {
        return call_sum(fn_, workspace_kind_, x_.get(), n, out_.get(), ws_.get(), s);
    }
    cudaError_t reference(cudaStream_t s) override {
        if (!ref_) return cudaSuccess;
        return call_sum(ref_, workspace_kind_, x_.get(), n, ref_out_.get(), ref_ws_.get(), s);
    }
    // Fresh input, its exact sum, and the output and workspace poisoned again.
    bool refresh(cudaStream_t s, std::uint64_t seed) override {
        x_.regenerate(seed, 0, s);
        stats_ = harness::sum_in_double(x_.get(), n, s);
        require_margin(case_, stats_);
        out_.poison(s);
        ws_.poison(s);
        return true;
    }
    harness::CaseOutcome verify_learner(cudaStream_t s) override {
        return judge_sum(out_, workspace_kind_ ? &ws_ : nullptr, x_, case_, stats_, s);
    }

  private:
    void* fn_;
    void* ref_;
    bool workspace_kind_;
    harness::CaseDef case_;
    harness::Input x_;
    harness::Output<float> out_, ref_out_, ws_, ref_ws_;
    harness::SumStats stats_;
};

// ---------------------------------------------------------------- per-tile expectations (2, 3)
struct TileExpectations {
    explicit TileExpectations(std::uint64_t tiles)
        : sum(tiles), sum_bound(tiles), max(tiles), min(tiles), zero(tiles), argmax(tiles) {}
    dev::Array<double> sum, sum_bound, max, min, zero;
    dev::Array<std::uint32_t> argmax;
};

__global__ void tile_expectations_kernel(const harness::SegmentStats* st, std::uint64_t tiles,
                                         std::uint64_t n, double* sum, double* sum_bound,
                                         double* max, double* min, double* zero,
                                         std::uint32_t* argmax) {
    for (std::uint64_t b = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; b < tiles;
         b += std::uint64_t{gridDim.x} * blockDim.x) {
        const std::uint64_t begin = b * kTile;
        const std::uint64_t len = n - begin < kTile ? n - begin : kTile;
        sum[b] = st[b].sum;
        sum_bound[b] = gamma_k(static_cast<double>(len - 1)) * st[b].abs_sum;
        max[b] = st[b].max;
        min[b] = st[b].min;
        zero[b] = 0.0;
        argmax[b] = static_cast<std::uint32_t>(st[b].argmax);
    }
}

void tile_expectations(const harness::Input& x, TileExpectations& e, cudaStream_t s) {
    const std::uint64_t n = x.size();
    const std::uint64_t tiles = tile_count(n);
    dev::Array<harness::SegmentStats> stats(tiles);
    harness::segment_stats(x.get(), n, kTile, stats.get(), s);
    tile_expectations_kernel<<<harness::grid_for(tiles), 256, 0, s>>>(
        stats.get(), tiles, n, e.sum.get(), e.sum_bound.get(), e.max.get(), e.min.get(),
        e.zero.get(), e.argmax.get());
    DEV_CHECK(cudaGetLastError());
    dev::sync_stream(s);  // `stats` is freed on return
}

// The outputs of steps 2 and 3, with guards, and their judgement.
struct TileOutputs {
    explicit TileOutputs(std::uint64_t tiles) : sum(tiles), max(tiles), min(tiles), argmax(tiles) {}
    harness::Output<float> sum, max, min;
    harness::Output<unsigned> argmax;
    void poison(cudaStream_t s) {
        sum.poison(s);
        max.poison(s);
        min.poison(s);
        argmax.poison(s);
    }
};

harness::CaseOutcome judge_tiles(bool all_four, const TileOutputs& out, const TileExpectations& e,
                                 const harness::Input& x, cudaStream_t s) {
    const std::uint64_t tiles = tile_count(x.size());
    std::vector<Part> parts;
    parts.push_back(
        {all_four ? "block_sum" : "partials", out.sum.check_guards(s),
         harness::compare_within(out.sum.get(), e.sum.get(), e.sum_bound.get(), tiles, s),
         tile_sum_tolerance()});
    if (all_four) {
        parts.push_back(
            {"block_max", out.max.check_guards(s),
             harness::compare_within(out.max.get(), e.max.get(), e.zero.get(), tiles, s),
             exact_tolerance("the largest element is one of the inputs, no rounding")});
        parts.push_back(
            {"block_min", out.min.check_guards(s),
             harness::compare_within(out.min.get(), e.min.get(), e.zero.get(), tiles, s),
             exact_tolerance("the smallest element is one of the inputs, no rounding")});
        parts.push_back(
            {"block_argmax", out.argmax.check_guards(s),
             harness::compare_u32(reinterpret_cast<const std::uint32_t*>(out.argmax.get()),
                                  e.argmax.get(), tiles, s),
             exact_tolerance("the index in x of the tile's largest element; on a tie, "
                             "the smallest such index")});
    }
    return judge_parts(parts, x.changed(s), tiles, "tile");
}

class TimedTiles : public runner::TimedRun {
  public:
    TimedTiles(cudaStream_t s, void* fn, void* ref, bool all_four, std::uint64_t seed,
               std::uint64_t size)
        : fn_(fn),
          ref_(ref),
          all_four_(all_four),
          x_(size, Dist::Uniform, seed, 0, s),
          out_(tile_count(size)),
          ref_out_(tile_count(size)),
          expected_(tile_count(size)) {
        n = size;
        // Read x; write one float per tile (step 2) or four 4-byte results per tile (step 3).
        bytes = 4.0 * static_cast<double>(size) +
                (all_four ? 16.0 : 4.0) * static_cast<double>(tile_count(size));
        tile_expectations(x_, expected_, s);
        out_.poison(s);
    }
    cudaError_t learner(cudaStream_t s) override { return call(fn_, out_, s); }
    cudaError_t reference(cudaStream_t s) override {
        return ref_ ? call(ref_, ref_out_, s) : cudaSuccess;
    }
    // Fresh input, its tile results, and the outputs poisoned again.
    bool refresh(cudaStream_t s, std::uint64_t seed) override {
        x_.regenerate(seed, 0, s);
        tile_expectations(x_, expected_, s);
        out_.poison(s);
        return true;
    }
    harness::CaseOutcome verify_learner(cudaStream_t s) override {
        return judge_tiles(all_four_, out_, expected_, x_, s);
    }

  private:
    cudaError_t call(void* fn, TileOutputs& o, cudaStream_t s) {
        if (!all_four_) return reinterpret_cast<PartialsFn>(fn)(x_.get(), n, o.sum.get(), s);
        return reinterpret_cast<OpsFn>(fn)(x_.get(), n, o.sum.get(), o.max.get(), o.min.get(),
                                           o.argmax.get(), s);
    }
    void* fn_;
    void* ref_;
    bool all_four_;
    harness::Input x_;
    TileOutputs out_, ref_out_;
    TileExpectations expected_;
};

harness::CaseOutcome run_tiles_case(harness::Ctx& ctx, void* fn, bool all_four,
                                    const harness::CaseDef& c, std::uint64_t seed) {
    cudaStream_t s = ctx.stream;
    harness::Input x(c.n, c.dist, seed, 0, s);
    const std::uint64_t tiles = tile_count(c.n);
    TileExpectations e(tiles);
    tile_expectations(x, e, s);
    TileOutputs out(tiles);
    out.poison(s);
    dev::sync_device();
    if (all_four)
        ctx.call([&] {
            return reinterpret_cast<OpsFn>(fn)(x.get(), c.n, out.sum.get(), out.max.get(),
                                               out.min.get(), out.argmax.get(), s);
        });
    else
        ctx.call([&] { return reinterpret_cast<PartialsFn>(fn)(x.get(), c.n, out.sum.get(), s); });
    return judge_tiles(all_four, out, e, x, s);
}

// ---------------------------------------------------------------- the CUB baselines (step 5)
#ifndef CUDALINGS_EMULATOR  // the emulator has no CUB
// cub::BlockReduce inside step 5's structure: float4 loads, kUnroll in flight, one wave.
constexpr unsigned int kCubBlock = 256;
constexpr unsigned int kCubUnroll = 4;
constexpr unsigned int kCubFinalBlock = 1024;

// At most 32 registers per thread, as in step 5: a full SM of blocks fits.
__global__ void __maxnreg__(32) cub_partials_kernel(const float* __restrict__ x, std::uint64_t n,
                                                    float* __restrict__ partials) {
    using BlockReduce = cub::BlockReduce<float, kCubBlock>;
    __shared__ typename BlockReduce::TempStorage temp;
    const float4* x4 = reinterpret_cast<const float4*>(x);
    const std::uint64_t n4 = n / 4;
    const std::uint64_t tid = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x;
    const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
    float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    std::uint64_t i = tid;
    for (; i + (kCubUnroll - 1) * stride < n4; i += kCubUnroll * stride) {
        float4 v[kCubUnroll];
#pragma unroll
        for (unsigned u = 0; u < kCubUnroll; ++u) v[u] = __ldg(&x4[i + u * stride]);
#pragma unroll
        for (unsigned u = 0; u < kCubUnroll; ++u) {
            acc.x += v[u].x;
            acc.y += v[u].y;
            acc.z += v[u].z;
            acc.w += v[u].w;
        }
    }
    for (; i < n4; i += stride) {
        const float4 v = __ldg(&x4[i]);
        acc.x += v.x;
        acc.y += v.y;
        acc.z += v.z;
        acc.w += v.w;
    }
    float s = (acc.x + acc.y) + (acc.z + acc.w);
    if (4 * n4 + tid < n) s += __ldg(&x[4 * n4 + tid]);
    const float total = BlockReduce(temp).Sum(s);
    if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

__global__ void __launch_bounds__(kCubFinalBlock)
    cub_final_kernel(const float* __restrict__ partials, unsigned count, float* __restrict__ sum) {
    using BlockReduce = cub::BlockReduce<float, kCubFinalBlock>;
    __shared__ typename BlockReduce::TempStorage temp;
    float acc = 0.0f;
    for (unsigned i = threadIdx.x; i < count; i += blockDim.x) acc += partials[i];
    const float total = BlockReduce(temp).Sum(acc);
    if (threadIdx.x == 0) *sum = total;
}

cudaError_t cub_block_reduce_sum(const float* x, std::uint64_t n, float* sum, float* partials,
                                 cudaStream_t s) {
    int device = 0, sms = 0, threads_per_sm = 0;
    cudaError_t err = cudaGetDevice(&device);
    if (err == cudaSuccess)
        err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    if (err == cudaSuccess)
        err =
            cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device);
    if (err != cudaSuccess) return err;
    std::uint64_t grid = static_cast<std::uint64_t>(sms) * (threads_per_sm / kCubBlock);
    std::uint64_t needed = (n / 4 + kCubBlock - 1) / kCubBlock;
    if (needed == 0) needed = 1;
    grid = std::min<std::uint64_t>(std::min<std::uint64_t>(grid, needed), kMaxBlocks);
    cub_partials_kernel<<<static_cast<unsigned>(grid), kCubBlock, 0, s>>>(x, n, partials);
    err = cudaGetLastError();
    if (err != cudaSuccess) return err;
    cub_final_kernel<<<1, kCubFinalBlock, 0, s>>>(partials, static_cast<unsigned>(grid), sum);
    return cudaGetLastError();
}

// A library sum of the timed input, verified like step 5.
class TimedCub : public runner::TimedRun {
  public:
    TimedCub(cudaStream_t s, bool device_reduce, std::uint64_t seed, std::uint64_t size)
        : device_reduce_(device_reduce),
          case_(make_case(size, kTimedSumDist)),
          x_(size, kTimedSumDist, seed, 0, s),
          out_(1),
          partials_(kMaxBlocks) {
        n = size;
        bytes = 4.0 * static_cast<double>(size) + 4.0;
        stats_ = harness::sum_in_double(x_.get(), size, s);
        require_margin(case_, stats_);
        out_.poison(s);
        if (device_reduce_) {
            // Temporary storage sized and allocated once, outside the timed calls.
            DEV_CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes_, x_.get(), out_.get(),
                                             static_cast<int>(size), s));
            temp_ = dev::allocate(temp_bytes_ ? temp_bytes_ : 1);
        }
    }
    ~TimedCub() override { dev::release(temp_); }
    cudaError_t learner(cudaStream_t s) override {
        if (device_reduce_)
            return cub::DeviceReduce::Sum(temp_, temp_bytes_, x_.get(), out_.get(),
                                          static_cast<int>(n), s);
        return cub_block_reduce_sum(x_.get(), n, out_.get(), partials_.get(), s);
    }
    cudaError_t reference(cudaStream_t) override { return cudaSuccess; }
    bool refresh(cudaStream_t s, std::uint64_t seed) override {
        x_.regenerate(seed, 0, s);
        stats_ = harness::sum_in_double(x_.get(), n, s);
        require_margin(case_, stats_);
        out_.poison(s);
        return true;
    }
    harness::CaseOutcome verify_learner(cudaStream_t s) override {
        return judge_sum(out_, nullptr, x_, case_, stats_, s);
    }

  private:
    bool device_reduce_;
    harness::CaseDef case_;
    harness::Input x_;
    harness::Output<float> out_;
    dev::Array<float> partials_;
    harness::SumStats stats_;
    void* temp_ = nullptr;
    std::size_t temp_bytes_ = 0;
};
#endif  // CUDALINGS_EMULATOR

// ---------------------------------------------------------------- the specs
class AtomicSumSpec : public runner::Spec {
  public:
    const char* name() const override { return "block_reduce_atomic"; }
    const char* symbol() const override { return "atomic_sum"; }
    std::vector<harness::CaseDef> cases() const override {
        // Data whose running sum stays within 2^24 of its elements (see the top of the file).
        return cases_from({Dist::Positive, Dist::SmallIntegers, Dist::AlternatingPairs},
                          kAtomicMaxN,
                          {{(1u << 20) + 3, Dist::SmallIntegers},
                           {(1u << 20) + 3, Dist::Positive},
                           {kAtomicMaxN, Dist::SmallIntegers},
                           {kAtomicMaxN, Dist::AlternatingPairs}});
    }
    harness::CaseOutcome run_case(harness::Ctx& ctx, void* fn, const harness::CaseDef& c,
                                  std::uint64_t seed) override {
        return run_sum_case(ctx, fn, false, false, c, seed);
    }
    std::unique_ptr<runner::TimedRun> prepare_timing(cudaStream_t s, void* fn, void* reference,
                                                     std::uint64_t seed) override {
        // 2^24, not 2^28: 2^28 serialized atomics per call would make a timing take minutes.
        return std::make_unique<TimedSum>(s, fn, reference, false, Dist::Positive, seed,
                                          kAtomicMaxN);
    }
};

class PartialsSpec : public runner::Spec {
  public:
    const char* name() const override { return "block_reduce_partials"; }
    const char* symbol() const override { return "block_partial_sums"; }
    std::vector<harness::CaseDef> cases() const override {
        return cases_from({Dist::Positive, Dist::Uniform, Dist::SmallIntegers, Dist::Wide,
                           Dist::AllEqual, Dist::Alternating, Dist::Large},
                          cudalings::kTimedSize,
                          {{2 * kTile - 1, Dist::Uniform},
                           {3 * kTile + 1, Dist::Wide},
                           {(1u << 20) + 3, Dist::OffsetScale},
                           {cudalings::kTimedSize, Dist::AlternatingPairs}});
    }
    harness::CaseOutcome run_case(harness::Ctx& ctx, void* fn, const harness::CaseDef& c,
                                  std::uint64_t seed) override {
        return run_tiles_case(ctx, fn, false, c, seed);
    }
    std::unique_ptr<runner::TimedRun> prepare_timing(cudaStream_t s, void* fn, void* reference,
                                                     std::uint64_t seed) override {
        return std::make_unique<TimedTiles>(s, fn, reference, false, seed, cudalings::kTimedSize);
    }
};

class OpsSpec : public runner::Spec {
  public:
    const char* name() const override { return "block_reduce_ops"; }
    const char* symbol() const override { return "block_reduce_ops"; }
    std::vector<harness::CaseDef> cases() const override {
        // Ties for argmax: small integers (a tile often holds its maximum twice) and all-equal
        // (every element ties, so the answer is the tile's first index).
        return cases_from({Dist::SmallIntegers, Dist::Uniform, Dist::AllEqual, Dist::Wide,
                           Dist::Alternating, Dist::Large, Dist::Positive},
                          cudalings::kTimedSize,
                          {{kTile + 1, Dist::SmallIntegers},
                           {1000, Dist::AllEqual},
                           {(1u << 20) + 3, Dist::SmallIntegers},
                           {(1u << 20) + 3, Dist::HugeOneSign},
                           {std::uint64_t{1} << 24, Dist::SmallIntegers},
                           {cudalings::kTimedSize, Dist::SmallIntegers}});
    }
    harness::CaseOutcome run_case(harness::Ctx& ctx, void* fn, const harness::CaseDef& c,
                                  std::uint64_t seed) override {
        return run_tiles_case(ctx, fn, true, c, seed);
    }
    std::unique_ptr<runner::TimedRun> prepare_timing(cudaStream_t s, void* fn, void* reference,
                                                     std::uint64_t seed) override {
        return std::make_unique<TimedTiles>(s, fn, reference, true, seed, cudalings::kTimedSize);
    }
};

// Steps 4 and 5 share their cases: the ladder over every kind of sum that is far from 0, sizes
// around float4 packs and unrolled loads, and several flavours at 2^24 and 2^28 (where the
// partials of many blocks meet, and where an order that changes between calls shows).
std::vector<harness::CaseDef> device_sum_cases() {
    return cases_from({Dist::Positive, Dist::SmallIntegers, Dist::OffsetScale, Dist::AllEqual,
                       Dist::AlternatingPairs, Dist::HugeOneSign},
                      cudalings::kTimedSize,
                      {{2, Dist::Positive},
                       {3, Dist::OffsetScale},
                       {4, Dist::Positive},
                       {5, Dist::SmallIntegers},
                       {1023, Dist::OffsetScale},
                       {1025, Dist::SmallIntegers},
                       {4097, Dist::AllEqual},
                       {(3u << 20) + 7, Dist::AlternatingPairs},
                       {std::uint64_t{1} << 24, Dist::Positive},
                       {std::uint64_t{1} << 24, Dist::SmallIntegers},
                       {cudalings::kTimedSize, Dist::OffsetScale},
                       {cudalings::kTimedSize, Dist::Positive}});
}

class DeviceSumSpec : public runner::Spec {
  public:
    const char* name() const override { return "block_reduce_device_sum"; }
    const char* symbol() const override { return "device_sum_deterministic"; }
    std::vector<harness::CaseDef> cases() const override { return device_sum_cases(); }
    harness::CaseOutcome run_case(harness::Ctx& ctx, void* fn, const harness::CaseDef& c,
                                  std::uint64_t seed) override {
        return run_sum_case(ctx, fn, true, true, c, seed);
    }
    std::unique_ptr<runner::TimedRun> prepare_timing(cudaStream_t s, void* fn, void* reference,
                                                     std::uint64_t seed) override {
        return std::make_unique<TimedSum>(s, fn, reference, true, kTimedSumDist, seed,
                                          cudalings::kTimedSize);
    }
};

// Step 5 is judged exactly as step 4, deterministic too: cub::DeviceReduce gives the same bits
// run to run, and so must what replaces it. It adds the library baselines.
class FastSumSpec : public DeviceSumSpec {
  public:
    const char* name() const override { return "block_reduce_fast"; }
    const char* symbol() const override { return "device_sum_fast"; }
    std::vector<runner::Baseline> baselines() const override {
#ifndef CUDALINGS_EMULATOR
        return {{"cub_device_reduce",
                 [](cudaStream_t s, std::uint64_t seed) -> std::unique_ptr<runner::TimedRun> {
                     return std::make_unique<TimedCub>(s, true, seed, cudalings::kTimedSize);
                 }},
                { "cub_block_reduce",
                  [](cudaStream_t s, std::uint64_t seed) -> std::unique_ptr<runner::TimedRun> {
                      return std::make_unique<TimedCub>(s, false, seed, cudalings::kTimedSize);
                  } }};
#else
        return {};
#endif
    }
};

}  // namespace

CUDALINGS_REGISTER_SPEC(AtomicSumSpec);
CUDALINGS_REGISTER_SPEC(PartialsSpec);
CUDALINGS_REGISTER_SPEC(OpsSpec);
CUDALINGS_REGISTER_SPEC(DeviceSumSpec);
CUDALINGS_REGISTER_SPEC(FastSumSpec);
