// Checks of lesson 05 (scan): two entry points, one problem each.
//   tile_scan       steps 1-3  every tile of kTile = 1024 elements scanned on its own
//   inclusive_scan  steps 4-7  the whole array, with a workspace
//
// Expected values. Element i must be the prefix x[0] + ... + x[i] (for a tile scan, from the
// first element of its tile). Nothing of size n is stored for it: the compare walks runs of 1024
// elements, each thread one run, adding in double as it goes. For the device scan each run starts
// from its carry, the exact sum of everything before it, which a pre-pass computes (one thread
// per run adds the run in double; the host scans those n / 1024 sums).
//
// Tolerances. Every case runs twice, once with integers and once with floats.
//   - Integers in [-8, 8]: every prefix, and every sum of consecutive elements, is an integer
//     of magnitude below 2^24 (checked for each input), where float addition is exact in any
//     order. The result must match bit for bit. These cases catch an exclusive scan, a missing
//     or doubled carry and an off-by-one tile at every position and every size.
//   - Floats: element i may differ from the exact prefix by γ(k)·S, k = min(m - 1, 4·√m), where
//     m is the number of terms of the prefix (i + 1, or i's position in its tile + 1), S the sum
//     of their magnitudes, u = 2^-24 and γ(k) = k·u / (1 - k·u). Any order of the m - 1 additions
//     errs by at most γ(m - 1)·S (the bound for short prefixes); rounding errors that do not all
//     lean one way grow like √m, and 4·√m allows any sensible order (lesson 04's bound for whole
//     sums). The design's measurements put CUB and the references near 0.4·u·√m·S.
// Data whose errors lean one way at every addition (non-integer all-equal values) are not used.
//
// Stress: the integer cases at 2^24 and 2^20 call the step 10 times on one input, each call
// bit-exact: a race between blocks (a status word read before its value arrives) shows as a call
// that differs. Under emulation the 2^20 case is the one large case (capped), and each of its
// calls starts the blocks in another shuffled order.
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kit.h"
#include "scan.cuh"

