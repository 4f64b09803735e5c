// What a check found, and its two renderings: a short human summary and JSON for machines.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "compile.h"
#include "sanitize.h"
#include "verdict.h"

namespace cudalings {

struct Mismatch {
    std::uint64_t index = 0;
    std::string got;
    std::string expected;
};

struct CaseReport {
    int index = 0;
    std::string name;  // "n=33, uniform in [-1, 1)"
    std::uint64_t n = 0;
    Verdict verdict = Verdict::Skipped;
    std::string reason;  // sub-reason: "values", "unwritten", "input modified", the CUDA error
    std::string detail;  // one sentence for the learner
    std::uint64_t wrong = 0;
    std::uint64_t unwritten = 0;
    std::uint64_t checked = 0;  // output elements compared (n for a map, 1 for a sum)
    std::vector<Mismatch> first;
    std::string tolerance;
};

struct TimingSide {
    bool present = false;
    double median_us = 0;
    double p25_us = 0;
    double p75_us = 0;
    double min_us = 0;
    int samples = 0;
    std::string stop;  // why sampling stopped
    double spread() const { return median_us > 0 ? (p75_us - p25_us) / median_us : 0; }
};

struct TimingReport {
    bool present = false;
    std::uint64_t n = 0;
    double bytes = 0;      // minimal bytes moved per call (reads + writes)
    double copy_gbps = 0;  // this GPU's measured device-to-device copy rate (r + w)
    TimingSide learner, reference;
    std::string note;           // e.g. work found outside the given stream
    double host_median_us = 0;  // the host clock around the learner's timed calls
    // Inside the timing phase (milliseconds): warm-up, the sampling loop, and the untimed work
    // in that loop (fresh inputs, L2 flushes, verification).
    double warmup_ms = 0, sampling_ms = 0, untimed_ms = 0;
    int warmup_rounds = 0;
    double gbps(const TimingSide& s) const {
        return s.median_us > 0 ? bytes / s.median_us / 1e3 : 0;
    }
    double percent_of_copy(const TimingSide& s) const {
        return copy_gbps > 0 ? 100 * gbps(s) / copy_gbps : 0;
    }
    double floor_us() const { return copy_gbps > 0 ? bytes / copy_gbps / 1e3 : 0; }
    // learner's speed relative to the reference: 1.10 means 10% faster than the reference
    double speed_vs_reference() const {
        return learner.median_us > 0 && reference.present ? reference.median_us / learner.median_us
                                                          : 0;
    }
};

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
    std::vector<CaseReport> cases;
    std::string pattern;  // the size class that fails, when there is one
    TimingReport timing;
    std::vector<SanitizerFinding> findings;  // from --sanitize
    std::string sanitizer_note;              // e.g. "compute-sanitizer not found"
    std::string hint;
    double seconds = 0;  // wall time of the whole check
    // Where the time went (milliseconds): the runner's start-up (CUDA, loading the step), its
    // cases, its timing phase, and the runner process as a whole.
    double runner_startup_ms = 0, cases_ms = 0, timing_ms = 0, runner_ms = 0;
};

struct RenderOptions {
    bool color = false;
    bool verbose = false;  // every case, not only failures
    std::string command = "cudalings";
};

std::string render_text(const StepReport& r, const RenderOptions& options);
// When several steps are checked: "[ 3/22]" for the index-th (from 0) of `total`, and the
// step's one line: "[ 3/22] 01_vector_add/03_float4          PASS  781.0 µs  97.9% of copy".
std::string step_counter(std::size_t index, std::size_t total);
std::string render_step_line(const StepReport& r, std::size_t index, std::size_t total,
                             const RenderOptions& options);

// The staircase: every timed step of a lesson that passed, in order, then the library
// baselines measured in the same run — the table that shows what each idea buys.
struct StaircaseRow {
    std::string label;  // "01_interleaved" or "cub::DeviceReduce::Sum"
    std::string title;
    double median_us = 0;
    double bytes = 0;
    bool baseline = false;
    std::uint64_t n = 0;  // the timed size, when it differs from the lesson's
};
struct Staircase {
    std::string lesson;
    double copy_gbps = 0;
    std::uint64_t n = 0;
    std::vector<StaircaseRow> rows;
};
std::string render_staircase(const Staircase& s, const RenderOptions& options);
nlohmann::json to_json(const Staircase& s);
nlohmann::json to_json(const StepReport& r);
StepReport step_report_from_json(const nlohmann::json& j);  // for tests and batch tools

// "781.2 µs", "1.23 ms"
std::string format_time_us(double us);
std::string format_seed(std::uint64_t seed);  // 16 hex digits

}  // namespace cudalings
