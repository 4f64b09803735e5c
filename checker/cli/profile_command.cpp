// `cudalings profile STEP`: Nsight Compute on one timed call of a step (core/run/profile.h). The
// step is built as `check` builds it; the runner makes one warm-up call and then the timed call
// under `ncu --clock-control none`, and each kernel of that call is shown: its launch, duration,
// DRAM throughput, achieved occupancy and the metrics its lesson chose, each with what it means.
//
// Exit codes: 0 profiled, 1 the step did not build or its call failed, 2 usage, 77 no GPU,
// 78 the machine's setup (no ncu, no permission to the GPU's counters).
#include <nlohmann/json.hpp>

#include <algorithm>
#include <iostream>
#include <sstream>

#include "../core/report/report.h"
#include "../core/report/text.h"
#include "../core/run/profile.h"
#include "../core/run/verdict.h"
#include "cli.h"
#include "tools.h"

namespace cudalings::cli {
namespace {

struct ProfileArgs {
    std::string column;
    std::string metrics;  // "a,b": instead of the lesson's
};

std::vector<std::string> split_metrics(const std::string& text) {
    std::vector<std::string> out;
    std::stringstream in(text);
    std::string item;
    while (std::getline(in, item, ','))
        if (!item.empty()) out.push_back(item);
    return out;
}

// One way to end without a profile, in text or JSON: what happened, and the fix.
struct Ending {
    std::string status;  // "setup_error", "compile_error", "error", "usage_error"
    std::vector<SetupProblem> problems;
    std::string message;
};

int finish(const Options& o, const std::string& step, const Ending& e, int code,
           const std::string& compiler_output = {}) {
    if (o.json) {
        nlohmann::json problems = nlohmann::json::array();
        for (const auto& p : e.problems)
            problems.push_back({{"what", p.what}, {"fix", p.fix}, {"anchor", p.anchor}});
        std::cout << versioned({{"step", step},
                                {"status", e.status},
                                {"message", e.message},
                                {"problems", problems},
                                {"compiler_output", compiler_output}})
                         .dump(2)
                  << "\n";
        return code;
    }
    if (!compiler_output.empty()) std::cerr << compiler_output;
    if (!e.message.empty()) std::cerr << "cudalings: " << e.message << "\n";
    for (const auto& p : e.problems) std::cerr << "cudalings: " << p.line() << "\n";
    return code;
}

int run_profile(const Options& o, const ProfileArgs& a) {
    CoursePaths paths;
    Manifest m;
    StepRef ref;
    if (!open_one_step(o, "profile", paths, m, ref)) return exit_code::usage;
    const auto& lesson = m.lessons[ref.lesson];
    const std::string step = step_name(m, ref);
    if (!lesson.steps[ref.step].timed)
        return finish(o, step,
                      {"usage_error",
                       {},
                       step + " is not timed (correctness only): there is no timed call to "
                              "profile"},
                      exit_code::usage);
    // The lesson's chosen metrics, or --metrics; after every profile's summary.
    std::vector<std::string> chosen =
        a.metrics.empty() ? lesson.profile_metrics : split_metrics(a.metrics);
    if (a.metrics.empty() && chosen.empty()) chosen = default_lesson_metrics();
    for (const auto& name : chosen)
        if (!looks_like_metric(name))
            return finish(o, step,
                          {"usage_error",
                           {},
                           "--metrics: \"" + name +
                               "\" is not an ncu metric name (like "
                               "lts__t_sector_hit_rate.pct; `ncu --query-metrics` lists them)"},
                          exit_code::usage);
    std::vector<std::string> metrics = summary_metrics();
    for (const auto& name : chosen)
        if (std::find(metrics.begin(), metrics.end(), name) == metrics.end())
            metrics.push_back(name);

    CheckOptions options;
    if (!check_options(o, options)) return exit_code::usage;
    options.hazards = false;
    Checker checker(paths, m, options);
    // The machine first, every problem at once: a GPU, then ncu.
    const std::string ncu = find_ncu(options.nvcc.empty() ? configured_nvcc() : options.nvcc);
    Ending setup{"setup_error", {}, ""};
    const GpuInfo& gpu = checker.gpu();
    if (!gpu.present) setup.problems.push_back(profile_needs_gpu_problem(gpu.error));
    if (ncu.empty()) setup.problems.push_back(no_ncu_problem());
    if (!setup.problems.empty())
        return finish(o, step, setup, gpu.present ? exit_code::setup : exit_code::no_gpu);

    if (!o.json && live_terminal(2))
        checker.set_progress_callback(
            [](const std::string& what) { std::cerr << "  " << what << "\r\033[K"; });
    Checker::Profiled p = checker.profile(ref, o.solutions, ncu, metrics, a.column);
    if (!o.json && live_terminal(2)) std::cerr << "\r\033[K";
    if (p.setup) return finish(o, step, {"setup_error", {*p.setup}, ""}, exit_code::setup);
    if (!p.built) {
        RenderOptions render;
        render.color = use_color(o);
        render.command = "./cudalings";
        if (!o.json) std::cout << render_text(p.build, render) << std::flush;
        return finish(o, step,
                      {"compile_error", {}, p.build.file + " does not build: nothing to profile"},
                      exit_code::fail, o.json ? p.build.compiler_output : "");
    }
    if (!p.usage_error.empty())
        return finish(o, step, {"usage_error", {}, p.usage_error}, exit_code::usage);
    if (!p.learner_error.empty())
        return finish(o, step, {"error", {}, "the profiled call failed: " + p.learner_error},
                      exit_code::fail);
    if (!p.internal_error.empty() || !p.call)
        return finish(o, step,
                      {"error",
                       {},
                       "internal error (the checker's fault, not your code's): " +
                           (p.internal_error.empty() ? std::string("the runner said nothing")
                                                     : p.internal_error)},
                      exit_code::fail);
    ProfileOutcome out;
    out.step = step;
    out.file = p.build.file;
    out.gpu = gpu.name;
    out.ncu = ncu;
    out.call = *p.call;
    out.metrics = chosen;
    out.report = std::move(p.report);
    const int code = out.call.verified ? exit_code::pass : exit_code::fail;
    if (o.json) {
        nlohmann::json j = profile_json(out);
        j["status"] = out.call.verified ? "ok" : "wrong_output";
        std::cout << versioned(j).dump(2) << "\n";
    } else {
        std::cout << render_profile(out, use_color(o)) << std::flush;
    }
    return code;
}

}  // namespace

Command add_profile_command(CLI::App& app, Options& o) {
    auto* profile = app.add_subcommand("profile", tool_summary("profile"));
    auto args = std::make_shared<ProfileArgs>();
    profile->add_option("step", o.step, "the step (default: the one you are on)");
    profile->add_flag("--solutions", o.solutions, "profile the reference solution, not yours");
    profile->add_option("--column", args->column,
                        "which timed problem, when the step has several (the first by default)");
    profile
        ->add_option("--metrics", args->metrics,
                     "ncu metrics to show instead of the lesson's, comma-separated")
        ->check(CLI::Validator(
            [](std::string& v) -> std::string {
                for (const auto& name : split_metrics(v))
                    if (!looks_like_metric(name))
                        return "\"" + name +
                               "\" is not an ncu metric name (like "
                               "lts__t_sector_hit_rate.pct)";
                return split_metrics(v).empty() ? "name at least one metric" : "";
            },
            "METRIC,..."));
    return {profile, [&o, args] { return run_profile(o, *args); }};
}

}  // namespace cudalings::cli
