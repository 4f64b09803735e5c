// `cudalings dev check`: the course's own consistency (for lesson authors and CI), see
// checker/core/devcheck.h for the rules. `cudalings dev update`: rewrites what is generated
// (the pristine record, the READMEs' regions), see checker/core/generated.h.
#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>
#include <mutex>

#include "../core/devcheck.h"
#include "../core/generated.h"
#include "../core/supervise.h"
#include "../core/verdict.h"
#include "cli.h"

namespace cudalings::cli {
namespace {

int cmd_dev_check(const Options& o) {
    CoursePaths paths;
    Manifest m;
    if (!open_course(o, paths, m)) return exit_code::usage;
    CheckOptions options;
    options.seed = 0;
    Checker checker(paths, m, options);
    if (!o.json)
        checker.set_progress_callback(
            [](const std::string& what) { std::cerr << "  ... " << what << "\n"; });
    const auto found = dev_check(
        paths.root, m, [&](const LessonInfo& lesson) { return checker.inspect_checks(lesson); });
    if (o.json) {
        nlohmann::json list = nlohmann::json::array();
        for (const auto& f : found)
            list.push_back({{"rule", f.rule}, {"file", f.file}, {"message", f.message}});
        std::cout << nlohmann::json{{"findings", list}, {"lessons", m.lessons.size()}}.dump(2)
                  << "\n";
    } else {
        for (const auto& f : found)
            std::cout << f.file << ": " << f.rule << ": " << f.message << "\n";
        std::cout << m.lessons.size() << " lessons checked: "
                  << (found.empty() ? "no problems found" : std::to_string(found.size()) + " found")
                  << "\n";
    }
    return found.empty() ? exit_code::pass : exit_code::fail;
}

#ifndef CUDALINGS_CMAKE
#define CUDALINGS_CMAKE ""
#endif

struct UpdateFlags {
    std::string results, date, store;
    bool other_gpu = false;
};

int cmd_dev_update(const Options& o, const UpdateFlags& flags) {
    CoursePaths paths;
    Manifest m;
    if (!open_course(o, paths, m)) return exit_code::usage;
    if (!flags.results.empty() && !flags.store.empty() && flags.results == flags.store) {
        std::cerr << "cudalings: --store names the results file itself\n";
        return exit_code::usage;
    }
    UpdateOptions options;
    options.results = flags.results;
    options.date = flags.date;
    options.store = flags.store;
    options.other_gpu = flags.other_gpu;
    // The CMake that built the checker, else the one on PATH.
    const std::string built_with = CUDALINGS_CMAKE;
    options.cmake = !built_with.empty() && !find_program(built_with).empty()
                        ? built_with
                        : find_program("cmake");
    const UpdateOutcome out = dev_update(paths.root, m, options);
    if (o.json) {
        std::cout << versioned(
                         {{"written", out.written}, {"notes", out.notes}, {"error", out.error}})
                         .dump(2)
                  << "\n";
    } else {
        for (const auto& n : out.notes) std::cout << "note: " << n << "\n";
        if (!out.error.empty()) {
            std::cerr << "cudalings: dev update: nothing written:\n" << out.error << "\n";
        } else {
            for (const auto& w : out.written) std::cout << "wrote " << w << "\n";
            if (out.written.empty()) std::cout << "everything generated was up to date\n";
        }
    }
    return out.error.empty() ? exit_code::pass : exit_code::fail;
}

}  // namespace

Command add_dev_command(CLI::App& app, Options& o) {
    auto* dev = app.add_subcommand("dev", "tools for whoever writes lessons");
    dev->require_subcommand(1);
    dev->add_subcommand(
        "check",
        "the course's own consistency: steps, hints, problems, baselines, fixtures, links, "
        "generated regions");
    auto* update = dev->add_subcommand(
        "update",
        "rewrite what is generated: the pristine record, the README's course table, the "
        "lessons' staircase regions (from a GPU run's results with --results)");
    auto flags = std::make_shared<UpdateFlags>();
    update->add_option("--results", flags->results,
                       "`cudalings --json check --all --solutions` output of a GPU run, or a "
                       "stored results file: the staircase regions of its lessons come from it");
    update->add_option("--date", flags->date,
                       "the run's day (YYYY-MM-DD), for results without a run record");
    update->add_option("--store", flags->store,
                       "where the trimmed results go (default docs/results/GPU-DATE.json)");
    update->add_flag("--other-gpu", flags->other_gpu,
                     "replace staircase regions that name another GPU model");
    // The CLI runs the one subcommand that was given (main.cpp): check or update.
    return {dev,
            [&o, update, flags] { return *update ? cmd_dev_update(o, *flags) : cmd_dev_check(o); }};
}

}  // namespace cudalings::cli
