// `cudalings dev check`: the course's own consistency (for lesson authors and CI), see
// checker/core/tools/devcheck.h for the rules. `cudalings dev update`: rewrites what is generated
// (the pristine record, the READMEs' regions), see checker/core/report/generated.h.
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <memory>
#include <mutex>

#include "../core/course/hash.h"
#include "../core/report/generated.h"
#include "../core/run/supervise.h"
#include "../core/run/verdict.h"
#include "../core/tools/coverage.h"
#include "../core/tools/devcheck.h"
#include "../core/tools/fixtures.h"
#include "cli.h"
#include "tools.h"

namespace cudalings::cli {
namespace {

struct CheckFlags {
    bool coverage = false;
    std::vector<std::string> steps;  // --coverage's steps (all when empty)
};

// The coverage rule (coverage.h) for one step: its solution's hazard pass, counted.
std::vector<DevFinding> step_coverage(const CoursePaths& paths, const Manifest& m,
                                      const StepRef& ref, std::vector<std::string>& notes) {
    const LessonInfo& lesson = m.lessons[ref.lesson];
    const StepInfo& step = lesson.steps[ref.step];
    const std::string file = paths.step_file(lesson, step, true);
    const std::string shown = "solutions/" + lesson.id + "/" + step.id + ".cu";
    namespace fs = std::filesystem;
    const fs::path counts =
        fs::temp_directory_path() /
        ("cudalings-coverage-" + std::to_string(::getpid()) + "-" + lesson.id + "-" + step.id);
    std::error_code ec;
    fs::remove_all(counts, ec);
    fs::create_directories(counts, ec);
    CheckOptions options;
    options.coverage_dir = counts.string();
    options.case_idle_seconds = 60;
    options.runner_seconds = 900;
    Checker checker(paths, m, options);
    std::promise<bool> built;
    built.set_value(true);
    const auto pass = checker.hazard_pass(lesson, step, file, built.get_future().share());
    std::vector<DevFinding> found;
    for (const auto& f : pass.findings)
        found.push_back({"coverage", shown,
                         "the solution's hazard pass found a problem at line " +
                             std::to_string(f.line) + ": " + f.message});
    if (pass.note.find("stopped") != std::string::npos)
        found.push_back({"coverage", shown, "the counts are incomplete: " + pass.note});
    const CoverageVerdict v = judge_coverage(counts.string(), file);
    fs::remove_all(counts, ec);
    if (!v.error.empty()) {
        found.push_back({"coverage", shown, v.error + " (" + pass.note + ")"});
        return found;
    }
    for (const auto& p : v.problems) found.push_back({"coverage", shown, p});
    notes.push_back(
        shown + ": " + std::to_string(v.lines_run) + " of " + std::to_string(v.device_lines) +
        " device lines run, " + (v.most_blocks >= 2 ? "2+" : std::to_string(v.most_blocks)) +
        " blocks in a launch" + (v.exempt.empty() ? "" : "; not covered by design: " + [&] {
            std::string all;
            for (const auto& e : v.exempt) all += (all.empty() ? "" : "; ") + e;
            return all;
        }()));
    return found;
}

int cmd_dev_check(const Options& o, const CheckFlags& flags) {
    CoursePaths paths;
    Manifest m;
    if (!open_course(o, paths, m)) return exit_code::usage;
    CheckOptions options;
    options.seed = 0;
    Checker checker(paths, m, options);
    if (!o.json)
        checker.set_progress_callback(
            [](const std::string& what) { std::cerr << "  ... " << what << "\n"; });
    // Steps named for --coverage: that rule alone, for them.
    std::vector<DevFinding> found;
    if (!flags.coverage || flags.steps.empty())
        found = dev_check(
            paths.root, m, [&](const LessonInfo& lesson) { return checker.inspect_checks(lesson); },
            checker_cmake());
    std::vector<std::string> notes;
    std::size_t covered = 0;
    if (flags.coverage) {
        std::vector<StepRef> steps;
        for (const auto& text : flags.steps) {
            std::string error;
            auto named = resolve_steps(m, text, &error);
            if (!named) {
                std::cerr << "cudalings: " << error << "\n";
                return exit_code::usage;
            }
            steps.insert(steps.end(), named->begin(), named->end());
        }
        if (flags.steps.empty())
            for (std::size_t l = 0; l < m.lessons.size(); ++l)
                for (std::size_t s = 0; s < m.lessons[l].steps.size(); ++s) steps.push_back({l, s});
        for (const auto& ref : steps) {
            if (m.lessons[ref.lesson].steps[ref.step].needs_gpu) continue;  // never emulated
            if (!o.json)
                std::cerr << "  ... coverage of " << m.lessons[ref.lesson].id << "/"
                          << m.lessons[ref.lesson].steps[ref.step].id << "\n";
            for (auto& f : step_coverage(paths, m, ref, notes)) found.push_back(std::move(f));
            ++covered;
        }
    }
    if (o.json) {
        nlohmann::json list = nlohmann::json::array();
        for (const auto& f : found)
            list.push_back({{"rule", f.rule}, {"file", f.file}, {"message", f.message}});
        nlohmann::json out{{"findings", list}, {"lessons", m.lessons.size()}};
        if (flags.coverage) out["coverage"] = notes;
        std::cout << out.dump(2) << "\n";
    } else {
        for (const auto& n : notes) std::cout << "coverage: " << n << "\n";
        for (const auto& f : found)
            std::cout << f.file << ": " << f.rule << ": " << f.message << "\n";
        std::cout << (flags.coverage && !flags.steps.empty()
                          ? std::to_string(covered) + " steps' coverage checked: "
                          : std::to_string(m.lessons.size()) + " lessons checked: ")
                  << (found.empty() ? "no problems found" : std::to_string(found.size()) + " found")
                  << "\n";
    }
    return found.empty() ? exit_code::pass : exit_code::fail;
}

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
    options.cmake = checker_cmake();
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

struct FixturesFlags {
    std::vector<std::string> kinds;    // --kind (all when none)
    std::vector<std::string> filters;  // substrings of the paths
    std::string write;                 // --write DIR
    std::vector<std::string> rediff;   // --rediff FIXTURE EDITED
    std::string base;                  // --base, with --rediff
};

// --rediff FIXTURE EDITED: FIXTURE becomes EDITED's header and a patch of its base.
int cmd_dev_rediff(const CoursePaths& paths, const FixturesFlags& flags) {
    bool ok = false;
    const std::string edited = read_file(flags.rediff[1], &ok);
    if (!ok) {
        std::cerr << "cudalings: cannot read " << flags.rediff[1] << "\n";
        return exit_code::usage;
    }
    std::string text, why;
    if (!rediff_fixture(flags.rediff[0], edited, paths.root, flags.base, &text, &why)) {
        std::cerr << "cudalings: dev fixtures --rediff: " << why << "\n";
        return exit_code::fail;
    }
    std::ofstream out(flags.rediff[0], std::ios::binary);
    out << text;
    if (!out.flush()) {
        std::cerr << "cudalings: cannot write " << flags.rediff[0] << "\n";
        return exit_code::fail;
    }
    const auto lines = [](const std::string& t) {
        return static_cast<long>(std::count(t.begin(), t.end(), '\n'));
    };
    const long body = lines(file_body(edited)), patch = lines(file_body(text));
    std::cout << "wrote " << flags.rediff[0] << ": " << patch << " lines of patch for a body of "
              << body << " lines\n";
    if (patch >= body)
        std::cout << "note: the patch is no shorter than the body; a whole file reads better "
                     "(copy the edited file over the fixture)\n";
    return exit_code::pass;
}

int cmd_dev_fixtures(const Options& o, const FixturesFlags& flags) {
    CoursePaths paths;
    Manifest m;
    if (!open_course(o, paths, m)) return exit_code::usage;
    if (!flags.rediff.empty()) return cmd_dev_rediff(paths, flags);
    std::vector<FixtureKind> kinds;
    for (const auto& k : flags.kinds) {
        FixtureKind kind;
        if (!parse_fixture_kind(k, kind)) {
            std::cerr << "cudalings: --kind takes fixture, corpus or hostile, not \"" << k
                      << "\"\n";
            return exit_code::usage;
        }
        kinds.push_back(kind);
    }
    if (kinds.empty()) kinds = {FixtureKind::fixture, FixtureKind::corpus, FixtureKind::hostile};
    const FixtureListing listing = list_fixtures(paths.root, kinds, flags.filters, flags.write);
    if (o.json) {
        std::cout << versioned(to_json(listing))
                         .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
                  << "\n";
    } else {
        for (const auto& [f, file] : listing.fixtures)
            std::cout << f.rel << "  " << to_string(f.form) << "  "
                      << (f.keys.step.empty() ? "-" : f.keys.step) << "  expect "
                      << (f.keys.expect.empty() ? "-" : f.keys.expect) << "  emulated "
                      << (f.keys.emulated.empty() ? "-" : f.keys.emulated)
                      << (file.empty() ? "" : "  -> " + file) << "\n";
        for (const auto& [path, message] : listing.errors)
            std::cerr << path << ": " << message << "\n";
    }
    return listing.errors.empty() ? exit_code::pass : exit_code::fail;
}

}  // namespace

Command add_dev_command(CLI::App& app, Options& o) {
    auto* dev = app.add_subcommand("dev", tool_summary("dev"));
    dev->require_subcommand(1);
    auto* check = dev->add_subcommand(
        "check",
        "the course's own consistency: steps, hints, problems, baselines, fixtures, links, "
        "generated regions");
    auto check_flags = std::make_shared<CheckFlags>();
    check->add_flag("--coverage", check_flags->coverage,
                    "also run each step's solution through the emulator's hazard cases, counted: "
                    "every line of device code run, two blocks in a launch, every loop twice in "
                    "a thread (`// dev: not covered (why)` exempts a line)");
    check->add_option("steps", check_flags->steps,
                      "with --coverage: only these steps, and only that rule (default: every rule, "
                      "every step)");
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
    auto* fixtures = dev->add_subcommand(
        "fixtures",
        "the fixtures, the emulator's corpus and the hostile submissions, read as the tests read "
        "them (checker/core/tools/fixtures.h): list them, write them out whole, or rewrite one as "
        "a patch of its solution");
    auto fixtures_flags = std::make_shared<FixturesFlags>();
    fixtures
        ->add_option("--kind", fixtures_flags->kinds, "fixture, corpus or hostile (default: all)")
        ->allow_extra_args(false);
    fixtures->add_option(
        "--write", fixtures_flags->write,
        "write each file's text (a patch applied) to DIR/<its path in the course>");
    fixtures
        ->add_option("--rediff", fixtures_flags->rediff,
                     "FIXTURE EDITED: rewrite FIXTURE as EDITED's header and a patch of "
                     "EDITED's body against its base's body")
        ->expected(2);
    fixtures->add_option("--base", fixtures_flags->base,
                         "with --rediff: the base (default: the fixture's \"base:\", else "
                         "solutions/<step>)");
    fixtures->add_option("filters", fixtures_flags->filters,
                         "only the files whose path holds one of these");
    // The CLI runs the one subcommand that was given (main.cpp): check, update or fixtures.
    return {dev, [&o, update, flags, check_flags, fixtures, fixtures_flags] {
                if (*fixtures) return cmd_dev_fixtures(o, *fixtures_flags);
                return *update ? cmd_dev_update(o, *flags) : cmd_dev_check(o, *check_flags);
            }};
}

}  // namespace cudalings::cli
