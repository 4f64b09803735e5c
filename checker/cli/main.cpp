// cudalings: the learner's (and the instructor's) command.
//
//   cudalings list                     lessons and steps, with what is done
//   cudalings check [STEP]             check a step (the next unfinished one by default)
//   cudalings check --all [--solutions]
//   cudalings hint [STEP]
//
// Exit codes: 0 pass, 1 fail, 2 usage, 77 no GPU (it compiled; nothing else could run).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "../core/check.h"
#include "../core/course.h"
#include "../core/hash.h"
#include "../core/manifest.h"
#include "../core/report.h"
#include "../core/verdict.h"

namespace fs = std::filesystem;
using namespace cudalings;

namespace {

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

std::string tool_dir() {
    char path[PATH_MAX];
    ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
    if (n <= 0) return ".";
    path[n] = '\0';
    return fs::path(path).parent_path().string();
}

bool use_color(const Options& o) {
    if (o.no_color || o.json) return false;
    if (std::getenv("NO_COLOR") && *std::getenv("NO_COLOR")) return false;
    return ::isatty(1);
}

// Resolves the course and its manifest; prints why not and returns false when it cannot.
bool open_course(const Options& o, CoursePaths& paths, Manifest& manifest) {
    std::string root = o.root;
    if (root.empty() && std::getenv("CUDALINGS_ROOT")) root = std::getenv("CUDALINGS_ROOT");
    if (root.empty()) {
        auto found = find_course_root(fs::current_path().string());
        if (!found) {
            std::cerr << "cudalings: not inside a course: no " << kManifestName
                      << " here or in any parent directory (use --root DIR)\n";
            return false;
        }
        root = *found;
    }
    paths.root = fs::absolute(root).string();
    paths.tool_dir = tool_dir();
    paths.state_dir = !o.state_dir.empty()                 ? o.state_dir
                      : std::getenv("CUDALINGS_STATE_DIR") ? std::getenv("CUDALINGS_STATE_DIR")
                                                           : paths.root + "/.cudalings";
    try {
        manifest = load_manifest(paths.manifest());
    } catch (const std::exception& e) {
        std::cerr << "cudalings: " << e.what() << "\n";
        return false;
    }
    return true;
}

std::vector<StepRef> all_steps(const Manifest& m) {
    std::vector<StepRef> refs;
    for (std::size_t l = 0; l < m.lessons.size(); ++l)
        for (std::size_t s = 0; s < m.lessons[l].steps.size(); ++s) refs.push_back({l, s});
    return refs;
}

std::optional<StepRef> next_unfinished(const Manifest& m, const Progress& p) {
    for (const auto& ref : all_steps(m))
        if (!p.passed(step_name(m, ref))) return ref;
    return std::nullopt;
}

// The steps a command acts on: named, --all, or the next unfinished one.
bool select_steps(const Options& o, const Manifest& m, const Progress& p,
                  std::vector<StepRef>& steps) {
    if (o.all) {
        steps = all_steps(m);
        return true;
    }
    if (!o.step.empty()) {
        std::string error;
        auto found = resolve_steps(m, o.step, &error);
        if (!found) {
            std::cerr << "cudalings: " << error << "\n";
            return false;
        }
        steps = *found;
        return true;
    }
    auto next = next_unfinished(m, p);
    if (next) steps = {*next};
    return true;
}

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
        std::cout << nlohmann::json{{"steps", j}, {"done", done}, {"total", total}}.dump(2) << "\n";
    } else {
        std::cout << "\n" << done << " of " << total << " steps done.";
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
bool check_options(const Options& o, CheckOptions& options) {
    options.timing = !o.no_time;
    options.compile_seconds = o.compile_timeout;
    options.case_idle_seconds = o.case_timeout;
    options.sanitize = o.sanitize;
    if (o.seed.empty()) {
        options.seed = fresh_seed();
        return true;
    }
    char* end = nullptr;
    options.seed = std::strtoull(o.seed.c_str(), &end, 16);
    if (!end || *end) {
        std::cerr << "cudalings: --seed takes the hexadecimal seed a report printed\n";
        return false;
    }
    return true;
}

// Rows for every timed step that passed, then the lesson's library baselines, timed now.
Staircase staircase(Checker& checker, const LessonInfo& lesson,
                    const std::vector<StepReport>& reports) {
    Staircase st;
    st.lesson = lesson.id;
    for (std::size_t s = 0; s < reports.size(); ++s) {
        const auto& r = reports[s];
        if (r.verdict != Verdict::Pass || !r.timing.present) continue;
        st.rows.push_back({lesson.steps[s].id, lesson.steps[s].title, r.timing.learner.median_us,
                           r.timing.bytes, false, r.timing.n});
        st.n = std::max(st.n, r.timing.n);
        st.copy_gbps = r.timing.copy_gbps;
    }
    if (st.rows.empty()) return st;
    for (const auto& b : lesson.baselines) {
        auto t = checker.time_baseline(b);
        if (!t.ok) {
            std::cerr << "cudalings: baseline " << b.title << " not timed: " << t.error << "\n";
            continue;
        }
        st.rows.push_back({b.title, b.title, t.side.median_us, t.bytes, true, t.n});
    }
    return st;
}

int cmd_check(const Options& o) {
    CoursePaths paths;
    Manifest m;
    if (!open_course(o, paths, m)) return exit_code::usage;
    Progress progress(paths.state_dir + "/progress.json");
    std::vector<StepRef> steps;
    if (!select_steps(o, m, progress, steps)) return exit_code::usage;
    if (steps.empty()) {
        std::cout
            << "Every step is done. Well done! (`cudalings check STEP` checks any step again.)\n";
        return exit_code::pass;
    }
    CheckOptions options;
    if (!check_options(o, options)) return exit_code::usage;
    // cudalings emulator (checker/core/emulate.h): forced, or automatic where no GPU exists
    options.emulate = o.emulate || o.explain;
    options.explain = o.explain;
#if defined(CUDALINGS_AUTO_EMULATE) && CUDALINGS_AUTO_EMULATE
    options.emulate_without_gpu = !o.no_emulate;
#endif
    Checker checker(paths, m, options);
    bool tty_progress = !o.json && ::isatty(2);
    if (tty_progress)
        checker.set_progress_callback(
            [](const std::string& what) { std::cerr << "  ... " << what << "\r\033[K"; });
    RenderOptions render;
    render.color = use_color(o);
    render.verbose = o.verbose;
    render.command = "./cudalings";
    int passed = 0, failed = 0, skipped = 0;
    nlohmann::json results = nlohmann::json::array();
    nlohmann::json staircases = nlohmann::json::array();
    std::vector<StepReport> lesson_reports;
    for (std::size_t i = 0; i < steps.size(); ++i) {
        StepReport r = checker.check(steps[i], o.solutions);
        lesson_reports.push_back(r);
        if (r.verdict == Verdict::Pass)
            ++passed;
        else if (r.verdict == Verdict::Skipped)
            ++skipped;
        else
            ++failed;
        if (!o.solutions) {
            std::string name = step_name(m, steps[i]);
            if (r.verdict == Verdict::Pass)
                progress.mark_passed(name, Hasher().add_file(r.file).hex());
            else if (r.verdict != Verdict::Skipped)
                progress.clear(name);
            progress.save();
        }
        if (o.json) {
            results.push_back(to_json(r));
        } else {
            if (i) std::cout << "\n";
            std::cout << render_text(r, render) << std::flush;
        }
        // The end of a whole lesson: its staircase.
        bool lesson_ends = i + 1 == steps.size() || steps[i + 1].lesson != steps[i].lesson;
        if (lesson_ends) {
            const LessonInfo& lesson = m.lessons[steps[i].lesson];
            if (lesson_reports.size() == lesson.steps.size() && !o.no_time) {
                auto st = staircase(checker, lesson, lesson_reports);
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
        std::cout << nlohmann::json{{"results", results},
                                    {"staircases", staircases},
                                    {"passed", passed},
                                    {"failed", failed},
                                    {"skipped", skipped}}
                         .dump(2)
                  << "\n";
    } else if (steps.size() > 1 || o.all) {
        std::cout << "\n"
                  << passed << " passed, " << failed << " failed, " << skipped << " skipped\n";
    }
    return exit_code_for(passed, failed, skipped);
}

// Grading: many submission folders in one go. Each is checked in turn (its learner code in
// supervised child processes, as always); each result is written atomically as soon as it is
// known; one misbehaving submission never stops the batch, and a result file is written even
// when the checker itself fails on one.
int cmd_grade(const Options& o, const std::vector<std::string>& submissions,
              const std::string& out_dir, int repeat) {
    CoursePaths course;
    Manifest m;
    if (!open_course(o, course, m)) return exit_code::usage;
    std::vector<StepRef> steps;
    Progress none(course.state_dir + "/unused-progress.json");
    Options select = o;
    if (o.step.empty()) select.all = true;
    if (!select_steps(select, m, none, steps)) return exit_code::usage;
    if (!make_dirs(out_dir)) {
        std::cerr << "cudalings: cannot create " << out_dir << "\n";
        return exit_code::usage;
    }
    CheckOptions options;
    if (!check_options(o, options)) return exit_code::usage;
    int failed_total = 0, passed_total = 0, skipped_total = 0;
    nlohmann::json summary = nlohmann::json::array();
    std::size_t total = submissions.size() * static_cast<std::size_t>(repeat), done = 0;
    for (int round = 0; round < repeat; ++round) {
        for (const auto& dir : submissions) {
            ++done;
            std::string name = fs::path(dir).lexically_normal().filename().string();
            if (name.empty() || name == ".")
                name = fs::path(dir).lexically_normal().parent_path().filename().string();
            nlohmann::json result{{"submission", fs::absolute(dir).string()}, {"round", round + 1}};
            int passed = 0, failed = 0, skipped = 0;
            auto start = std::chrono::steady_clock::now();
            try {
                CoursePaths paths = course;
                paths.root = fs::absolute(dir).string();
                // A submission is a copy of the course: its step files under lessons/.
                if (!fs::is_directory(paths.root + "/lessons"))
                    throw std::runtime_error(paths.root + " has no lessons/ folder");
                paths.include_root = course.root;  // the contract comes from the instructor's copy
                CheckOptions mine = options;
                if (o.seed.empty()) mine.seed = fresh_seed();  // fresh inputs per submission
                Checker checker(paths, m, mine);
                nlohmann::json results = nlohmann::json::array();
                for (const auto& ref : steps) {
                    StepReport r = checker.check(ref, false);
                    (r.verdict == Verdict::Pass      ? passed
                     : r.verdict == Verdict::Skipped ? skipped
                                                     : failed)++;
                    results.push_back(to_json(r));
                }
                result["results"] = results;
            } catch (const std::exception& e) {
                result["internal_error"] = e.what();
                ++failed;
            }
            double seconds =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            result["passed"] = passed;
            result["failed"] = failed;
            result["skipped"] = skipped;
            result["seconds"] = seconds;
            std::string file = out_dir + "/" + name +
                               (repeat > 1 ? ".round" + std::to_string(round + 1) : "") + ".json";
            if (!write_file_atomic(file, result.dump(2) + "\n"))
                std::cerr << "cudalings: cannot write " << file << "\n";
            std::vector<std::string> verdicts;
            for (const auto& r : result.value("results", nlohmann::json::array()))
                verdicts.push_back(r["step"].get<std::string>() + "=" +
                                   r["verdict"].get<std::string>());
            summary.push_back({{"submission", name},
                               {"round", round + 1},
                               {"passed", passed},
                               {"failed", failed},
                               {"skipped", skipped},
                               {"file", file},
                               {"verdicts", verdicts}});
            std::cerr << "[" << done << "/" << total << "] " << name << ": " << passed
                      << " passed, " << failed << " failed, " << skipped << " skipped ("
                      << static_cast<int>(seconds * 10) / 10.0 << " s)";
            for (const auto& v : verdicts) std::cerr << "  " << v;
            std::cerr << "\n";
            passed_total += passed;
            failed_total += failed;
            skipped_total += skipped;
        }
    }
    write_file_atomic(out_dir + "/summary.json", summary.dump(2) + "\n");
    std::cout << passed_total << " passed, " << failed_total << " failed, " << skipped_total
              << " skipped\n";
    return exit_code_for(passed_total, failed_total, skipped_total);
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"cudalings: learn CUDA by writing kernels; checks, tests and times your code"};
    app.require_subcommand(1);
    app.fallthrough();  // global options may also follow the subcommand
    Options o;
    app.add_option("--root", o.root, "the course directory (default: found from here upwards)");
    app.add_option("--state-dir", o.state_dir,
                   "where progress and caches live (default: <root>/.cudalings)");
    app.add_flag("--json", o.json, "machine-readable output");
    app.add_flag("--no-color", o.no_color, "no colour (also: NO_COLOR=1)");

    auto* list = app.add_subcommand("list", "lessons and steps, with what is done");
    auto* check = app.add_subcommand("check", "compile, test and time a step");
    check->add_option("step", o.step,
                      "a step (01_vector_add/02_grid_stride_loop, 1/2, a file) or a lesson (02)");
    check->add_flag("--all", o.all, "every step of the course, in order");
    check->add_flag("--solutions", o.solutions,
                    "check the files under solutions/ instead of lessons/");
    check->add_option("--seed", o.seed, "reproduce a run: the hexadecimal seed a report printed");
    check->add_flag("--no-time", o.no_time, "correctness only");
    check->add_flag("-v,--verbose", o.verbose, "show every case, not only failures");
    check->add_flag(
        "--emulate", o.emulate,
        "run the cases on the CPU emulator (correctness only, no timing), even on a GPU");
    check->add_flag("--no-emulate", o.no_emulate,
                    "without a GPU, only compile (SKIPPED, exit code 77) instead of emulating");
    check->add_flag("--explain", o.explain,
                    "emulate, and show teaching metrics: bank conflicts, sectors per request");
    check->add_flag(
        "--sanitize", o.sanitize,
        "also run compute-sanitizer (memcheck, racecheck, initcheck, synccheck) on small cases");
    check->add_option("--compile-timeout", o.compile_timeout, "seconds nvcc may take (default 120)")
        ->check(CLI::PositiveNumber);
    check
        ->add_option("--case-timeout", o.case_timeout,
                     "seconds a case may go without progress before it is a TIMEOUT (default 20)")
        ->check(CLI::PositiveNumber);
    auto* grade =
        app.add_subcommand("grade", "check many submission folders (course copies) in one batch");
    std::vector<std::string> submissions;
    std::string grade_out = "grading-results";
    int repeat = 1;
    grade->add_option("submissions", submissions, "submission folders (each a copy of the course)")
        ->required();
    grade->add_option("--step", o.step, "a step or lesson to check (default: every step)");
    grade->add_option("--out", grade_out, "where the result files go (one JSON per submission)");
    grade->add_option("--repeat", repeat, "check the whole batch this many times")
        ->check(CLI::PositiveNumber);
    grade->add_option("--seed", o.seed, "the same inputs for every submission");
    grade->add_flag("--no-time", o.no_time, "correctness only");
    grade->add_flag("--sanitize", o.sanitize, "also run compute-sanitizer");
    grade->add_option("--compile-timeout", o.compile_timeout, "seconds nvcc may take");
    grade->add_option("--case-timeout", o.case_timeout,
                      "seconds without progress before a TIMEOUT");
    auto* hint =
        app.add_subcommand("hint", "a hint for a step (the next unfinished one by default)");
    hint->add_option("step", o.step, "the step");

    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        app.exit(e);
        return exit_code::usage;
    }
    if (*list) return cmd_list(o);
    if (*check) {
        if (o.all && !o.step.empty()) {
            std::cerr << "cudalings: give a step or --all, not both\n";
            return exit_code::usage;
        }
        return cmd_check(o);
    }
    if (*hint) return cmd_hint(o);
    if (*grade) return cmd_grade(o, submissions, grade_out, repeat);
    return exit_code::usage;
}
