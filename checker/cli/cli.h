// What the commands of the `cudalings` CLI share: the options, finding the course, choosing
// steps, and the check options built from the command line. Each command lives in its own file
// and registers itself with add_*_command (main.cpp only parses and dispatches).
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "../core/check.h"
#include "../core/course.h"
#include "../core/manifest.h"

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
    bool emulate = false;     // cudalings emulator: --emulate
    bool explain = false;     // cudalings emulator: --explain
    bool no_emulate = false;  // without a GPU: compile only (SKIPPED, exit 77)
    double compile_timeout = 120;
    double case_timeout = 20;
    std::string seed;
    std::string step;
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
std::optional<StepRef> next_unfinished(const Manifest& m, const Progress& p);
// The steps a command acts on: named, --all, or the next unfinished one.
bool select_steps(const Options& o, const Manifest& m, const Progress& p,
                  std::vector<StepRef>& steps);
// What `check` and `grade` share: limits, timing, the sanitizer, and the seed (the one asked
// for, or a fresh one). False, after saying why, when the seed is not hexadecimal.
bool check_options(const Options& o, CheckOptions& options);

Command add_list_command(CLI::App& app, Options& o);
Command add_hint_command(CLI::App& app, Options& o);
Command add_check_command(CLI::App& app, Options& o);
Command add_grade_command(CLI::App& app, Options& o);
Command add_dev_command(CLI::App& app, Options& o);

}  // namespace cudalings::cli
