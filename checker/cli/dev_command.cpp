// `cudalings dev check`: the course's own consistency (for lesson authors and CI), see
// checker/core/devcheck.h for the rules.
#include <nlohmann/json.hpp>

#include <iostream>
#include <mutex>

#include "../core/devcheck.h"
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

}  // namespace

Command add_dev_command(CLI::App& app, Options& o) {
    auto* dev = app.add_subcommand("dev", "tools for whoever writes lessons");
    dev->require_subcommand(1);
    auto* check = dev->add_subcommand(
        "check",
        "the course's own consistency: steps, hints, problems, baselines, fixtures, links");
    return {check, [&o] { return cmd_dev_check(o); }};
}

}  // namespace cudalings::cli
