// `cudalings list` and `cudalings hint`.
#include <nlohmann/json.hpp>

#include <iostream>

#include "../core/text.h"
#include "../core/verdict.h"
#include "cli.h"

namespace cudalings::cli {
namespace {

int cmd_list(const Options& o) {
    CoursePaths paths;
    Manifest m;
    if (!open_course(o, paths, m)) return exit_code::usage;
    Progress progress(paths.state_dir + "/progress.json");
    auto next = next_unfinished(m, progress);
    bool color = use_color(o);
    nlohmann::json j = nlohmann::json::array();
    std::size_t done = 0, total = 0;
    for (std::size_t l = 0; l < m.lessons.size(); ++l) {
        const auto& lesson = m.lessons[l];
        if (!o.json)
            std::cout << (color ? "\033[1m" : "") << lesson.id << (color ? "\033[0m" : "") << "  "
                      << lesson.title << "\n";
        for (std::size_t s = 0; s < lesson.steps.size(); ++s) {
            std::string name = step_name(m, {l, s});
            bool passed = progress.passed(name);
            bool is_next = next && next->lesson == l && next->step == s;
            done += passed;
            ++total;
            j.push_back({{"step", name},
                         {"title", lesson.steps[s].title},
                         {"status", passed    ? "done"
                                    : is_next ? "next"
                                              : "pending"}});
            if (o.json) continue;
            const char* mark = passed ? "done" : is_next ? "next" : "    ";
            const char* colour = passed ? "\033[32m" : is_next ? "\033[33m" : "";
            std::cout << "  " << (color ? colour : "") << "[" << mark << "]"
                      << (color ? "\033[0m" : "") << " " << lesson.steps[s].id << "  "
                      << lesson.steps[s].title << "\n";
        }
    }
    if (o.json) {
        std::cout << versioned({{"steps", j}, {"done", done}, {"total", total}}).dump(2) << "\n";
    } else {
        std::cout << "\n"
                  << progress_bar(done, total, 30, unicode_terminal()) << "  " << done << " of "
                  << total << " steps done.";
        if (next) std::cout << " Next: ./cudalings check " << step_name(m, *next);
        std::cout << "\n";
    }
    return exit_code::pass;
}

int cmd_hint(const Options& o) {
    CoursePaths paths;
    Manifest m;
    if (!open_course(o, paths, m)) return exit_code::usage;
    Progress progress(paths.state_dir + "/progress.json");
    std::vector<StepRef> steps;
    if (!select_steps(o, m, progress, steps)) return exit_code::usage;
    if (o.json) {
        nlohmann::json hints = nlohmann::json::array();
        for (const auto& ref : steps)
            hints.push_back({{"step", step_name(m, ref)},
                             {"title", m.lessons[ref.lesson].steps[ref.step].title},
                             {"hint", m.lessons[ref.lesson].steps[ref.step].hint}});
        std::cout << versioned({{"hints", hints}}).dump(2) << "\n";
        return exit_code::pass;
    }
    if (steps.empty()) {
        std::cout << "Every step is done: no hint needed.\n";
        return exit_code::pass;
    }
    for (const auto& ref : steps) {
        const auto& step = m.lessons[ref.lesson].steps[ref.step];
        std::cout << step_name(m, ref) << " — " << step.title << "\n  "
                  << (step.hint.empty() ? "(no hint for this step)" : step.hint) << "\n";
    }
    return exit_code::pass;
}

// What `check` and `grade` share: limits, timing, the sanitizer, and the seed (the one asked for,
// or a fresh one). False, after saying why, when the seed is not hexadecimal.
}  // namespace

Command add_list_command(CLI::App& app, Options& o) {
    auto* list = app.add_subcommand("list", "lessons and steps, with what is done");
    return {list, [&o] { return cmd_list(o); }};
}

Command add_hint_command(CLI::App& app, Options& o) {
    auto* hint =
        app.add_subcommand("hint", "a hint for a step (the next unfinished one by default)");
    hint->add_option("step", o.step, "the step");
    return {hint, [&o] { return cmd_hint(o); }};
}

}  // namespace cudalings::cli
