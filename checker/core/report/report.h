// What a check found, and its two renderings: a short human summary and JSON for machines.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "compile.h"
#include "goals.h"
#include "protocol.h"
#include "sanitize.h"
#include "verdict.h"

namespace cudalings {

struct StepReport {
    std::string step;  // "01_vector_add/01_one_thread_per_element"
    std::string title;
    std::string file;  // the file that was checked
    Verdict verdict = Verdict::InternalError;
    std::string reason;  // the step's sub-reason, or what went wrong, in one line
    std::uint64_t seed = 0;
    std::string gpu;  // "NVIDIA H200" or empty
    bool compile_cached = false;
    double compile_seconds = 0;
    std::vector<Diagnostic> diagnostics;
    std::string compiler_output;  // capped
    std::string problem;          // the problem of the lesson's checks that judged it
    std::vector<CaseResult> cases;
    std::string pattern;                     // the size class that fails, when there is one
    std::vector<TimingResult> timings;       // one per timed problem (column)
    Verdict timing_verdict = Verdict::Pass;  // the timing phase crashed or hung
    std::string timing_error;                // what happened then, in words
    std::string advice;  // what the lesson says about this verdict (a TIMEOUT in a look-back...)
    // The problem's advice per verdict, as the runner announced it (for verdicts it cannot
    // report itself: a hang ends the runner).
    std::vector<std::pair<std::string, std::string>> advice_by_verdict;
    bool sampled_values = false;     // CasesEvent: emulated large sizes judged where sampled
    std::string load_error;          // the built file could not be used by the runner
    std::string internal_error;      // the runner failed (the checker's fault)
    std::vector<std::string> notes;  // what could not be checked, and why
    std::vector<GoalResult> goals;   // performance goals, under emulation (goals.h)
    std::vector<SanitizerFinding> findings;  // from --sanitize
    std::string sanitizer_note;              // e.g. "compute-sanitizer not found"
    std::string hint;
    double seconds = 0;  // wall time of the whole check
    // Where the time went (milliseconds): the runner's start-up (CUDA, loading the step), its
    // cases, its timing phase, and the runner process as a whole; runner_exit_ms is what the
    // process took besides its own clock's span until it said "done": its start before main,
    // and its exit (CUDA's teardown) where the checker waits for it (a sandboxed run; a check
    // without a sandbox reports once the runner said "done").
    double runner_startup_ms = 0, cases_ms = 0, timing_ms = 0, runner_ms = 0, runner_exit_ms = 0;
    double runner_done_ms = 0;  // the runner's clock when it said "done" (last process)
    // What the verdict depends on (the step's builds, the lesson's checks, the checker, the
    // options that change what runs), where a stored verdict may stand for a new run: an
    // emulated check without --seed. Empty: every check runs.
    std::string fingerprint;
    std::string checked_at;      // local time of the run that produced it, "2026-12-05 21:40"
    bool unchanged = false;      // shown from the stored report: nothing changed, nothing re-run
    bool stopped_early = false;  // it ended at its first failing case (CheckOptions::first_failure)
};

struct RenderOptions {
    bool color = false;
    bool verbose = false;  // every case, not only failures
    std::string command = "cudalings";
};

std::string render_text(const StepReport& r, const RenderOptions& options);
// The local time now as StepReport::checked_at writes it, and a stored one as a learner reads
// it after "unchanged since": "21:40" today, "2026-12-04 21:40" on another day.
std::string checked_now();
std::string unchanged_since(const std::string& checked_at);
// When several steps are checked: "[ 3/22]" for the index-th (from 0) of `total`, and the
// step's one line: "[ 3/22] 01_vector_add/03_float4          PASS  781.0 µs  97.9% of copy".
std::string step_counter(std::size_t index, std::size_t total);
std::string render_step_line(const StepReport& r, std::size_t index, std::size_t total,
                             const RenderOptions& options);

// The staircase: every timed step of a lesson that passed, in order, then the library
// baselines measured in the same run — the table that shows what each idea buys. A row has one
// cell per timed problem of its step (one column per distribution, say). Speed-ups compare a
// row only with rows of the same problem, column and size.
struct StaircaseCell {
    std::string column;  // "" when the problem has one timed case
    double median_us = 0;
    double bytes = 0;
    std::uint64_t n = 0;
    std::string size;     // "n=2^28", "16384×16384"
    double fp32_ops = 0;  // a compute-bound problem's least FP32 operations (0: memory-bound)
};
struct StaircaseRow {
    std::string label;  // "01_interleaved" or "cub::DeviceReduce::Sum"
    std::string title;
    std::string problem;
    bool baseline = false;
    std::vector<StaircaseCell> cells;
};
struct Staircase {
    std::string lesson;
    double copy_gbps = 0;
    double fp32_gflops = 0;  // the FP32 rate measured in the run, where a problem counts FP32 work
    std::vector<StaircaseRow> rows;
};
std::string render_staircase(const Staircase& s, const RenderOptions& options);
nlohmann::json to_json(const Staircase& s);
// A staircase back from its JSON (to_json's, or the rows and cells alone: the derived figures
// are not read, to_json computes them again).
Staircase staircase_from_json(const nlohmann::json& j);
nlohmann::json to_json(const StepReport& r);
StepReport step_report_from_json(const nlohmann::json& j);  // for tests and batch tools

// "781.2 µs", "1.23 ms"
std::string format_time_us(double us);
std::string format_seed(std::uint64_t seed);  // 16 hex digits

// The run a `check --json` belongs to, printed as its "run": what a stored results file
// (generated.h) and `cudalings dev update` name a table by.
struct RunRecord {
    std::string gpu;         // "NVIDIA H100 80GB HBM3"
    std::string date;        // "2026-12-05", the day the run started (local time)
    std::string commit;      // the commit the checker was built from, "" when unknown
    std::string cuda;        // the CUDA release that compiled the steps ("13.0"), "" when unknown
    double copy_gbps = 0;    // this GPU's measured copy rate in the run (0: nothing was timed)
    bool solutions = false;  // --solutions: the reference files were checked
};
nlohmann::json to_json(const RunRecord& r);
RunRecord run_record_from_json(const nlohmann::json& j);

}  // namespace cudalings
