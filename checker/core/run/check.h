// The check pipeline, the same for every lesson: resolve -> compile -> correctness -> timing
// -> report. Lesson knowledge lives in the runner's specs and in course.json, never here.
#pragma once

#include <nlohmann/json.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "builder.h"
#include "checks_build.h"
#include "course.h"
#include "devcheck.h"
#include "manifest.h"
#include "profile.h"
#include "report.h"
#include "sanitize.h"
#include "setup.h"
#include "supervise.h"

namespace cudalings {

class Sandbox;  // sandbox.h

struct CheckOptions {
    std::uint64_t seed = 0;
    bool timing = true;
    std::string nvcc;               // empty: the build's nvcc, else "nvcc" on PATH
    double compile_seconds = 120;   // CPU seconds per compiler process (check.cpp: build_limits)
    double case_idle_seconds = 20;  // a case (or a timing phase) silent this long is a TIMEOUT
    double runner_seconds = 180;    // the whole correctness + timing child
    bool use_cache = true;
    bool sanitize = false;  // also run compute-sanitizer on small cases
    std::size_t host_memory_limit = std::size_t{8} << 30;  // per runner child, via a cgroup
    std::uint64_t sanitize_max_n = 4096;
    // cudalings emulator (checker/core/build/emulate.h): correctness on the CPU, no timing
    bool emulate = false;              // --emulate: even where a GPU is present
    bool emulate_without_gpu = false;  // emulate automatically where there is no GPU
    bool explain = false;              // --explain: the emulator's teaching metrics
    // On a GPU, the emulator's analysis of the small cases too (races, barriers, masks, bounds,
    // uninitialised reads): a hazard is MEMORY_ERROR whatever numbers the GPU happened to give.
    bool hazards = true;
    // The judge split (runner/split.h), the default: the step is loaded and called in a
    // learner's process of its own (cudalings-learner, or cudalings-learner-emu under the
    // emulator), the runner judging it from outside. Off (--in-process), the runner loads the
    // step itself, and the step can forge its verdict.
    bool judge_split = true;
    // An emulated check of a step whose file, headers, checks, checker and options are all as
    // they were at its last check shows that check's stored report, saying so, instead of running
    // the cases again (StepReport::fingerprint). Off with --seed (the learner asked for those
    // inputs), --rerun and --solutions.
    bool reuse_unchanged = false;
    // An emulated check ends at its first failing case (the rest are listed as not run): what
    // `watch` does, for a verdict as soon as there is one.
    bool first_failure = false;
    // Sealed runs (sandbox.h): when set, every child that reads or runs the learner's code
    // (preprocessing, nvcc, nm, the emulator's build, the runner, compute-sanitizer) runs in it.
    std::shared_ptr<const Sandbox> sandbox;
    // Grading: more directories no step may include (the instructor's course, other
    // submissions), besides the course's own solutions/ and the checker.
    std::vector<std::string> forbidden_dirs;
    // `dev check --coverage` (coverage.h): the hazard pass's emulated build counts the runs of
    // each basic block, and its runner writes them into this directory (never cached).
    std::string coverage_dir;
};

class Checker {
  public:
    Checker(CoursePaths paths, Manifest manifest, CheckOptions options);

    // What the hazard pass of a GPU check found (tool "emulator"), and what it ran.
    struct HazardPass {
        std::vector<SanitizerFinding> findings;
        std::string note;  // what was checked, or why it was not
    };
    // The hazard pass of a GPU check: the emulator's findings on the cases up to kHazardMaxN,
    // once `built` says nvcc accepted the file (check() runs it beside the GPU's cases, on its
    // own thread). Cached per built file.
    // `cancel` (optional) stops its build at once: nvcc rejected the file, the verdict is known.
    HazardPass hazard_pass(const LessonInfo& lesson, const StepInfo& step, const std::string& file,
                           std::shared_future<bool> built,
                           const std::atomic<bool>* cancel = nullptr);

    const GpuInfo& gpu();  // probed once (and cached per machine state)
    // A check runs on the GPU unless --emulate, or there is no GPU.
    bool runs_on_gpu();
    StepReport check(const StepRef& step, bool solution_file);
    // The measured copy bandwidth of this GPU (cached per GPU), 0 when unknown.
    double copy_bandwidth_gbps();
    // The measured FP32 rate of this GPU in GFLOP/s (cached per GPU), 0 when unknown: the
    // yardstick of a compute-bound problem (kit::Traffic::fp32).
    double fp32_gflops();
    // Sets what the checker measured about this GPU on timings: the copy rate, and the FP32 rate
    // where a problem counts its operations.
    void add_yardsticks(std::vector<TimingResult>& timings);

    // Times a library baseline of a lesson (e.g. CUB) in a child process: one result per timed
    // problem of the baseline's problem.
    struct BaselineTiming {
        bool ok = false;
        std::string error;
        std::vector<TimingResult> timings;
    };
    BaselineTiming time_baseline(const LessonInfo& lesson, const BaselineInfo& baseline);

