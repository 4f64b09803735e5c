// The runner's emulated backend (cudalings-runner-emu, program.h): the CPU emulator runs the
// learner's kernels, in this process or (the judge split) in the learner's. What it finds during
// a case (races, out-of-bounds accesses, deadlocks, "slow") joins the case's result
// (emulator_adapter.h), the larger case can run again with the race checks on, and the sizes too
// large to emulate are checked for their launches (below). Nothing is timed here, and there is
// no profiler.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "emulator_adapter.h"
#include "program.h"

using namespace cudalings;

namespace runner {
namespace {

// How the emulator's watchdog sends a case's result from its own thread, the process's last.
void send_last_result(const CaseResult& r) {
    emit(event_json(r));
    emit_event(Marker::Done);
}

constexpr unsigned kSampleBlocks = 4;
constexpr double kSampleSeconds = 0.1;

// At most `cap` of the elements in `ranges`, spread over all of them: whole ranges when they fit,
// else the two ends of each (a block's first and last elements), else every k-th range's first
// two. A judge that reads its inputs all over (a scatter's inverse) makes a page of them per
// element: the cap keeps that to a few MiB.
kit::detail::ElementRanges spread(const std::vector<std::pair<std::size_t, std::size_t>>& ranges,
                                  kit::u64 cap) {
    kit::detail::ElementRanges out;
    kit::u64 total = 0;
    for (const auto& [lo, hi] : ranges) total += hi - lo;
    if (total <= cap) {
        for (const auto& [lo, hi] : ranges) out.emplace_back(lo, hi);
        return out;
    }
    const kit::u64 count = ranges.size();
    if (count * 4 <= cap) {
        const kit::u64 half = cap / (2 * count);
        for (const auto& [lo, hi] : ranges) {
            if (hi - lo <= 2 * half) {
                out.emplace_back(lo, hi);
                continue;
            }
            out.emplace_back(lo, lo + half);
            out.emplace_back(hi - half, hi);
        }
        return out;
    }
    const kit::u64 step = (count + cap / 2 - 1) / (cap / 2);
    for (kit::u64 k = 0; k < count; k += step) {
        const auto& [lo, hi] = ranges[k];
        out.emplace_back(lo, std::min<kit::u64>(hi, lo + 2));
    }
    if ((count - 1) % step) out.emplace_back(ranges.back().first, ranges.back().second);
    return out;
}
constexpr kit::u64 kSampleJudged = 16384;  // elements judged per output, at most

// A sampled_values problem's outputs after its sampled call: the elements the sampled blocks
// wrote, judged as at every other size (the inputs they need made where they are read). Only
// when every launch of the call ran its sample (a later launch, memset or copy skipped because
// the sample had changed memory leaves the outputs half made: nothing is judged then). Returns
// the number of elements judged; a WRONG outcome fills `result`.
kit::u64 judge_sample(kit::Problem& p, const kit::Case& c, const cudalings_emu::Options& before,
                      bool split, CaseResult& result) {
    if (sample_skips(split) != 0) return 0;
    cudalings_emu::Options judging = before;
    judging.dry = false;
    judging.check = judging.explain = false;
    judging.sample_blocks = 0;
    // The judge's own kernels: no time limit (they fault in the pages of inputs they read, one
    // at a time, where a gather reads them all over).
    judging.time_limit_seconds = 0;
    cudalings_emu::set_options(judging);
    kit::u64 judged = 0;
    kit::detail::set_sampled_ranges([&](const void* got, kit::detail::ElementRanges* out) {
        *out = spread(written_words(got, split), kSampleJudged);
        for (const auto& [lo, hi] : *out) judged += hi - lo;
        return true;
    });
    kit::Outcome o;
    try {
        o = p.judge();
    } catch (...) {
        kit::detail::set_sampled_ranges(nullptr);
        throw;
    }
    kit::detail::set_sampled_ranges(nullptr);
    if (o.pass()) return judged;
    fill(result, o);
    set_size(result, c);
    result.detail = "at " + c.shape.text() +
                    (c.params.label().empty() ? "" : ", " + c.params.label()) +
                    " only (every smaller case passed): a size too large to emulate whole, where "
                    "a few blocks of each launch ran; the elements they wrote were judged (" +
                    std::to_string(result.checked) + " of " + std::to_string(c.n()) +
                    "), with the inputs they read made as at every other size. Right at the "
                    "smaller sizes and wrong here: look for what changes with the size (an index "
                    "or a count in 32 bits, a test against a fixed size, a grid or loop bound "
                    "sized for the small cases)" +
                    (result.detail.empty() ? "" : "\n" + result.detail);
    return judged;
}

}  // namespace

// Emulation's last case: the step called once at each size too large to emulate, in the
// emulator's dry mode (every launch checked against a GPU's limits, buffers never filled). A
// grid laid out for the small sizes that a GPU refuses at the large ones (gridDim.y above 65535
// on a 2^22 x 4 matrix, say) fails here as it does on a GPU. Each launch also runs a sample of
// its blocks at the real geometry, bounds checks on (Options::sample_blocks: the first block, the
// last, two picked by the case's seed, a tenth of a second in all): an index that goes out of
// bounds only at these sizes (a 32-bit product past 2^31) is a MEMORY_ERROR. Nothing else a
// partial run on memory never filled does is a verdict, and the values are a GPU's to check.
void backend::launch_only(Driver& driver, const std::vector<kit::Case>& sizes, int index,
                          const std::string& name, void* fn, const CheckArgs& args,
                          const kit::ProblemInfo& problem, bool split) {
    const kit::u64 seed = args.seed;
    const bool sampled_values = problem.sampled_values;
    CaseResult result;
    result.index = index;
    result.name = name;
    result.n = sizes.back().n();
    result.size = sizes.back().shape.text();
    emit(event_json(CaseStartEvent{index, result.name, result.n, result.size}));
    begin_case(result, send_last_result);
    on_stuck(report_stuck_in_sample);
    const cudalings_emu::Options before = cudalings_emu::get_options();
    cudalings_emu::Options dry = before;
    dry.dry = true;
    dry.check = dry.explain = false;
    dry.sample_blocks = 0;  // the lesson kit's own launches (inputs) are not run
    cudalings_emu::Options sampled = dry;
    sampled.sample_blocks = kSampleBlocks;
    sampled.sample_seed = seed;
    sampled.sample_seconds = kSampleSeconds;
    result.verdict = Verdict::Pass;
    result.detail =
        "each launch of your step at these sizes was checked against a GPU's limits (grid and "
        "block dimensions, shared memory), and a few of its blocks ran with bounds checks on "
        "(the values at these sizes are a GPU's to check)";
    std::vector<cudalings_emu::Diagnostic> found;
    const kit::Case* out_of_bounds_at = nullptr;
    kit::u64 judged = 0;
    bool wrong = false;
    for (const auto& c : sizes) {
        bool stop = false;
        cudalings_emu::set_options(dry);
        std::unique_ptr<kit::Problem> p;
        try {
            p = driver.launch_only(c, fn, seed, sampled_values,
                                   [&] { cudalings_emu::set_options(sampled); });
        } catch (const LearnerError& e) {
            result.verdict = Verdict::Crash;
            result.reason = dev::error_name(e.code);
            result.detail =
                std::string(e.returned ? "returned by your function" : "left by a launch") +
                " at " + c.shape.text() +
                (c.params.label().empty() ? "" : ", " + c.params.label()) +
                ", a size checked for its launches only (a GPU " +
                "refuses this launch too): " + explain(e.code);
            stop = true;
        } catch (const dev::Error& e) {  // the emulator's own memory, say: no verdict
            result.verdict = Verdict::Skipped;
            result.reason = std::string("not checked: ") + e.what();
            stop = true;
        }
        auto now = take_findings();
        const bool out_of_bounds = std::any_of(
            now.begin(), now.end(), [](const auto& d) { return d.kind == "out-of-bounds"; });
        found.insert(found.end(), now.begin(), now.end());
        if (p && sampled_values && !stop && !out_of_bounds) {
            try {
                judged += judge_sample(*p, c, before, split, result);
                wrong = result.verdict == Verdict::Wrong;
            } catch (const dev::Error& e) {  // the emulator's own memory, say: no verdict
                result.verdict = Verdict::Skipped;
                result.reason = std::string("not checked: ") + e.what();
                stop = true;
            }
            take_findings();  // the judge's own kernels' (none: checks are off)
        }
        cudalings_emu::set_options(dry);
        p.reset();
        if (wrong) break;
        if (out_of_bounds) {
            out_of_bounds_at = &c;
            result.verdict = Verdict::Pass;  // the finding decides (MEMORY_ERROR)
            result.reason.clear();
            result.detail.clear();
        }
        if (stop || out_of_bounds) {
            set_size(result, c);
            break;
        }
    }
    attach_emulator_findings(result, found);
    if (result.verdict == Verdict::Pass && !out_of_bounds_at && sampled_values && judged)
        result.detail =
            "each launch of your step at these sizes was checked against a GPU's limits (grid and "
            "block dimensions, shared memory), and a few of its blocks ran with bounds checks on; "
            "the elements they wrote have the right values (" +
            std::to_string(judged) + " judged)";
    if (out_of_bounds_at) {
        const kit::Case& c = *out_of_bounds_at;
        result.detail =
            "at " + c.shape.text() + (c.params.label().empty() ? "" : ", " + c.params.label()) +
            " only (every smaller case passed): a size too large to emulate whole, where a few "
            "blocks of each launch ran. An index that is right at the smaller sizes and lands "
            "outside the array here is most likely computed in 32 bits and overflows (an int "
            "product such as n * t passes 2^31 and turns negative): compute it in 64 bits "
            "(size_t, or cast one factor first)\n" +
            result.detail;
    }
    cudalings_emu::set_options(before);  // the checks too, not only dry mode
    emit(event_json(result));
}

void backend::before_key(int, char**) {}
std::unique_ptr<Split> backend::take_early_learner() { return nullptr; }
void backend::learner_started(Split& split) { connect_learner(split); }

std::vector<kit::Case> backend::launch_only_cases(const Driver& driver, const CheckArgs& args) {
    if (!args.large_n) return {};
    return driver.launch_only_cases(args.large_n, args.timed_size);
}

// A CUDA thread that never ends is reported from the watchdog's thread.
void backend::case_starting(const CaseResult& result) { begin_case(result, send_last_result); }

// The larger case runs for its values: the race checks (and explain's records) cost more than a
// million threads can afford; bounds stay on.
void backend::large_case_starting() {
    cudalings_emu::Options values_only = cudalings_emu::get_options();
    values_only.check = values_only.explain = false;
    cudalings_emu::set_options(values_only);
}

// The emulator's findings (races, bounds, deadlocks) with file:line.
void backend::attach_findings(CaseResult& result) { attach_emulator_findings(result); }

// The case's time budget ran out: in the learner's kernels, or in the runner's own (its guards
// and checks of the outputs run on the emulated device too).
bool backend::too_slow(const CaseResult& result) { return too_slow_to_emulate(result); }

bool backend::rerun_with_race_checks(const std::function<void()>& run) {
    const cudalings_emu::Options values_only = cudalings_emu::get_options();
    cudalings_emu::Options checked = values_only;
    checked.check = true;
    cudalings_emu::set_options(checked);
    run();
    cudalings_emu::set_options(values_only);
    return true;
}

// A timed check under the emulator (the checker asks for none): the reference is the one loaded in
// this process, if any, timed beside the step as before the judge split.
backend::Timing backend::timing(const CheckArgs&, LoadedStep&, void* loaded) {
    Timing t;
    t.reference = loaded;
    return t;
}
void backend::timing_over(LoadedStep&) {}

bool backend::profiler(std::function<void()>*, std::function<void()>*) { return false; }
int backend::leave(int code) { return code; }  // no GPU context to tear down: the ordinary exit

}  // namespace runner
