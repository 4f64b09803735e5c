// The runner built for the CPU emulator (cudalings-runner-emu): the emulator's findings during a
// case (races, out-of-bounds accesses, deadlocks, with the learner's file and line) become part
// of the case's result. The emulator knows nothing of the checker; this adapter is the one
// place that reads its diagnostics. Included by the emulated backend only (backend_emu.cu).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../core/run/protocol.h"
#include "cudalings_emu/emulator.h"
#include "data.h"
#include "emu_codec.h"
#include "split.h"

namespace runner {

// A wait that can never end is a hang on a GPU: the emulator saw it coming.
inline bool hangs_on_a_gpu(const std::string& kind) {
    return kind == "deadlock" || kind == "cross-block-wait" || kind == "grid-deadlock";
}

// The case in progress, and how the runner sends a case's result: the emulator's watchdog
// reports a CUDA thread that never ends from its own thread (the runner's is stuck in it).
// With the judge split, the learner's process runs the learner's kernels: what its emulator
// finds comes back with each call (learner_findings), a thread of its that never ends as a
// message (the handler of the moment, `stuck`, is called with it).
struct CaseInProgress {
    cudalings::CaseResult result;
    void (*send)(const cudalings::CaseResult&) = nullptr;  // sends the result and "done"
    void (*stuck)(const cudalings_emu::Diagnostic&) = nullptr;
    std::uint64_t epoch = 0;  // counts cases: the learner's process starts its time budget
    std::chrono::steady_clock::time_point started;
    std::vector<cudalings_emu::Diagnostic> learner_findings;
    // The judge split, at a sampled size: the words the learner's kernels wrote (its claim).
    cudalings::emu_codec::Written learner_written;
};
inline CaseInProgress& case_in_progress() {
    static CaseInProgress c;
    return c;
}

// The watchdog's handler, here and for the learner's process.
inline void on_stuck(void (*handler)(const cudalings_emu::Diagnostic&)) {
    case_in_progress().stuck = handler;
    cudalings_emu::set_stuck_handler(handler);
}

// The words written in the tracked output at `got` by the last call's kernels: this process's
// emulator's record, or (the judge split) what the learner's process said.
inline std::vector<std::pair<std::size_t, std::size_t>> written_words(const void* got,
                                                                      bool split) {
    if (!split) return cudalings_emu::written_words(got);
    for (const auto& [address, ranges] : case_in_progress().learner_written.outputs)
        if (address == reinterpret_cast<std::uintptr_t>(got)) return ranges;
    return {};
}

// Launches, memsets and copies skipped after a sample changed memory, in the last call: this
// process's emulator's count, or (the judge split) the learner's process's.
inline std::uint64_t sample_skips(bool split) {
    return split ? case_in_progress().learner_written.skips : cudalings_emu::sample_skips();
}

// What this process's emulator found, then what the learner's reported, since the last time.
inline std::vector<cudalings_emu::Diagnostic> take_findings() {
    std::vector<cudalings_emu::Diagnostic> found = cudalings_emu::take_diagnostics();
    auto& theirs = case_in_progress().learner_findings;
    found.insert(found.end(), theirs.begin(), theirs.end());
    theirs.clear();
    return found;
}

// Sends the case's result from the watchdog's thread and ends the process (the stuck thread
// cannot be stopped); the remaining cases are not run.
[[noreturn]] inline void send_and_exit(const cudalings::CaseResult& r) {
    if (case_in_progress().send) case_in_progress().send(r);
    std::fflush(nullptr);
    std::_Exit(0);
}

// The watchdog's handler: the case is a TIMEOUT with the line the thread loops at.
inline void report_stuck(const cudalings_emu::Diagnostic& d) {
    cudalings::CaseResult r = case_in_progress().result;
    r.verdict = cudalings::Verdict::Timeout;
    r.reason = "kernel did not finish: a thread loops without touching memory (it never ends)";
    r.detail = cudalings_emu::format({d});
    r.emulator.push_back({d.kind, d.severity, d.file, d.line, d.message, d.detail, d.count});
    send_and_exit(r);
}

// The same for a thread of a sampled block at a size emulated on a sample only (the
// launch-only case): it may wait for a value that blocks never run would have written, so it is
// no verdict; the case is not checked.
inline void report_stuck_in_sample(const cudalings_emu::Diagnostic& d) {
    cudalings::CaseResult r = case_in_progress().result;
    r.verdict = cudalings::Verdict::Skipped;
    r.reason =
        "not checked: a thread of a sampled block looped without touching memory (at these sizes "
        "only a sample of each launch's blocks runs, and it may wait for blocks that never ran)";
    r.detail = cudalings_emu::format({d});
    send_and_exit(r);
}

// Before each case: the emulator's time budget starts now (a launch still running when it
// is spent is "slow"), and the watchdog knows which case it would report.
inline void begin_case(const cudalings::CaseResult& c, void (*send)(const cudalings::CaseResult&)) {
    case_in_progress().result = c;
    case_in_progress().send = send;
    ++case_in_progress().epoch;
    case_in_progress().started = std::chrono::steady_clock::now();
    on_stuck(report_stuck);
    cudalings_emu::start_time_budget();
}

// The judge split under the emulator: the options of this process's emulator go with every call
// (the case's schedule, checks, sample), the marks of every loan (its array's extent and name,
// so an access into a guard zone is out of bounds there too), and what the learner's emulator
// found comes back. Its findings are its claims; they can only make its own verdict worse, but
// one: "slow" (too slow to emulate) leaves the large case unjudged, so it counts only when this
// process's clock saw the case's time budget spent.
inline void connect_learner(Split& split) {
    Split::Emulated e;
    e.setup = [] {
        cudalings::emu_codec::CallSetup s;
        s.options = cudalings_emu::get_options();
        s.poison = kit::kPoisonBits;
        s.epoch = case_in_progress().epoch;
        return cudalings::emu_codec::pack(s);
    };
    e.marks = [](const void* allocation) {
        cudalings_emu::Marks m;
        return cudalings_emu::allocation_marks(allocation, &m) ? cudalings::emu_codec::pack(m)
                                                               : std::string();
    };
    e.reports = [](const std::vector<std::string>& reports, double) {
        const double budget = cudalings_emu::get_options().time_limit_seconds;
        const double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                                           case_in_progress().started)
                                 .count();
        for (const auto& bytes : reports) {
            std::vector<cudalings_emu::Diagnostic> found;
            if (!cudalings::emu_codec::unpack(bytes, found)) continue;
            for (auto& d : found)
                if (d.kind != "slow" || (budget > 0 && spent >= 0.9 * budget))
                    case_in_progress().learner_findings.push_back(std::move(d));
        }
    };
    e.make = [](std::uint64_t address, std::uint64_t bytes) {
        cudalings_emu::make_on_demand(reinterpret_cast<const void*>(address), bytes);
    };
    e.written = [](const std::string& bytes) {
        auto& written = case_in_progress().learner_written;
        written = {};
        if (!bytes.empty() && !cudalings::emu_codec::unpack(bytes, written)) written = {};
    };
    e.stuck = [](const std::string& bytes) {
        std::vector<cudalings_emu::Diagnostic> found;
        if (cudalings::emu_codec::unpack(bytes, found) && found.size() == 1 &&
            case_in_progress().stuck)
            case_in_progress().stuck(found.front());  // does not return
    };
    split.emulated(std::move(e));
}

