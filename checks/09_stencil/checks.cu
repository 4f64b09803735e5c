// Checks of lesson 09 (stencil): one entry point, stencil_1d, for every step.
//
// A case is a size, input values, a radius R (2R + 1 weights), a boundary rule (zero, clamp,
// wrap) and a number of time steps. Every boundary rule is tested at every small size, with
// radius 1 and radius 8 and several step counts (1, 2, 3, 8, 10: a ping-pong that ends in the
// workspace shows with an even count, 10 steps take two passes of a temporal kernel that fuses
// 8), and a few other radii. The sizes: n = 1, 2, 3, 5 (smaller than radius 8: a halo reaches
// around a wrapped array more than once, and a tile's halo crosses both ends), 8, 9, 17
// (= 2·8 + 1), 31, 33, 255, 256, 257 (one block of 256 and its neighbours; step 3's warp tile
// at radius 8), 511, 512, 513 (step 3's warp tile at radius 1), 1000, 4095, 4096, 4097 (step 4's
// tile of 4096 cells, a block of step 3's tiles at radius 1), 2^16 + 3 (the largest the emulator
// runs), then 2^20 + 3, 2^24 and 2^28 on the GPU. A few cases sit where step 3's second warp
// tile stops being an end tile: its right halo ends at n - 1 (n = 1025 at radius 1, 520 at
// radius 8) or one cell later (1024, 519).
//
// The weights come from the seed: random and asymmetric in most cases (so neighbours taken from
// the wrong side show), symmetric in a few, (1, -2, 1) in a few, where the result cancels
// (all-equal inputs give exact zeros).
//
// Expected values. Each output element is computed while comparing, on the device, in double:
// the window of 2·R·steps + 1 inputs around it, evolved `steps` times in place (the window
// shrinks by R on each side per step), with the boundary rule applied to the positions outside
// [0, n) after every step (wrap needs no rule inside: the periodic extension of the array evolves
// like the array). The magnitude stencil M (|weights| applied `steps` times to |in|, same
// boundary) is evolved beside it.
//
// Tolerance, per element: |y - exact| <= 2·((1 + γ)^steps - 1)·M_i, γ = m·u / (1 - m·u),
// m = 2R + 1, u = 2^-24. One time step is a dot product of m products, which any order of the
// additions, with or without fused multiply-adds, computes within γ·(Σ |w_j|·|x_j|); the errors
// of earlier steps are carried through the later ones by at most the magnitude stencil, which
// gives ((1 + γ)^steps - 1)·M_i by induction. Twice that worst case leaves room for the
// reference's own rounding; a neighbour from the wrong side, a wrong boundary value or a
// missing step is far larger.
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "kit.h"
#include "stencil.cuh"

namespace {

using namespace kit;

constexpr double kUnit = 1.0 / 16777216.0;  // u = 2^-24: float's relative rounding error
constexpr int kTaps = 2 * kMaxRadius + 1;

enum WeightsKind : int { kRandom = 0, kSymmetric = 1, kLaplacian = 2 };

const char* boundary_text(int b) { return b == kZero ? "zero" : b == kClamp ? "clamp" : "wrap"; }

Case stencil_case(u64 n, Dist d, int radius, int boundary, int steps, int weights = kRandom) {
    Case c = Case::of(n, d)
                 .with("radius", radius, "radius " + std::to_string(radius))
                 .with("boundary", boundary, boundary_text(boundary))
                 .with("steps", steps, steps == 1 ? "1 step" : std::to_string(steps) + " steps");
    if (weights == kSymmetric) c.with("weights", weights, "symmetric weights");
    if (weights == kLaplacian) c.with("weights", weights, "weights (1, -2, 1)");
    return c;
}

// The 2R + 1 weights of a case, from the seed: uniform in ±2/(2R + 1) (so Σ|w| <= 2 and 10 time
// steps grow the values by at most 2^10), mirrored for symmetric weights.
std::vector<float> weights_for(int radius, int kind, u64 seed) {
    std::vector<float> w(2 * radius + 1, 0.0f);
    if (kind == kLaplacian) {
        w[radius - 1] = 1.0f;
        w[radius] = -2.0f;
        w[radius + 1] = 1.0f;
        return w;
    }
    const float scale = 2.0f / static_cast<float>(2 * radius + 1);
    for (int k = 0; k <= 2 * radius; ++k)
        w[k] = (2.0f * unit_float(splitmix64(seed ^ (0x57e9c11ull + k))) - 1.0f) * scale;
    if (kind == kSymmetric)
        for (int k = 0; k < radius; ++k) w[2 * radius - k] = w[k];
    return w;
}

// 2·((1 + γ)^steps - 1) with γ = m·u / (1 - m·u), m = 2R + 1.
double growth(int radius, int steps) {
    const double m = 2.0 * radius + 1.0, gamma = m * kUnit / (1.0 - m * kUnit);
    return 2.0 * (std::pow(1.0 + gamma, steps) - 1.0);
}

// What out[i] must be: `steps` time steps of the stencil, evolved in double over the window of
// inputs that reach element i; kHalf >= radius · steps bounds the window.
template <int kHalf>
struct Evolved {
    const float* x;
    long long n;
    int radius, boundary, steps;
    double w[kTaps], aw[kTaps];  // the weights and their magnitudes
    double grow;                 // the tolerance per unit of M_i

