// `cudalings check`: one step, a lesson (then its staircase) or the whole course.
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <ctime>
#include <iostream>

#include "../core/course/hash.h"
#include "../core/course/setup.h"
#include "../core/report/history.h"
#include "../core/report/report.h"
#include "../core/report/text.h"
#include "../core/run/sandbox.h"
#include "../core/run/verdict.h"
#include "cli.h"

#ifndef CUDALINGS_GIT_COMMIT
#define CUDALINGS_GIT_COMMIT ""
#endif

namespace cudalings::cli {
namespace {

std::string today() { return local_time_now("%Y-%m-%d"); }

StaircaseRow stair_row(const std::string& label, const std::string& title,
                       const std::string& problem, bool baseline,
                       const std::vector<TimingResult>& timings) {
    StaircaseRow row{label, title, problem, baseline, {}};
    for (const auto& t : timings)
        row.cells.push_back({t.column, t.learner.median_us, t.bytes, t.n, t.size, t.fp32_ops});
    return row;
}

// Rows for every timed step that passed, then the lesson's library baselines, timed now.
Staircase staircase(Checker& checker, const LessonInfo& lesson,
                    const std::vector<StepReport>& reports) {
    Staircase st;
    st.lesson = lesson.id;
    for (std::size_t s = 0; s < reports.size(); ++s) {
        const auto& r = reports[s];
        if (r.verdict != Verdict::Pass || r.timings.empty()) continue;
        st.rows.push_back(stair_row(lesson.steps[s].id, lesson.steps[s].title,
                                    lesson.steps[s].problem, false, r.timings));
        st.copy_gbps = r.timings.front().copy_gbps;
        for (const auto& t : r.timings) st.fp32_gflops = std::max(st.fp32_gflops, t.fp32_gflops);
    }
    if (st.rows.empty()) return st;
    for (const auto& b : lesson.baselines) {
        auto t = checker.time_baseline(lesson, b);
        if (!t.ok) {
            std::cerr << "cudalings: baseline " << b.title << " not timed: " << t.error << "\n";
            continue;
        }
        st.rows.push_back(stair_row(b.title, b.title, b.problem, true, t.timings));
    }
    return st;
}

int cmd_check(const Options& o) {
    CoursePaths paths;
    Manifest m;
    if (!open_course(o, paths, m)) return exit_code::usage;
    Progress progress(paths.state_dir + "/progress.json");
    std::vector<StepRef> steps;
    if (!select_steps(o, paths, m, progress, steps)) return exit_code::usage;
    if (steps.empty()) {
        std::cout << all_done_sentence(paths, m, progress)
                  << " (`cudalings check STEP` checks any step again.)\n";
        return exit_code::pass;
    }
    CheckOptions options;
    if (!check_options(o, options)) return exit_code::usage;
    // cudalings emulator (checker/core/build/emulate.h): forced, or automatic where no GPU exists
    options.emulate = o.emulate || o.explain;
    options.explain = o.explain;
#if defined(CUDALINGS_AUTO_EMULATE) && CUDALINGS_AUTO_EMULATE
    options.emulate_without_gpu = !o.no_emulate;
#endif
    // --sandbox: the same sealed runs as grading (checker/core/run/sandbox.h).
    if (o.sandbox) {
        std::string why;
        options.sandbox = open_sandbox({}, why);
        if (!options.sandbox) {
            std::cerr << "cudalings: no sandbox here: " << why << "\n";
            return exit_code::usage;
        }
    }
    Checker checker(paths, m, options);
    // One step is the step the learner is on (`hint` and a bare `check` come back to it).
    if (steps.size() == 1 && !o.all && !o.solutions)
        record_current_step(paths.state_dir, step_name(m, steps[0]));
    // Several steps: "[n/N] step" before each, then one line per step (the full report of
    // every step with -v; `check STEP` gives one step's). Progress that rewrites itself only on
    // a terminal.
    const bool several = steps.size() > 1;
    std::string counter;  // "[ 3/22] 01_vector_add/03_float4"
    bool tty_progress = !o.json && live_terminal(2);
    if (tty_progress)
        checker.set_progress_callback([&counter](const std::string& what) {
            std::cerr << "  " << counter << (counter.empty() ? "" : ": ") << what << "\r\033[K";
        });
    RenderOptions render;
    render.color = use_color(o);
    render.verbose = o.verbose;
    render.command = "./cudalings";
    int passed = 0, failed = 0, skipped = 0;
    // --json: the run's record (report.h), what `cudalings dev update` names a table by.
    RunRecord run;
    run.date = today();
    run.commit = CUDALINGS_GIT_COMMIT;
    run.solutions = o.solutions;
    if (o.json) run.cuda = nvcc_release(configured_nvcc());
    nlohmann::json results = nlohmann::json::array();
    nlohmann::json staircases = nlohmann::json::array();
    std::vector<StepReport> lesson_reports;
    std::string first_failed;                         // the first step of several that did not pass
    nlohmann::json after = nlohmann::json::object();  // --json, one step: "solution", "next"
    for (std::size_t i = 0; i < steps.size(); ++i) {
        if (several) counter = step_counter(i, steps.size()) + " " + step_name(m, steps[i]);
        StepReport r = check_and_record(checker, o, m, progress, steps[i]);  // common.cpp
        lesson_reports.push_back(r);
        if (run.gpu.empty()) run.gpu = r.gpu;
        if (run.copy_gbps <= 0 && !r.timings.empty()) run.copy_gbps = r.timings.front().copy_gbps;
        if (r.verdict == Verdict::Pass)
            ++passed;
        else if (r.verdict == Verdict::Skipped)
            ++skipped;
        else
            ++failed;
        const bool failure = r.verdict != Verdict::Pass && r.verdict != Verdict::Skipped;
        if (failure && first_failed.empty()) first_failed = r.step;
        if (o.json) {
            results.push_back(to_json(r));
            if (!several && !o.solutions) what_next_json(paths, m, progress, steps[i], r, after);
        } else if (several) {
            std::cout << render_step_line(r, i, steps.size(), render) << std::flush;
            if (o.verbose) std::cout << render_text(r, render) << "\n" << std::flush;
        } else {
            std::cout << render_text(r, render) << std::flush;
            std::optional<StepRef> next;
            if (!o.solutions) std::cout << what_next(paths, m, progress, steps[i], r, next);
        }
        // The end of a whole lesson: its staircase.
        bool lesson_ends = i + 1 == steps.size() || steps[i + 1].lesson != steps[i].lesson;
        if (lesson_ends) {
            const LessonInfo& lesson = m.lessons[steps[i].lesson];
            if (lesson_reports.size() == lesson.steps.size() && !o.no_time) {
                auto st = staircase(checker, lesson, lesson_reports);
                if (st.rows.size() >= 2 && !o.solutions) record_staircase(paths.state_dir, st);
                if (st.rows.size() >= 2) {
                    if (o.json)
                        staircases.push_back(to_json(st));
                    else
                        std::cout << "\n" << render_staircase(st, render) << std::flush;
                }
            }
            lesson_reports.clear();
        }
    }
    if (o.json) {
        nlohmann::json j{{"run", to_json(run)}, {"results", results}, {"staircases", staircases},
                         {"passed", passed},    {"failed", failed},   {"skipped", skipped}};
        j.update(after);
        std::cout << versioned(j).dump(2) << "\n";
    } else if (steps.size() > 1 || o.all) {
        std::cout << "\n"
                  << passed << " passed, " << failed << " failed, " << skipped << " skipped\n";
        if (!first_failed.empty() && !o.verbose)
            std::cout << "A step's full report: " << render.command << " check " << first_failed
                      << (o.solutions ? " --solutions" : "") << " (or -v here for every step)\n";
    }
    return exit_code_for(passed, failed, skipped);
}

}  // namespace

Command add_check_command(CLI::App& app, Options& o) {
    auto* check = app.add_subcommand("check", "compile, test and time a step");
    check->add_option("step", o.step,
                      "a step (01_vector_add/02_grid_stride_loop, 1/2, a file) or a lesson (02)");
    check->add_flag("--all", o.all, "every step of the course, in order");
    check->add_flag("--solutions", o.solutions,
                    "check the files under solutions/ instead of lessons/");
    add_check_flags(check, o);  // shared with `watch` (common.cpp)
    check->add_flag("--sandbox", o.sandbox,
                    "run the step's build and code in the bubblewrap sandbox grading uses "
                    "(CUDALINGS_BWRAP names bwrap when it is not on PATH)");
    return {check, [&o] {
                if (o.all && !o.step.empty()) {
                    std::cerr << "cudalings: give a step or --all, not both\n";
                    return exit_code::usage;
                }
                return cmd_check(o);
            }};
}

}  // namespace cudalings::cli