// The reason of a case the emulator stopped for time while it still made progress: not a
// verdict on the code where the case is beyond what the emulator can run (the larger case).
inline constexpr const char* kTooSlowToEmulate =
    "too slow under emulation (still making progress, not a hang)";
inline bool too_slow_to_emulate(const cudalings::CaseResult& r) {
    return r.verdict == cudalings::Verdict::Timeout && r.reason == kTooSlowToEmulate;
}

// CUDALINGS_EMU_MODE=pictures (a step's performance goals without --explain): the emulator
// records explain mode's access pictures for the checker, and its metrics stay out of the text.
inline bool metrics_as_text() {
    static const bool on = [] {
        const char* mode = std::getenv("CUDALINGS_EMU_MODE");
        return !(mode && std::string(mode) == "pictures");
    }();
    return on;
}

inline void attach_emulator_findings(cudalings::CaseResult& r,
                                     const std::vector<cudalings_emu::Diagnostic>& found) {
    using cudalings::Verdict;
    const bool explain = cudalings_emu::get_options().explain;
    std::vector<cudalings_emu::Diagnostic> shown;
    // --explain's access pictures ride along as findings (their detail is JSON for the checker
    // to draw, not text for the case's detail).
    for (const auto& d : found)
        if (explain && d.kind == "access")
            r.emulator.push_back(
                {d.kind, d.severity, d.file, d.line, d.message, d.detail, d.count});
    // Errors and warnings; a launch the GPU would refuse too (why the call returned an error);
    // the teaching metrics with --explain.
    for (const auto& d : found)
        if (d.severity == "error" || d.severity == "warning" || d.kind == "launch" ||
            (explain && d.kind == "metric" && metrics_as_text()))
            shown.push_back(d);
    if (shown.empty()) return;
    for (const auto& d : shown)
        if (d.kind == "unsupported") {
            // Something the emulator cannot run: no verdict on this case (the checker makes the
            // step SKIPPED and says why).
            r.verdict = Verdict::Skipped;
            r.reason = "emulator: unsupported";
            r.detail = d.message;
            r.emulator.push_back(
                {d.kind, d.severity, d.file, d.line, d.message, d.detail, d.count});
            return;
        }
    // The finding that names the bug (a hang first, then a race: cudalings::
    // emulator_finding_rank), and it leads the text.
    std::stable_sort(shown.begin(), shown.end(), [](const auto& a, const auto& b) {
        return cudalings::emulator_finding_rank(a.kind) < cudalings::emulator_finding_rank(b.kind);
    });
    const cudalings_emu::Diagnostic* first_error = nullptr;
    for (const auto& d : shown)
        if (d.severity == "error") {
            first_error = &d;
            break;
        }
    // A launch stopped for being too slow decides the case (its error code would read as a
    // crash), whatever else was found on the way.
    for (const auto& d : shown)
        if (d.kind == "slow" && !(first_error && hangs_on_a_gpu(first_error->kind)))
            first_error = &d;
    std::string text = cudalings_emu::format(shown);
    while (!text.empty() && text.back() == '\n') text.pop_back();
    if (first_error && first_error->kind == "slow") {
        // Not a hang: the kernel kept making progress, the emulator is too slow for it.
        r.verdict = Verdict::Timeout;
        r.reason = kTooSlowToEmulate;
        r.detail = text;
    } else if (first_error && hangs_on_a_gpu(first_error->kind)) {
        // The call ended with the emulator's launch timeout: a TIMEOUT, explained.
        r.verdict = Verdict::Timeout;
        // Which blocks waited says which causes fit (a lesson's advice is keyed by these words).
        const bool all_started =
            first_error->message.find("no block is left to start") != std::string::npos;
        const bool not_started =
            first_error->kind == "cross-block-wait" ||
            first_error->message.find("blocks that had not started") != std::string::npos;
        r.reason = "kernel did not finish (the emulator found a " + first_error->kind +
                   (all_started   ? ": every block had started and waits"
                    : not_started ? ": a block waits for blocks that had not started"
                                  : "") +
                   ")";
        r.detail = text;
    } else if (first_error && (r.verdict == Verdict::Pass || r.verdict == Verdict::Wrong)) {
        r.verdict = Verdict::MemoryError;
        r.reason = "emulator: " + first_error->kind;
        r.detail = text;
    } else {
        r.detail = r.detail.empty() ? text : r.detail + "\n" + text;
    }
    for (const auto& d : shown)
        r.emulator.push_back({d.kind, d.severity, d.file, d.line, d.message, d.detail, d.count});
}

inline void attach_emulator_findings(cudalings::CaseResult& r) {
    attach_emulator_findings(r, take_findings());
}

}  // namespace runner