    // `cudalings profile` (profile.h): the step built as check builds it (the same cache), then
    // the runner's profile command (a warm-up call, then one timed call, on the timed case of
    // `column`, the first when empty) under ncu (`ncu` is its path) with `metrics`.
    struct Profiled {
        StepReport build;  // when it did not build: the verdict, the reason, the compiler output
        bool built = false;
        std::optional<SetupProblem> setup;  // the machine's problem (never the learner's)
        std::string usage_error;            // no timed case has that column
        std::string learner_error;          // the step's call failed (a CUDA error, with why)
        std::string internal_error;         // the checker's own fault
        std::optional<ProfileCallEvent> call;
        NcuReport report;
    };
    Profiled profile(const StepRef& step, bool solution_file, const std::string& ncu,
                     const std::vector<std::string>& metrics, const std::string& column);

    // What a lesson's checks register (for `dev check`): both builds (for the emulator and for
    // the GPU, compile-only without one) must define the same problems; the baselines come from
    // the GPU build.
    ChecksContents inspect_checks(const LessonInfo& lesson);

    const Manifest& manifest() const { return manifest_; }
    const CoursePaths& paths() const { return paths_; }
    void set_progress_callback(std::function<void(const std::string&)> cb) {
        progress_ = std::move(cb);
    }

  private:
    // What one runner process of a check runs (decided by the pipeline, then passed as it is to
    // every runner the check starts): no state of the checker's is set around a run.
    struct RunPlan {
        const LessonInfo* lesson = nullptr;
        const StepInfo* step = nullptr;
        std::string checks;         // the lesson's checks, for the GPU or for the emulator
        std::string object;         // the learner's step as built for that runner
        std::string shims;          // the judge split: the lesson's call shims ("": in-process)
        std::string reference;      // a timed check on a GPU: the reference solution's object
        bool emulated = false;      // the emulator's runner: small cases, no timing
        std::string emulator_mode;  // emulated: "check", "pictures" or "explain"
        std::uint64_t seed = 0;
    };
    // One runner process: what it said and how it ended.
    struct RunnerRun {
        ChildResult child;
        std::vector<nlohmann::json> events;
        int forged = 0;
    };
    std::vector<std::string> runner_argv(const RunPlan& plan, int first_case,
                                         bool first_child) const;
    ChildOptions runner_options(const RunPlan& plan) const;
    // The emulated runner's schedule and mode (docs/emulator.md, "Schedules"): "explain" with
    // --explain, "pictures" for a step with performance goals (the access pictures recorded,
    // no metrics text), else "check".
    std::map<std::string, std::string> emulated_environment(std::uint64_t seed,
                                                            const std::string& mode,
                                                            double time_limit) const;
    // What an emulated check's verdict depends on (StepReport::fingerprint); empty when the
    // lesson's checks are not built.
    std::string emulated_fingerprint(const LessonInfo& lesson, const StepInfo& step,
                                     const std::string& file);
    // The stored report of the step's last check (of the same file) when nothing it depends
    // on has changed since (`now`: the new check's report, step and file filled in).
    std::optional<StepReport> unchanged_report(const LessonInfo& lesson, const StepInfo& step,
                                               const StepReport& now);
    // Runs the cases (and the timing) of `plan` in runner processes, into `report`.
    // `first` (optional): the first runner, already started while the step was being built.
    void run(const RunPlan& plan, StepReport& report, std::future<RunnerRun>* first = nullptr);
    // The pipeline's two ways after the build: the cases on the CPU emulator (the learner's
    // file as `built` for it), or on the GPU (nvcc's `object`, and the runner `first` started
    // during the build).
    void check_emulated(const LessonInfo& lesson, const StepInfo& step, const EmulatedObject& built,
                        StepReport& report);
    void check_on_gpu(const RunPlan& plan, StepReport& report, std::future<RunnerRun>* first);
    void sanitize(const LessonInfo& lesson, const StepInfo& step, const std::string& object,
                  StepReport& report);
    // Progress for the learner; not from the hazard pass's thread (the line shows the GPU's).
    static inline thread_local bool quiet_ = false;
    void say(const std::string& what) const {
        if (progress_ && !quiet_) progress_(what);
    }

    CoursePaths paths_;
    Manifest manifest_;
    CheckOptions options_;
    std::optional<GpuInfo> gpu_;
    std::optional<double> copy_gbps_, fp32_gflops_;
    // A rate the runner measures once per GPU (`cudalings-runner COMMAND`): the `field` of its
    // `event`, cached in the state folder under `name`-UUID.json.
    double gpu_rate(const std::string& command, const std::string& event, const std::string& field,
                    const std::string& name, const std::string& what);
    std::function<void(const std::string&)> progress_;
    Builder builder_;  // after the members it is made from
};

// The hazard pass's findings join the report's (conclude() makes them the verdict).
void fold_hazards(StepReport& report, const Checker::HazardPass& hazards);

// Seeds: a fresh one per run unless the learner asks for one.
std::uint64_t fresh_seed();

}  // namespace cudalings