    __host__ __device__ double at(long long p) const {  // in[p] by the boundary rule
        if (p >= 0 && p < n) return x[p];
        if (boundary == kZero) return 0.0;
        if (boundary == kClamp) return x[p < 0 ? 0 : n - 1];
        return x[((p % n) + n) % n];
    }
    __host__ __device__ Want operator()(u64 i) const {
        double v[2 * kHalf + 1], m[2 * kHalf + 1];
        const int half = radius * steps;
        long long first = static_cast<long long>(i) - half;  // the window's first position
        int width = 2 * half + 1;
        for (int k = 0; k < width; ++k) {
            v[k] = at(first + k);
            m[k] = fabs(v[k]);
        }
        for (int t = 1; t <= steps; ++t) {
            // In place: the new cell k (position first + R + k) reads the old cells k .. k + 2R,
            // and no later new cell reads old cell k.
            width -= 2 * radius;
            first += radius;
            for (int k = 0; k < width; ++k) {
                double sv = 0, sm = 0;
                for (int j = 0; j <= 2 * radius; ++j) {
                    sv += w[j] * v[k + j];
                    sm += aw[j] * m[k + j];
                }
                v[k] = sv;
                m[k] = sm;
            }
            if (boundary == kWrap) continue;  // the periodic extension evolves like the array
            // Positions outside [0, n) follow the rule at every step: 0, or the end cell.
            for (int k = 0; k < width; ++k) {
                const long long p = first + k;
                if (p >= 0 && p < n) continue;
                const long long end = (p < 0 ? 0 : n - 1) - first;  // inside the window
                v[k] = boundary == kZero ? 0.0 : v[end];
                m[k] = boundary == kZero ? 0.0 : m[end];
            }
        }
        return Want::near(v[0], grow * m[0]);
    }
};

// The same, except near the ends: elements within `reach` of position 0 or n - 1 are accepted
// whatever they hold (for telling boundary bugs from the rest).
template <int kHalf>
struct EvolvedInside {
    Evolved<kHalf> e;
    const float* got;
    long long reach;
    __host__ __device__ Want operator()(u64 i) const {
        const long long p = static_cast<long long>(i);
        if (p < reach || p >= e.n - reach) return Want::exactly_as(got[i]);
        return e(i);
    }
};

// The same, except in a band around the edges of tiles of `period` cells: the `before` cells
// before each edge k·period and the `after` cells from it are accepted whatever they hold (for
// telling a tile's halo from the rest).
template <int kHalf>
struct EvolvedOffTileEdges {
    Evolved<kHalf> e;
    const float* got;
    u64 period, before, after;
    __host__ __device__ Want operator()(u64 i) const {
        const u64 m = i % period;
        if (m >= period - before || m < after) return Want::exactly_as(got[i]);
        return e(i);
    }
};

// What the stencil problems share: in, out, the workspace and the weights of a case, and the
// call.
class StencilProblem : public Problem {
  public:
    // out[i] from the inputs in its window alone (and the weights, the case's own)
    static constexpr bool kSampledValues = true;
    StencilProblem(const Case& c, const Setup& s)
        : Problem(c, s),
          in_(*this, "in", n(), c.dist),
          out_(*this, "the output", n()),
          ws_(*this, "the workspace", stencil_workspace_bytes(n())),
          weights_(weights_for(radius(), static_cast<int>(c.params.number_or("weights", kRandom)),
                               s.seed ^ (0x3e1647ull * static_cast<u64>(radius())))) {
        if (radius() * steps() > kMaxRadius * 10)
            throw std::runtime_error("stencil_1d: " + c.label() +
                                     ": radius × steps over 80, the widest window the expected "
                                     "values are computed for");
        out_.on_overrun(
            "Only out[0 .. n) may be written: a tile past the end of the array must "
            "test i < n before its store.");
        ws_.on_overrun("The workspace holds n floats: a time step that writes it must stop at n.");
        share_host(weights_.data(), weights_.size() * sizeof(float));
    }
    cudaError_t call(void* fn, Side side) override {
        return entry<decltype(&stencil_1d)>(fn)(in_, out_.at(side), n(), weights_.data(), radius(),
                                                boundary(), steps(), ws_.at(side), ws_.bytes(),
                                                stream());
    }
    // Read n floats and write n, whatever the number of steps: the least a fused pass can do.
    Traffic traffic() const override { return Traffic().read<float>(n()).write<float>(n()); }

