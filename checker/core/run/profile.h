// `cudalings profile STEP`: Nsight Compute (ncu) on one timed call of a step. The runner runs a
// warm-up call, then the timed call with the profiler on (cudaProfilerStart/Stop), under
// `ncu --clock-control none --profile-from-start off --csv --page raw --print-units base`; this
// file holds what the CLI and the checker share around that: the metrics (a catalogue with a
// one-line meaning each, the summary every profile shows, the defaults for a lesson that chooses
// none), finding ncu, its command line, the parser of its raw CSV page, and the machine's
// problems it reports (no ncu, no permission to the counters), which are never the learner's.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol.h"
#include "setup.h"
#include "supervise.h"

namespace cudalings {

// A metric the course can explain: ncu's name, a short label, and what it means for a learner.
struct MetricInfo {
    std::string_view name;     // "lts__t_sector_hit_rate.pct"
    std::string_view label;    // "L2 hit rate"
    std::string_view meaning;  // one line
};
const std::vector<MetricInfo>& metric_catalogue();
const MetricInfo* find_metric(std::string_view name);  // nullptr when not in the catalogue
// Reads like an ncu metric name (unit__counter[.rollup...]): the check on `--metrics`.
bool looks_like_metric(std::string_view name);

// The metrics of every profile's per-kernel summary.
namespace metric {
inline constexpr const char* kDuration = "gpu__time_duration.sum";
inline constexpr const char* kDramPercent = "dram__throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr const char* kDramRate = "dram__bytes.sum.per_second";
inline constexpr const char* kOccupancy = "sm__warps_active.avg.pct_of_peak_sustained_active";
inline constexpr const char* kGrid = "launch__grid_size";
inline constexpr const char* kBlock = "launch__block_size";
}  // namespace metric
std::vector<std::string> summary_metrics();
// A lesson's chosen metrics when its lesson.json has no "profile".
std::vector<std::string> default_lesson_metrics();

// ncu: CUDALINGS_NCU, else beside nvcc / in the CUDA installation / on PATH (find_cuda_tool,
// which `cudalings doctor` uses too); "" when absent.
std::string find_ncu(const std::string& nvcc);

// ncu's command line around `program` (the runner's profile command); its report goes to
// `log_file`, so that nothing the step prints on stdout mixes with it.
std::vector<std::string> ncu_command(const std::string& ncu,
                                     const std::vector<std::string>& metrics,
                                     const std::string& log_file,
                                     const std::vector<std::string>& program);

// One profiled kernel from ncu's raw page.
struct KernelProfile {
    std::string name;       // "vector_add_float4" (the argument list cut off)
    std::string full_name;  // as ncu wrote it
    std::string grid, block;
    struct Value {
        std::string metric, text, unit;
        double number = 0;
        bool numeric = false;
    };
    std::vector<Value> values;  // in ncu's column order
    const Value* find(std::string_view metric) const;
    // The metric's number in base units (nanoseconds, bytes per second, percent), or `fallback`.
    double number(std::string_view metric, double fallback = -1) const;
};

struct NcuReport {
    std::vector<KernelProfile> kernels;
    std::vector<std::string> errors;  // ncu's own "==ERROR==" lines
    bool no_kernels = false;          // ncu said it profiled none
};
// Parses ncu's output: its "==PROF==", "==WARNING==" and "==ERROR==" lines, and the CSV of
// `--csv --page raw` (a header row, a units row, one row per kernel).
NcuReport parse_ncu_output(std::string_view text);

// The machine's problems, with the fix (anchors of docs/troubleshooting.md).
SetupProblem no_ncu_problem();
SetupProblem profile_needs_gpu_problem(const std::string& why);
// A problem ncu reported (no permission to the performance counters, an unsupported GPU).
std::optional<SetupProblem> ncu_setup_problem(std::string_view output);

// What one ncu run said (`child` ran ncu_command with `log_file`): the log, its stdout and stderr
// parsed, and the machine's problem when there is one (ncu did not start, or said so).
struct NcuRun {
    NcuReport report;
    std::optional<SetupProblem> setup;
};
NcuRun read_ncu_run(const ChildResult& child, const std::string& ncu, const std::string& log_file);

// What `cudalings profile` found, for the text and the JSON.
struct ProfileOutcome {
    std::string step, file, gpu, ncu;
    ProfileCallEvent call;
    std::vector<std::string> metrics;  // the lesson's (or --metrics) beyond the summary
    NcuReport report;
};
std::string render_profile(const ProfileOutcome& p, bool color);
nlohmann::json profile_json(const ProfileOutcome& p);

}  // namespace cudalings