namespace {

using namespace kit;

constexpr double kUnitRoundoff = 1.0 / 16777216.0;  // 2^-24: float's relative rounding error
constexpr double kExactLimit = 16777216.0;          // 2^24: integers up to here are floats

// γ_k = k·u / (1 - k·u): the first-order bound k·u, made rigorous.
__host__ __device__ inline double gamma_k(double k) {
    return k * kUnitRoundoff / (1.0 - k * kUnitRoundoff);
}

// How far a float prefix of m terms whose magnitudes add up to s may be from the exact one.
__host__ __device__ inline double prefix_bound(double m, double s) {
    const double worst = m - 1, walk = 4 * sqrt(m);
    return gamma_k(worst < walk ? worst : walk) * s;
}

// ---------------------------------------------------------------- the expected prefixes
// Everything before a run of kTile elements: the exact sum and the sum of magnitudes.
struct Carry {
    double sum, magnitude;
};

// One run of kTile elements: its sum and sum of magnitudes, and the lowest and highest of its
// prefixes taken from the run's start (for the range check of integer data).
struct RunStats {
    double sum, magnitude, low, high;
};

__global__ void run_stats_kernel(const float* x, u64 n, RunStats* out) {
    const u64 runs = (n + kTile - 1) / kTile;
    for (u64 r = blockIdx.x * u64{blockDim.x} + threadIdx.x; r < runs;
         r += u64{gridDim.x} * blockDim.x) {
        const u64 end = (r + 1) * kTile < n ? (r + 1) * kTile : n;
        RunStats s{0, 0, 0, 0};
        for (u64 i = r * kTile; i < end; ++i) {
            const double v = x[i];
            s.sum += v;
            s.magnitude += fabs(v);
            s.low = s.sum < s.low ? s.sum : s.low;
            s.high = s.sum > s.high ? s.sum : s.high;
        }
        out[r] = s;
    }
}

// What element i must be: walked along runs of kTile elements. With `carry`, the whole array's
// prefix (each run starts from its carry); without, each tile's own. `shift` 1 asks for the
// exclusive prefix instead (the elements before i), to name that mistake when it is made.
struct Prefix {
    const float* x;
    const Carry* carry;  // null: every tile on its own
    bool exact;
    int shift = 0;
    static constexpr u64 kRun = kTile;
    struct State {
        double sum = 0, magnitude = 0;
        u64 first = 0;  // the first element of the prefix
    };
    __host__ __device__ State start(u64 first) const {
        State s;
        if (carry) {
            s.sum = carry[first / kRun].sum;
            s.magnitude = carry[first / kRun].magnitude;
        } else {
            s.first = first;
        }
        return s;
    }
    __host__ __device__ Want next(State& st, u64 i) const {
        const double v = x[i], before = st.sum, magnitude_before = st.magnitude;
        st.sum += v;
        st.magnitude += fabs(v);
        const double value = shift ? before : st.sum;
        if (exact) return Want::exactly_as(static_cast<float>(value));
        const double m = static_cast<double>(i - st.first + 1 - shift);
        return Want::near(value,
                          m < 1 ? 0 : prefix_bound(m, shift ? magnitude_before : st.magnitude));
    }
};

const char* const kExactWhy =
    "bit-exact: the elements are integers in [-8, 8], so every prefix, and every sum of "
    "consecutive elements, is an integer of magnitude below 2^24 (checked for this input), where "
    "float addition is exact in any order";

const char* const kFloatWhy =
    "element i within γ(k)·S of the exact prefix (in double), k = min(m - 1, 4·√m), where m is "
    "the prefix's number of terms, S the sum of their magnitudes, u = 2^-24 and γ(k) = k·u / "
    "(1 - k·u): any order of m - 1 float additions errs by at most γ(m - 1)·S (the bound for "
    "short prefixes), and rounding errors that do not all lean one way grow like √m, so 4·√m "
    "allows any sensible order (lesson 04's bound for whole sums). A missing or doubled tile can "
    "hide in that on large one-sign data: the integer cases check every position bit for bit";

// Every size twice: integers in [-8, 8] (bit-exact), then a float distribution, rotating over
// signed, one-sign, many magnitudes, and offset and scale.
std::vector<Case> twice(const std::vector<u64>& sizes) {
    const Dist floats[] = {dist::uniform, dist::positive, dist::wide, dist::offset_scale};
    std::vector<Case> out;
    for (std::size_t k = 0; k < sizes.size(); ++k) {
        out.push_back(Case::of(sizes[k], dist::tiny_integers));
        out.push_back(Case::of(sizes[k], floats[k % 4]));
    }
    return out;
}

constexpr u64 kMi = u64{1} << 20;

// What both problems share: the input, the output, the expected prefixes and the judge.
class ScanProblem : public Problem {
  public:
    ScanProblem(const Case& c, const Setup& s, bool whole)
        : Problem(c, s), x_(*this, "in", n(), c.dist), out_(*this, "out", n()), whole_(whole) {
        out_.on_overrun(
            "The last tile is usually partial: load and store it element by element (i < n), "
            "never a whole float4 or a whole tile past n.");
        if (whole_) carries_ = std::make_unique<dev::Array<Carry>>(runs());
    }
    void expect() override {
        if (!whole_) return;  // a tile's prefixes need nothing before them (|prefix| <= 8192)
        dev::Array<RunStats> stats(runs());
        run_stats_kernel<<<grid_for(runs()), 256, 0, stream()>>>(x_.get(), n(), stats.get());
        DEV_CHECK(cudaGetLastError());
        dev::sync_stream(stream());
        std::vector<RunStats> host(runs());
        dev::copy_to_host(host.data(), stats.get(), host.size() * sizeof(RunStats));
        // The carries, and the range of the whole array's prefixes (0, the empty one, included):
        // when it spans less than 2^24, every sum of consecutive elements is below 2^24.
        std::vector<Carry> carries(runs());
        double sum = 0, magnitude = 0, low = 0, high = 0;
        for (std::size_t r = 0; r < host.size(); ++r) {
            carries[r] = {sum, magnitude};
            low = std::fmin(low, sum + host[r].low);
            high = std::fmax(high, sum + host[r].high);
            sum += host[r].sum;
            magnitude += host[r].magnitude;
        }
        if (exact() && !(high - low < kExactLimit))
            throw std::runtime_error("scan: the integer data of " + test().label() +
                                     " have prefixes 2^24 apart or more: not exact in floats");
        DEV_CHECK(cudaMemcpyAsync(carries_->get(), carries.data(), carries.size() * sizeof(Carry),
                                  cudaMemcpyHostToDevice, stream()));
        dev::sync_stream(stream());  // `carries` goes out of scope
    }
    Outcome judge() override {
        const Comparison cmp = compare(out_.get(), n(), expected(0), stream());
        Outcome o = judge_values(cmp, exact() ? kExactWhy : kFloatWhy);
        if (!o.pass()) diagnose(o, cmp);
        return o;
    }
    Traffic traffic() const override { return Traffic().read<float>(n()).write<float>(n()); }