  protected:
    int radius() const { return static_cast<int>(params().integer("radius")); }
    int boundary() const { return static_cast<int>(params().integer("boundary")); }
    int steps() const { return static_cast<int>(params().integer("steps")); }

    Input<float> in_;
    Output<float> out_;
    Workspace ws_;
    std::vector<float> weights_;
};

class Stencil : public StencilProblem {
  public:
    static constexpr const char* kName = "stencil_1d";
    static constexpr const char* kSymbol = "stencil_1d";
    static std::vector<Case> cases() {
        const Dist dists[] = {dist::uniform, dist::wide, dist::small_integers, dist::alternating,
                              dist::offset_scale};
        // (radius, steps) pairs, cycled: radius 1 and radius 8 at every size and boundary.
        const int one[][2] = {{1, 1}, {1, 2}, {1, 8}, {1, 3}, {1, 10}};
        const int eight[][2] = {{8, 8}, {8, 1}, {8, 2}, {8, 3}, {8, 8}};
        std::vector<Case> out;
        int k = 0;
        for (u64 n :
             {1, 2, 3, 5, 8, 9, 17, 31, 33, 255, 256, 257, 511, 512, 513, 1000, 4095, 4096, 4097})
            for (int b : {kZero, kClamp, kWrap}) {
                out.push_back(stencil_case(n, dists[k % 5], one[k % 5][0], b, one[k % 5][1]));
                out.push_back(
                    stencil_case(n, dists[(k + 2) % 5], eight[k % 5][0], b, eight[k % 5][1]));
                ++k;
            }
        // other radii (one larger than n), other weights
        const Dist u = dist::uniform;
        out.push_back(stencil_case(6, u, 7, kWrap, 3));
        out.push_back(stencil_case(31, dist::wide, 3, kZero, 3));
        out.push_back(stencil_case(257, u, 2, kClamp, 5));
        out.push_back(stencil_case(1000, dist::offset_scale, 3, kWrap, 2));
        out.push_back(stencil_case(4097, u, 5, kZero, 1));
        out.push_back(stencil_case(1000, u, 1, kClamp, 2, kSymmetric));
        out.push_back(stencil_case(4097, dist::wide, 8, kWrap, 1, kSymmetric));
        out.push_back(stencil_case(1000, dist::all_equal, 1, kClamp, 3, kLaplacian));
        out.push_back(stencil_case(257, dist::offset_scale, 1, kZero, 1, kLaplacian));
        out.push_back(stencil_case(4096, dist::offset_scale, 1, kWrap, 8, kLaplacian));
        // step 3's second warp tile (packs 32U .. 64U - 1, U = 4 at radius 1 and 2 at radius 8)
        // with its right halo ending exactly at n - 1 (loaded without the rule), and with n one
        // smaller (the halo's last cell is outside: an end tile, through the rule)
        out.push_back(stencil_case(1024, u, 1, kClamp, 1));
        out.push_back(stencil_case(1025, dist::wide, 1, kZero, 2));
        out.push_back(stencil_case(519, dist::small_integers, 8, kWrap, 1));
        out.push_back(stencil_case(520, dist::alternating, 8, kClamp, 2));
        // the largest size the emulator runs, then the GPU's (the first runs capped emulated)
        const u64 mi = u64{1} << 20;
        out.push_back(stencil_case(65539, u, 1, kZero, 8));
        out.push_back(stencil_case(mi + 3, dist::wide, 1, kWrap, 2));
        out.push_back(stencil_case(mi + 3, u, 8, kClamp, 8));
        out.push_back(stencil_case(mi + 3, dist::small_integers, 8, kZero, 1));
        out.push_back(stencil_case(16 * mi, u, 1, kClamp, 8));
        out.push_back(stencil_case(16 * mi, dist::alternating, 8, kWrap, 2));
        out.push_back(stencil_case(kTimedSize, u, 1, kZero, 1));
        out.push_back(stencil_case(kTimedSize, dist::offset_scale, 8, kClamp, 3));
        return out;
    }
    // The three timed problems: the plain 3-point stencil, the 17-point one, and 8 time steps
    // of the 3-point one (where fusing the steps saves 7 round trips through memory).
    static std::vector<Case> timed() {
        return {stencil_case(kTimedSize, dist::uniform, 1, kZero, 1).timed_as("radius 1"),
                stencil_case(kTimedSize, dist::uniform, 8, kZero, 1).timed_as("radius 8"),
                stencil_case(kTimedSize, dist::uniform, 1, kZero, 8).timed_as("8 steps")};
    }
    static Advice advice() {
        // Only for reads out of bounds (emulator or compute-sanitizer), not a race or a barrier.
        return {{"MEMORY_ERROR/out-of-bounds|out of bounds|Invalid __global__ read",
                 "A read past the end of in (or before its start) is a halo cell loaded without "
                 "the boundary rule: every cell at a position outside [0, n) must come from "
                 "load() (0, the end cell, or the wrapped cell), never from x[i] directly, even "
                 "when the value would be replaced afterwards."}};
    }

