// What the commands of the `cudalings` CLI share: the options, finding the course, choosing
// steps, and the check options built from the command line. Each command lives in its own file
// and registers itself with add_*_command (main.cpp only parses and dispatches).
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "../core/course/course.h"
#include "../core/course/manifest.h"
#include "../core/run/check.h"

namespace cudalings::cli {

struct Options {
    std::string root;
    std::string state_dir;
    bool json = false;
    bool no_color = false;
    bool all = false;
    bool solutions = false;
    bool no_time = false;
    bool verbose = false;
    bool sanitize = false;
    bool emulate = false;        // cudalings emulator: --emulate
    bool explain = false;        // cudalings emulator: --explain
    bool no_emulate = false;     // without a GPU: compile only (SKIPPED, exit 77)
    bool no_hazards = false;     // on a GPU: no hazard pass on the CPU emulator
    bool judge_split = false;    // --judge-split: the default, accepted for older scripts
    bool in_process = false;     // --in-process: the step runs in the judge's own process
    bool rerun = false;          // run an emulated check's cases even when nothing changed
    bool first_failure = false;  // an emulated check ends at its first failing case (check)
    bool all_cases = false;      // ... or runs every case (watch)
    double compile_timeout = 120;
    double case_timeout = 20;
    std::string seed;
    std::string step;
    bool sandbox = false;  // check --sandbox: the learner's code in the grading sandbox
    mutable std::string resolved_root;  // the course root open_course found
};

// A subcommand: its CLI11 object (set when it was given) and what runs it.
struct Command {
    CLI::App* app = nullptr;
    std::function<int()> run;
};

std::string tool_dir();  // the directory of the running binary
bool use_color(const Options& o);
// Resolves the course and its manifest; prints why not and returns false when it cannot.
bool open_course(const Options& o, CoursePaths& paths, Manifest& manifest);
std::vector<StepRef> all_steps(const Manifest& m);
// Whether this machine has a CUDA GPU (the runner's probe, once per process).
bool gpu_here(const CoursePaths& paths);
// The step the learner is on (course.h's step_in_hand): the one `watch` or the last `check` of
// one step was on, the next unfinished after it once it passed, else the first unfinished.
std::optional<StepRef> current_step(const CoursePaths& paths, const Manifest& m, const Progress& p);
// The steps a command acts on: named, --all, or the step the learner is on (current_step).
bool select_steps(const Options& o, const CoursePaths& paths, const Manifest& m, const Progress& p,
                  std::vector<StepRef>& steps);
// What follows a check of one step: after a PASS, the reference solution to compare with;
// after a PASS (or a SKIPPED of a step that needs a GPU, where there is none), the next step
// (next_unfinished after it: the rest of its lesson first). `next` is set to it.
std::string what_next(const CoursePaths& paths, const Manifest& m, const Progress& p,
                      const StepRef& step, const StepReport& r, std::optional<StepRef>& next);
// "Every step is done. Well done!", or, where steps wait for a GPU, how many.
std::string all_done_sentence(const CoursePaths& paths, const Manifest& m, const Progress& p);
// The same as fields of a --json object: "solution" and "next" where there is one.
void what_next_json(const CoursePaths& paths, const Manifest& m, const Progress& p,
                    const StepRef& step, const StepReport& r, nlohmann::json& j);
// The course and the one step a command acts on (`sass`, `profile`): false, after saying why,
// when there is no course or the selection is not exactly one step.
bool open_one_step(const Options& o, const char* command, CoursePaths& paths, Manifest& m,
                   StepRef& step);
// What `check` and `grade` share: limits, timing, the sanitizer, and the seed (the one asked
// for, or a fresh one). False, after saying why, when the seed is not hexadecimal.
bool check_options(const Options& o, CheckOptions& options);
// Whether the step runs in a learner's process of its own, judged from outside (the default),
// or in the judge's own process: --in-process, or CUDALINGS_IN_PROCESS=1 for every check and
// grade (a maintainer's comparison; a verdict made that way can be forged by the step).
bool judge_split_wanted(const Options& o);
// --judge-split (the default, kept for older scripts) and --in-process, which exclude each other.
void add_judge_split_flags(CLI::App* command, Options& o);

// Checks one step and records what it means for the learner: progress (a pass marks the step
// done, a failure of the learner's code clears it; SKIPPED, SETUP_ERROR and INTERNAL_ERROR say
// nothing about the code and leave it alone) and the report kept for `cudalings report`.
// Solutions (--solutions) are checked without recording anything.
StepReport check_and_record(Checker& checker, const Options& o, const Manifest& m,
                            Progress& progress, const StepRef& step);

// Every --json output carries its format's version (readers check it before reading on).
inline constexpr int kJsonFormatVersion = 1;
nlohmann::json versioned(nlohmann::json j);
// A validator for durations in seconds (> 0) with a message a person can read.
CLI::Validator positive_seconds();
// The names of every command, for "did you mean".
std::vector<std::string> command_names(const CLI::App& app);
// The check options the commands that check (check, watch) share, on `command`.
void add_check_flags(CLI::App* command, Options& o);
// The CMake that built the checker, else the one on PATH ("" when there is none): what builds
// cudalings-tools on first use and runs the course's scripts (the pristine record).
std::string checker_cmake();
// The course's pristine copy (build/pristine) when it exists, else "" (after saying why).
std::string pristine_or_explain(const CoursePaths& paths);

// Registers the commands of tools.h's table (cudalings-tools: tools_main.cpp).
using AddToolCommands = std::vector<Command> (*)(CLI::App& app, Options& o);
// Parses the command line and runs its command (main.cpp). Without `add_tools` (the `cudalings`
// executable) each command of tools.h is forwarded to cudalings-tools, built on first use.
int run_commands(int argc, char** argv, AddToolCommands add_tools);

Command add_list_command(CLI::App& app, Options& o);
Command add_hint_command(CLI::App& app, Options& o);
Command add_check_command(CLI::App& app, Options& o);
Command add_grade_command(CLI::App& app, Options& o);
Command add_dev_command(CLI::App& app, Options& o);
// The learner's flow, editor and tools (one file each): see each file's header.
Command add_doctor_command(CLI::App& app, Options& o);
Command add_version_command(CLI::App& app, Options& o);
Command add_reset_command(CLI::App& app, Options& o);
Command add_watch_command(CLI::App& app, Options& o);
Command add_report_command(CLI::App& app, Options& o);
Command add_sass_command(CLI::App& app, Options& o);
Command add_profile_command(CLI::App& app, Options& o);
// `cudalings --version` (and `cudalings version`): the text, or JSON.
int print_version(const Options& o);

}  // namespace cudalings::cli
