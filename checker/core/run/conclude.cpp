#include "conclude.h"

#include "cases.h"
#include "stats.h"

namespace cudalings {
namespace {

// A timed problem that makes a correct step fail: a wrong timed output, two clocks that
// disagree, work left on another stream, or a time below what the memory system allows.
bool timing_verdict(const TimingResult& t, Verdict& verdict, std::string& reason) {
    const std::string which = t.column.empty() ? "" : " (" + t.column + ")";
    if (!t.verified) {
        verdict = t.failure.verdict == Verdict::MemoryError ? Verdict::MemoryError : Verdict::Wrong;
        reason = "timed call " + std::to_string(t.failed_sample + 1) + which + " (fresh inputs, " +
                 t.size + ") was wrong: " +
                 (t.failure.reason.empty() ? std::string("values") : t.failure.reason) +
                 " — every timed call must compute the result";
        return true;
    }
    // First the GPU's sharing, which also makes the clocks disagree: the more specific news.
    if (canary_slowed(t.flush_us, t.flush_before_us)) {
        verdict = Verdict::Suspect;
        reason = "the GPU was busy with other work between your calls" + which +
                 ": the checker's own work there took " + format_time_us(t.flush_us) +
                 ", against " + format_time_us(t.flush_before_us) +
                 " before your code was loaded (a kernel your code left running after its call "
                 "returned, or another process using this GPU): the times cannot be trusted";
        return true;
    }
    // The reference is timed only while no process of the learner's is on the GPU: one there
    // then (a child the learner's code started, that outlived its process) or another user's.
    if (t.others_on_gpu > 0) {
        verdict = Verdict::Suspect;
        reason = "another process was using this GPU while the reference was timed" + which + " (" +
                 std::to_string(t.others_on_gpu) +
                 " beyond the checker's own: a process your code started that outlived it, or "
                 "another program on this GPU): the comparison cannot be trusted. Check again "
                 "with the GPU to yourself";
        return true;
    }
    // Through the judge split the events are the learner's process's word, and the judge knows
    // its round trip's cost: the claim must match what its clock saw.
    const bool remote = t.host_overhead_us > 0;
    const ClockCheck clocks = remote ? cross_check_claim(t.learner.median_us, t.host_median_us,
                                                         t.host_overhead_us, t.host_overhead_iqr_us)
                                     : cross_check_clocks(t.learner.median_us, t.host_median_us);
    if (remote && clocks == ClockCheck::HostLonger) {
        verdict = Verdict::Suspect;
        reason = "the time the process running your code reported" + which + " (" +
                 format_time_us(t.learner.median_us) +
                 " on its events) is far below what the "
                 "checker's own clock saw (" +
                 format_time_us(t.host_median_us - t.host_overhead_us) + " after its " +
                 format_time_us(t.host_overhead_us) +
                 " round trip): the time cannot be trusted. Another process using this GPU at the "
                 "same time delays the GPU's start and causes this too: check again with the GPU "
                 "to yourself";
        return true;
    }
    if (clocks != ClockCheck::Agree) {
        verdict = Verdict::Suspect;
        reason =
            "the host clock and the GPU's events disagree" + which + ": " +
            format_time_us(t.learner.median_us) + " on the events, " +
            format_time_us(t.host_median_us) + " on the host clock (" +
            (clocks == ClockCheck::HostLonger ? "the call spends time the GPU's clock does not see"
                                              : "the events report more time than passed") +
            "): the time cannot be trusted" +
            (clocks == ClockCheck::HostLonger
                 ? ". Another process using this GPU at the same time (another check, a second "
                   "grading worker, a training job) delays the GPU's start and causes this too: "
                   "check again with the GPU to yourself"
                 : "");
        return true;
    }
    if (t.outside_stream) {
        verdict = Verdict::Suspect;
        reason = "work went on after the step's stream was done" + which +
                 " (another stream?): all GPU work must go on the stream the step is given; the "
                 "time counts until the whole device was idle";
        return true;
    }
    // Allow for run-to-run variation of the copy rate (reads alone can beat a copy by a few
    // percent): only a time well below the floor is impossible.
    const double floor = t.floor_us();
    if (floor > 0 && t.learner.median_us < 0.85 * floor) {
        verdict = Verdict::Suspect;
        reason = "faster than this GPU's memory system allows" + which + " (" +
                 format_time_us(t.learner.median_us) + " < floor " + format_time_us(floor) +
                 "): not a record";
        return true;
    }
    return false;
}

// The clue that every failing case carries (kit::Clue): at least two failing cases, every one
// WRONG with the same key, and at least one whose mismatches fit nothing else. Its words are
// those of the first case that shows it alone. Null when the evidence does not fit one cause.
const CaseClue* common_clue(const std::vector<CaseResult>& cases) {
    const CaseClue* found = nullptr;
    int failing = 0;
    for (const auto& c : cases) {
        if (c.verdict == Verdict::Pass || c.verdict == Verdict::Skipped) continue;
        if (c.verdict != Verdict::Wrong || c.clue.key.empty()) return nullptr;
        if (found && c.clue.key != found->key) return nullptr;
        ++failing;
        if (!found || (c.clue.alone && !found->alone)) found = &c.clue;
    }
    return failing >= 2 && found->alone ? found : nullptr;
}

}  // namespace

void conclude(StepReport& r) {
    if (r.verdict == Verdict::SetupError) return;  // the machine's fault, said where it was found
    r.pattern.clear();
    if (!r.load_error.empty()) {
        r.verdict = Verdict::CompileError;
        r.reason = "the built file cannot be used: " + r.load_error;
        return;
    }
    if (!r.internal_error.empty() && r.cases.empty()) {
        r.verdict = Verdict::InternalError;
        r.reason = r.internal_error;
        return;
    }
    Verdict verdict = Verdict::Pass;
    bool only_wrong = true, ran_only_wrong = true, all_shapes = true;
    std::vector<SizeOutcome> sizes;
    std::vector<ShapeOutcome> shapes;
    for (const auto& c : r.cases) {
        if (c.verdict != Verdict::Skipped) verdict = worst(verdict, c.verdict);
        if (c.verdict != Verdict::Pass && c.verdict != Verdict::Wrong) only_wrong = false;
        sizes.push_back({c.n, c.verdict == Verdict::Pass});
        // Shapes: the cases that ran, which is all a pattern can be seen in (under emulation the
        // larger shapes are not run once a smaller one failed).
        if (c.verdict == Verdict::Skipped) continue;
        if (c.verdict != Verdict::Pass && c.verdict != Verdict::Wrong) ran_only_wrong = false;
        if (c.cols)
            shapes.push_back({c.rows, c.cols, c.verdict == Verdict::Pass});
        else
            all_shapes = false;
    }
    // 2-D cases: patterns of shapes (a size pattern of rows · cols would mislead).
    std::string fact;  // a fact of every case, put before the first failing case in the reason
    if (!shapes.empty()) {
        if (ran_only_wrong && all_shapes) {
            r.pattern = shape_pattern_hint(shapes);
            if (only_non_square_fail(shapes))
                fact = "only the non-square shapes fail (every square one passed)";
        }
    } else if (only_wrong) {
        r.pattern = size_pattern_hint(sizes);
    }
    // A likely cause that every failing case fits, from the lesson's judge.
    if (fact.empty() && verdict == Verdict::Wrong)
        if (const CaseClue* clue = common_clue(r.cases)) {
            fact = clue->fact;
            r.pattern = clue->advice;
        }
    r.reason.clear();
    if (verdict != Verdict::Pass) {
        for (const auto& c : r.cases)
            if (c.verdict == verdict) {
                r.reason =
                    c.name + ": " + (c.reason.empty() ? std::string(name(c.verdict)) : c.reason);
                break;
            }
        if (!fact.empty() && verdict == Verdict::Wrong)
            r.reason = fact + "; the first: " + r.reason;
    } else if (r.timing_verdict != Verdict::Pass) {
        verdict = r.timing_verdict;
        r.reason = "during timing: " + r.timing_error;
    } else {
        for (const auto& t : r.timings)
            if (timing_verdict(t, verdict, r.reason)) break;
    }
    if (!r.findings.empty() && (verdict == Verdict::Pass || verdict == Verdict::Suspect ||
                                severity(verdict) < severity(Verdict::MemoryError))) {
        const auto& f = r.findings.front();
        verdict = Verdict::MemoryError;
        // The hazard pass (check.cpp) reports the CPU emulator's findings as tool "emulator".
        r.reason =
            f.tool == "emulator"
                ? "hazard (CPU emulator), line " + std::to_string(f.line) + ": " + f.message
                : "sanitizer (" + f.tool + "): " + f.message + " at line " + std::to_string(f.line);
    }
    // A failed step's times are not shown: they time something wrong.
    if (verdict != Verdict::Pass && verdict != Verdict::Suspect) r.timings.clear();
    r.verdict = verdict;
    r.advice = advice_for(r.advice_by_verdict, std::string(name(verdict)), r.reason);
}

std::string advice_for(const std::vector<std::pair<std::string, std::string>>& advice,
                       const std::string& verdict, const std::string& reason) {
    std::string plain, qualified;
    for (const auto& [key, words] : advice) {
        const auto slash = key.find('/');
        if (key.substr(0, slash) != verdict) continue;
        if (slash == std::string::npos) {
            plain = words;
            continue;
        }
        // "VERDICT/a|b": only when the reason names a or b.
        const std::string alternatives = key.substr(slash + 1);
        for (size_t at = 0; at <= alternatives.size();) {
            size_t bar = alternatives.find('|', at);
            if (bar == std::string::npos) bar = alternatives.size();
            const std::string word = alternatives.substr(at, bar - at);
            if (!word.empty() && qualified.empty() && reason.find(word) != std::string::npos)
                qualified = words;
            at = bar + 1;
        }
    }
    return qualified.empty() ? plain : qualified;
}

}  // namespace cudalings