    using StencilProblem::StencilProblem;
    Outcome judge() override {
        Outcome o = judge_values(expected(radius() * steps() <= 16, steps(), false), tolerance());
        if (o.pass()) return o;
        diagnose(o);
        o.explain("The weights: " + weights_text() + ".");
        return o;
    }

  private:
    template <int kHalf>
    Evolved<kHalf> evolved(int steps, bool mirrored) const {
        Evolved<kHalf> e{};
        e.x = in_;
        e.n = static_cast<long long>(n());
        e.radius = radius();
        e.boundary = boundary();
        e.steps = steps;
        const int taps = 2 * radius() + 1;
        for (int k = 0; k < taps; ++k) {
            e.w[k] = weights_[mirrored ? taps - 1 - k : k];
            e.aw[k] = std::fabs(e.w[k]);
        }
        e.grow = growth(radius(), steps);
        return e;
    }
    // The output against `steps` time steps (mirrored: with the weights in reverse order).
    Comparison expected(bool small, int steps, bool mirrored) const {
        if (small) return compare(out_.get(), n(), evolved<16>(steps, mirrored), stream());
        return compare(out_.get(), n(), evolved<kMaxRadius * 10>(steps, mirrored), stream());
    }
    std::string tolerance() const {
        return "per element, |y - exact| <= " + format_number(growth(radius(), steps()), 3) +
               "·M_i, that is 2·((1 + γ)^steps - 1)·M_i with γ = (2R+1)·u/(1 - (2R+1)·u), "
               "u = 2^-24: M_i is the magnitude stencil (|weights| applied steps times to |in|, "
               "same boundary), computed in double with the exact value over the element's "
               "window. Each time step is a sum of 2R+1 products, which any order of additions, "
               "with or without FMA, gets within γ of the sum of its terms' magnitudes; errors of "
               "earlier steps travel through the later ones, bounded by the magnitude stencil; "
               "this is twice that worst case";
    }
    std::string weights_text() const {
        std::string s;
        for (float w : weights_) s += (s.empty() ? "" : ", ") + format_number(w, 9);
        return "(" + s + ")";
    }
    // Words for the usual mistakes, each confirmed by comparing the output with what that
    // mistake produces.
    void diagnose(Outcome& o) const {
        const bool small = radius() * steps() <= 16;
        const long long reach = static_cast<long long>(radius()) * steps();
        if (steps() > 1 && expected(small, steps() - 1, false).wrong == 0) {
            o.explain("The output holds the result of " + std::to_string(steps() - 1) +
                      " time steps, not " + std::to_string(steps()) +
                      ": the last step's result went elsewhere (with ping-pong buffers, count "
                      "back from the last step: it must write out).");
            return;
        }
        if (!weights_symmetric() && expected(small, steps(), true).wrong == 0) {
            o.explain(
                "The output is right for the weights in reverse order: weights[0] "
                "multiplies x[i - R] and weights[2R] multiplies x[i + R] (neighbours taken "
                "from the wrong side).");
            return;
        }
        // Whether some wrong element is farther than radius × steps from both ends (-1: every
        // element is that near an end).
        int interior = -1;
        if (2 * reach < static_cast<long long>(n())) {
            const Comparison inside =
                small ? compare(out_.get(), n(),
                                EvolvedInside<16>{evolved<16>(steps(), false), out_.get(), reach},
                                stream())
                      : compare(out_.get(), n(),
                                EvolvedInside<kMaxRadius * 10>{
                                    evolved<kMaxRadius * 10>(steps(), false), out_.get(), reach},
                                stream());
            interior = inside.wrong != 0;
        }
        const bool at_tile_edges = tile_edges(o, interior == 1);
        if (at_tile_edges && o.clue.alone) return;  // the tiles' halo, nothing else fits
        if (interior == 0) {
            o.explain("Every wrong element is within radius × steps = " + std::to_string(reach) +
                      " of an end of the array, and the rest is "
                      "right: look at the " +
                      std::string(boundary_text(boundary())) +
                      " rule, which holds at every time step for the array being read.");
            if (at_tile_edges)
                o.explain("They are also all at the " +
                          std::string(o.clue.key.rfind("tile-end", 0) == 0 ? "end" : "start") +
                          " of a tile of " + o.clue.key.substr(o.clue.key.find(':') + 1) +
                          " cells, where a tile's halo is read: if the other failing sizes are "
                          "wrong there too, whatever the rule, the halo is the cause.");
        }
    }
    // Whether every wrong element lies at the end of a tile of P cells (P a power of two from
    // 32, the learner's tile, found from the mismatches): the last R outputs of each tile, which
    // read its right halo (with several time steps, the error spreads R cells each way per
    // step: R·steps before the edge and R·(steps - 1) after it); or at its start, the first R,
    // which read the left halo. Explains it and sets the clue the step's conclusion groups by
    // (`alone`: some wrong element is far from both ends of the array, where only a tile edge
    // is). False when the mismatches are anywhere else.
    bool tile_edges(Outcome& o, bool alone) const {
        const u64 r = static_cast<u64>(radius()), s = static_cast<u64>(steps());
        const Comparison& c = o.cmp;
        // On a large array, wrong outputs known only within radius × steps of its ends fit the
        // bands of every tile that divides n, and each try is a compare of the whole array
        // (seconds at 2^28 with many steps): the array's ends say nothing of a tile there, and
        // the boundary rule's sentence stands alone.
        const u64 reach = r * s;
        const auto near_end = [&](u64 i) { return i < reach || i + reach >= n(); };
        bool known_inside = !near_end(c.first) || !near_end(c.last);
        for (const auto& m : c.samples) known_inside = known_inside || !near_end(m.index);
        if (!known_inside && n() > (u64{1} << 17)) return false;
        for (const bool at_end : {true, false}) {
            const u64 before = at_end ? r * s : r * (s - 1), after = at_end ? r * (s - 1) : r * s;
            const auto in_band = [&](u64 i, u64 p) {
                const u64 m = i % p;
                return m >= p - before || m < after;
            };
            // The tile: the largest power of two from 32 whose band holds every wrong element
            // (a smaller one's bands hold them too, so it is not the learner's tile). Tried
            // from the largest whose bands hold the first, the last and the listed mismatches,
            // below twice n (a larger tile says nothing of the array), and whose bands cover
            // less than half of it (a wider band would say little).
            const auto fits_known = [&](u64 p) {
                if (!in_band(c.first, p) || !in_band(c.last, p)) return false;
                for (const auto& m : c.samples)
                    if (!in_band(m.index, p)) return false;
                return true;
            };
            // At most 20 compares, of a failing case: far fewer where the first wrong element
            // is not at the start of the array. Some wrong element must lie at an edge other
            // than position 0 (wrong outputs only at the start are the boundary rule's).
            u64 period = 0;
            for (u64 p = u64{1} << 24; p >= 32 && 2 * (before + after) < p; p /= 2) {
                if (p >= 2 * n() || c.last + before < p || !fits_known(p)) continue;
                const Comparison off =
                    radius() * steps() <= 16
                        ? compare(out_.get(), n(),
                                  EvolvedOffTileEdges<16>{evolved<16>(steps(), false), out_.get(),
                                                          p, before, after},
                                  stream())
                        : compare(out_.get(), n(),
                                  EvolvedOffTileEdges<kMaxRadius * 10>{
                                      evolved<kMaxRadius * 10>(steps(), false), out_.get(), p,
                                      before, after},
                                  stream());
                if (off.wrong == 0) {
                    period = p;
                    break;
                }
            }
            if (period == 0) continue;
            // Shown alone only where the band is narrow: at most a quarter of the tile.
            const bool shown = alone && 4 * (before + after) <= period;
            const std::string p = std::to_string(period), rs = std::to_string(r);
            const std::string where =
                at_end ? "the last R = " + rs + " of a tile of " + p + " cells (k·" + p + " - " +
                             rs + " .. k·" + p + " - 1)"
                       : "the first R = " + rs + " of a tile of " + p + " cells (k·" + p +
                             " .. k·" + p + " + " + rs + " - 1)";
            const std::string spread =
                s == 1 ? ""
                       : " (after " + std::to_string(s) +
                             " time steps: the first step's error spreads R cells each way per "
                             "step, so every wrong output is within " +
                             std::to_string(before) + " before the edge of a tile or " +
                             std::to_string(after) + " from it)";
            const std::string halo =
                at_end ? "the right halo: the R cells after the tile, x[b0 + " + p + " .. b0 + " +
                             p + " + R), through load() where they lie past n"
                       : "the left halo: the R cells before the tile, x[b0 - R .. b0), "
                         "through load() where they lie before 0";
            if (shown)
                o.explain("The wrong outputs are " + where + spread +
                          ", and every other output is right: those are the outputs that read " +
                          halo + ".");
            o.clue.key = std::string(at_end ? "tile-end:" : "tile-start:") + p;
            o.clue.fact = "wrong only at the " + std::string(at_end ? "end" : "start") +
                          " of each tile of " + p + " (its " + (at_end ? "last" : "first") +
                          " R outputs: the " + (at_end ? "right" : "left") + " halo)";
            o.clue.advice =
                "In every failing case the wrong outputs lie at the " +
                std::string(at_end ? "end" : "start") + " of a tile of " + p + " cells: the " +
                (at_end ? "last" : "first") +
                " R (the radius), or with several time steps within R·steps of that edge; every "
                "other output is right, and some of the wrong ones are far from both ends of the "
                "array, so the boundary rule is not the cause. Look at " +
                halo + ": each block loads it itself, before its barrier.";
            o.clue.alone = shown;
            return true;
        }
        return false;
    }
    bool weights_symmetric() const {
        for (std::size_t k = 0; k < weights_.size(); ++k)
            if (weights_[k] != weights_[weights_.size() - 1 - k]) return false;
        return true;
    }
};
CUDALINGS_PROBLEM(Stencil);

// The speed of light of every timed problem: a copy of in to out, which reads and writes the n
// floats any stencil must (the library baseline "memcpy", with stencil_1d's signature, is
// judged as what it is: a copy). No step is checked with this problem.
struct CopiedIn {
    const float* in;
    __host__ __device__ Want operator()(u64 i) const { return Want::exactly_as(in[i]); }
};

class StencilCopy : public StencilProblem {
  public:
    static constexpr const char* kName = "stencil_copy";
    static constexpr const char* kSymbol = "stencil_1d";
    static std::vector<Case> cases() {
        return {stencil_case(1, dist::uniform, 1, kZero, 1),
                stencil_case(1000, dist::wide, 8, kClamp, 1),
                stencil_case((u64{1} << 20) + 3, dist::uniform, 1, kZero, 8)};
    }
    static std::vector<Case> timed() { return Stencil::timed(); }
    using StencilProblem::StencilProblem;
    Outcome judge() override {
        return judge_values(compare(out_.get(), n(), CopiedIn{in_}, stream()),
                            "bit-exact: a copy of in (the speed of light of the timed problems, "
                            "not a stencil)");
    }
};
CUDALINGS_PROBLEM(StencilCopy);

}  // namespace