  protected:
    Input<float> x_;
    Output<float> out_;

  private:
    u64 runs() const { return (n() + kTile - 1) / kTile; }
    bool exact() const { return test().dist == dist::tiny_integers; }
    Prefix expected(int shift) const {
        return Prefix{x_, whole_ ? carries_->get() : nullptr, exact(), shift};
    }
    // The mistakes a learner can act on, named where the mismatches show them.
    void diagnose(Outcome& o, const Comparison& cmp) {
        const char* scope = whole_ ? "everything before it" : "the elements of its tile before it";
        if (cmp.unwritten < cmp.wrong &&
            compare(out_.get(), n(), expected(1), stream()).wrong == 0) {
            o.reason = "exclusive scan";
            o.detail = std::string("Every element holds the sum of ") + scope +
                       ", without itself: an exclusive scan. This step asks for the inclusive "
                       "one, out[i] = ... + in[i]: add each element's own value (a down-sweep "
                       "leaves the exclusive scan; the value below a lane is exclusive too).";
            return;
        }
        for (const auto& m : cmp.samples)
            if (m.got == "NaN") {
                o.detail += whole_ ? " A NaN that is not the checker's never-written marker was "
                                     "read from memory nobody wrote: the workspace is full of "
                                     "NaN at every call. Are the status words and the counter "
                                     "cleared (cudaMemsetAsync) before the kernel, and does a "
                                     "tile read only words its predecessors published?"
                                   : " A NaN that is not the checker's never-written marker: "
                                     "something was read before anything was written to it "
                                     "(shared memory holds garbage when a block starts).";
                return;
            }
        if (whole_ && cmp.first > 0 && cmp.first % kTile == 0 && cmp.unwritten < cmp.wrong)
            o.detail += " Everything before index " + std::to_string(cmp.first) +
                        " is right, and that index is a multiple of 1024, where tiles start: "
                        "the sum carried into a tile from the tiles before it (the add-back, "
                        "the carry, the look-back) is wrong or missing there.";
    }
    bool whole_;
    std::unique_ptr<dev::Array<Carry>> carries_;
};

// ---------------------------------------------------------------- steps 1-3: tile_scan
class TileScan : public ScanProblem {
  public:
    static constexpr const char* kName = "tile_scan";
    static constexpr const char* kSymbol = "tile_scan";
    // The standard sizes with one tile and a bit around 1024 and 2048: a partial tile alone
    // (1 .. 1023), one whole tile, a whole tile and a partial one.
    static std::vector<Case> cases() {
        return twice({1, 31, 32, 33, 255, 256, 257, 1000, 1023, 1024, 1025, 2047, kMi + 3,
                      u64{1} << 24, kTimedSize});
    }
    static std::vector<Case> timed() { return {Case::of(kTimedSize, dist::uniform)}; }
    TileScan(const Case& c, const Setup& s) : ScanProblem(c, s, false) {}
    cudaError_t call(void* fn, Side side) override {
        return entry<decltype(&tile_scan)>(fn)(x_, out_.at(side), n(), stream());
    }
};
CUDALINGS_PROBLEM(TileScan);

// ---------------------------------------------------------------- steps 4-7: inclusive_scan
class InclusiveScan : public ScanProblem {
  public:
    static constexpr const char* kName = "inclusive_scan";
    static constexpr const char* kSymbol = "inclusive_scan";
    // Beyond the tile sizes: 4 tiles of 1024 (a carry across 3+ tiles), 4 tiles of 8192 (step
    // 7's look-back window over several tiles), 2^20 and 2^20 + 1 (step 4's second level is one
    // whole tile, or spills into a third), 2^20 + 1025 (the first size where scanning the totals
    // as one tile gives wrong prefixes), a grid of thousands of blocks (5·2^20 + 7), and
    // 2^24 + 17. Under emulation every size up to 24581 runs, then the 2^20 integers capped.
    static std::vector<Case> cases() {
        // clang-format off
        std::vector<Case> out = twice({1, 31, 32, 33, 255, 256, 257, 1000, 1023, 1024, 1025, 2047,
                                       3 * 1024 + 1, 3 * 8192 + 5, kMi, kMi + 1, kMi + 3,
                                       kMi + 1025, 5 * kMi + 7, u64{1} << 24, (u64{1} << 24) + 17,
                                       kTimedSize});
        // clang-format on
        // Stress: ten calls on one integer input, each bit-exact, at 2^24 (4096 tiles of 4096,
        // 2048 of 8192) and at 2^20: under emulation that is the one large case, capped at
        // 2^16 + 3 (9 to 65 tiles), and each call runs the blocks in another shuffled order.
        for (auto& c : out)
            if ((c.n() == u64{1} << 24 || c.n() == kMi) && c.dist == dist::tiny_integers)
                c.repeated(10, false);
        return out;
    }
    static std::vector<Case> timed() { return {Case::of(kTimedSize, dist::uniform)}; }
    // The TIMEOUT advice by what the emulator saw (the reason's words, conclude.cpp): blocks
    // waiting for blocks that had not started, a thread looping without reading memory, every
    // block started and waiting; on a GPU nothing tells them apart, and the three causes stand.
    static Advice advice() {
        return {
            {"TIMEOUT",
             "A scan that never ends almost always waits for a status word that never "
             "changes. The three usual causes: (1) a tile that waits for a tile that never "
             "starts: take the tile number from an atomic counter (atomicAdd by thread 0), "
             "never from blockIdx.x, so that a block only waits for blocks that started "
             "before it (a home-made grid barrier hangs the same way); (2) a wait that "
             "polls a plain load, which the compiler may read once and never again: read "
             "status words through a volatile pointer (load_status); (3) status words or "
             "the counter not cleared: the workspace is full of NaN at every call, so "
             "cudaMemsetAsync them to 0 before the kernel."},
            {"TIMEOUT/blocks that had not started",
             "A block waits for a block that has not started: on a GPU a block may start "
             "only once earlier ones finish, so it waits for ever. Take the tile number from "
             "an atomic counter (atomicAdd by thread 0, shared with the block through shared "
             "memory), never from blockIdx.x: then a tile only waits for tiles whose blocks "
             "already run. A home-made grid barrier in one launch hangs the same way: split "
             "the work into two launches instead."},
            {"TIMEOUT/without touching memory",
             "A thread polls a value it never reads again: a plain load in a wait loop may be "
             "read once and kept in a register. Read status words through a volatile pointer "
             "(load_status), so that every round of the wait loads them anew."},
            {"TIMEOUT/every block had started",
             "Every block had started, and each waits for a status word that no block will "
             "write (the report names the words and the line that polls them). With tile "
             "numbers from the counter, look at which words are read: a look-back that reads a "
             "tile that does not exist (below tile 0, or past the tile it should stop at) "
             "waits for ever; so does one whose status words or counter were not cleared "
             "before the kernel (cudaMemsetAsync them to 0 at every call)."}};
    }
    InclusiveScan(const Case& c, const Setup& s)
        : ScanProblem(c, s, true), ws_(*this, "the workspace", scan_workspace_bytes(n())) {
        ws_.on_overrun(
            "It holds scan_workspace_bytes(n) bytes: the tile totals of every level (step 4), "
            "one float per chunk (step 5), or a counter and one 64-bit status word per tile of "
            "at least 1024 elements (steps 6-7). Something was written past that: more levels, "
            "chunks or tiles than it was sized for, or an index past the last tile.");
    }
    cudaError_t call(void* fn, Side side) override {
        return entry<decltype(&inclusive_scan)>(fn)(x_, out_.at(side), n(), ws_.at(side),
                                                    ws_.bytes(), stream());
    }

  private:
    Workspace ws_;
};
CUDALINGS_PROBLEM(InclusiveScan);

}  // namespace
