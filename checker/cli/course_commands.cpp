// `cudalings list` and `cudalings hint`.
#include <nlohmann/json.hpp>

#include <iostream>

#include "../core/report/history.h"
#include "../core/report/text.h"
#include "../core/run/verdict.h"
#include "cli.h"

namespace cudalings::cli {
namespace {

int cmd_list(const Options& o) {
    CoursePaths paths;
    Manifest m;
    if (!open_course(o, paths, m)) return exit_code::usage;
    Progress progress(paths.state_dir + "/progress.json");
    auto next = current_step(paths, m, progress);
    const bool gpu = gpu_here(paths);
    bool color = use_color(o);
    nlohmann::json j = nlohmann::json::array();
    std::size_t done = 0, total = 0, waiting = 0;  // waiting: for a GPU this machine lacks
    // The performance goals of each step's last emulated check (a GPU check has timings
    // instead): met or not, beside the status, never changing it.
    const auto results = load_results(paths.state_dir);
    auto goals_of = [&](const std::string& name) {
        const auto it = results.find(name);
        if (it == results.end() || !it->second.contains("goals")) return nlohmann::json::array();
        return it->second["goals"];
    };
    for (std::size_t l = 0; l < m.lessons.size(); ++l) {
        const auto& lesson = m.lessons[l];
        if (!o.json)
            std::cout << (color ? "\033[1m" : "") << lesson.id << (color ? "\033[0m" : "") << "  "
                      << lesson.title << "\n";
        for (std::size_t s = 0; s < lesson.steps.size(); ++s) {
            const StepInfo& step = lesson.steps[s];
            std::string name = step_name(m, {l, s});
            bool passed = progress.passed(name);
            bool is_next = next && next->lesson == l && next->step == s;
            // Not finishable here: passed over by `next`, never counted as holding anything up.
            bool no_gpu = !passed && !finishable_here(step, gpu);
            done += passed;
            waiting += no_gpu;
            ++total;
            const nlohmann::json goals = goals_of(name);
            std::size_t met = 0, measured = 0;
            for (const auto& g : goals) {
                measured += g.value("measured", false);
                met += g.value("met", false);
            }
            j.push_back({{"step", name},
                         {"title", step.title},
                         {"needs_gpu", step.needs_gpu},
                         {"goals", goals},
                         {"status", passed    ? "done"
                                    : is_next ? "next"
                                    : no_gpu  ? "needs_gpu"
                                              : "pending"}});
            if (o.json) continue;
            const char* mark = passed ? "done" : is_next ? "next" : no_gpu ? "gpu " : "    ";
            const char* colour = passed ? "\033[32m" : is_next ? "\033[33m" : "";
            std::cout << "  " << (color ? colour : "") << "[" << mark << "]"
                      << (color ? "\033[0m" : "") << " " << step.id << "  " << step.title
                      << (step.needs_gpu ? "  (needs an NVIDIA GPU: the emulator cannot run it)"
                                         : "");
            if (measured)
                std::cout << "  (" << (met == goals.size() ? "goal met" : "goal not met") << ": "
                          << goals[0].value("says", "")
                          << (goals.size() > 1
                                  ? " and " + std::to_string(goals.size() - 1) + " more"
                                  : "")
                          << ")";
            std::cout << "\n";
        }
    }
    if (o.json) {
        std::cout << versioned({{"steps", j},
                                {"done", done},
                                {"total", total},
                                {"waiting_for_gpu", waiting}})
                         .dump(2)
                  << "\n";
    } else {
        std::cout << "\n"
                  << progress_bar(done, total, 30, unicode_terminal()) << "  " << done << " of "
                  << total << " steps done.";
        if (next) std::cout << " Next: ./cudalings check " << step_name(m, *next);
        std::cout << "\n";
        if (waiting)
            std::cout << "[gpu ] " << waiting
                      << (waiting == 1 ? " step needs an NVIDIA GPU, which this machine lacks: "
                                         "it is passed over and holds nothing up.\n"
                                       : " steps need an NVIDIA GPU, which this machine lacks: "
                                         "they are passed over and hold nothing up.\n");
    }
    return exit_code::pass;
}

int cmd_hint(const Options& o) {
    CoursePaths paths;
    Manifest m;
    if (!open_course(o, paths, m)) return exit_code::usage;
    Progress progress(paths.state_dir + "/progress.json");
    std::vector<StepRef> steps;
    if (!select_steps(o, paths, m, progress, steps)) return exit_code::usage;
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
        std::cout << all_done_sentence(paths, m, progress) << " No hint needed.\n";
        return exit_code::pass;
    }
    for (const auto& ref : steps) {
        const auto& step = m.lessons[ref.lesson].steps[ref.step];
        std::cout << step_name(m, ref) << " — " << step.title << "\n  "
                  << (step.hint.empty() ? "(no hint for this step)" : step.hint) << "\n";
    }
    return exit_code::pass;
}

}  // namespace

Command add_list_command(CLI::App& app, Options& o) {
    auto* list = app.add_subcommand("list", "lessons and steps, with what is done");
    return {list, [&o] { return cmd_list(o); }};
}

Command add_hint_command(CLI::App& app, Options& o) {
    auto* hint =
        app.add_subcommand("hint",
                           "a hint for a step (by default the one you are on: the step `watch` "
                           "or your last `check` was on, else the first unfinished)");
    hint->add_option("step", o.step, "the step");
    return {hint, [&o] { return cmd_hint(o); }};
}

}  // namespace cudalings::cli
