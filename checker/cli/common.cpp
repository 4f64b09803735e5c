// Shared by every command: the tool directory, colour, the course, the steps, the options.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "../core/course/hash.h"
#include "../core/course/pristine.h"
#include "../core/report/history.h"
#include "../core/report/text.h"
#include "../core/run/supervise.h"
#include "../core/run/verdict.h"
#include "cli.h"

namespace fs = std::filesystem;

namespace cudalings::cli {

#ifndef CUDALINGS_CMAKE
#define CUDALINGS_CMAKE ""
#endif

std::string checker_cmake() {
    const std::string built_with = CUDALINGS_CMAKE;
    return !built_with.empty() && !find_program(built_with).empty() ? built_with
                                                                    : find_program("cmake");
}

std::string tool_dir() {
    char path[PATH_MAX];
    ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
    if (n <= 0) return ".";
    path[n] = '\0';
    return fs::path(path).parent_path().string();
}

bool use_color(const Options& o) { return color_wanted(1, o.no_color || o.json); }

// Resolves the course and its manifest; prints why not and returns false when it cannot.
bool open_course(const Options& o, CoursePaths& paths, Manifest& manifest) {
    std::string root = o.root;
    if (root.empty() && std::getenv("CUDALINGS_ROOT")) root = std::getenv("CUDALINGS_ROOT");
    if (root.empty()) {
        std::error_code ec;
        auto found = find_course_root(fs::current_path(ec).string());
        // Outside any course, ./cudalings (the wrapper) means its own course.
        const char* wrapper_course = std::getenv("CUDALINGS_DEFAULT_ROOT");
        if (!found && wrapper_course && *wrapper_course) found = wrapper_course;
        if (!found) {
            std::cerr << "cudalings: not inside a course: no " << kManifestName
                      << " here or in any parent directory (run it from the course's folder, "
                         "or use --root DIR)\n";
            return false;
        }
        root = *found;
    }
    paths.root = fs::absolute(root).string();
    o.resolved_root = paths.root;
    paths.tool_dir = tool_dir();
    // The CUDA driver keeps the kernels it compiles in ~/.nv/ComputeCache unless told otherwise:
    // the checker's own processes keep them beside the checks cache, so that a check or a grading
    // batch writes nothing in the home folder of whoever runs it. (The H100 run of the hostile
    // batch found .nv in the grader's home.) A path the user set wins.
    ::setenv("CUDA_CACHE_PATH", (paths.tool_dir + "/checks-cache/nv-compute-cache").c_str(), 0);
    // An empty CUDALINGS_STATE_DIR (a variable set to nothing) is as if unset, not the
    // current folder.
    const char* from_environment = std::getenv("CUDALINGS_STATE_DIR");
    paths.state_dir = !o.state_dir.empty()                    ? o.state_dir
                      : from_environment && *from_environment ? std::string(from_environment)
                                                              : paths.root + "/.cudalings";
    try {
        manifest = load_manifest(paths.root);
    } catch (const std::exception& e) {
        std::cerr << "cudalings: " << e.what() << "\n";
        return false;
    }
    // References and checks are built against the course's own lesson headers (build/pristine),
    // not the learner's working copies: an edited header affects only the learner's steps.
    const std::string pristine = pristine_root(paths.tool_dir);
    if (paths.include_root.empty() && pristine_covers(pristine, manifest))
        paths.include_root = pristine;
    return true;
}

namespace {

// Every name a step or lesson goes by, for suggestions.
std::vector<std::string> step_names(const Manifest& m) {
    std::vector<std::string> names;
    for (const auto& lesson : m.lessons) {
        names.push_back(lesson.id);
        for (const auto& step : lesson.steps) {
            names.push_back(lesson.id + "/" + step.id);
            names.push_back(step.id);
            const auto underscore = step.id.find('_');
            if (underscore != std::string::npos) names.push_back(step.id.substr(underscore + 1));
        }
    }
    return names;
}

// A step named by its bare id ("02_grid_stride_loop", "grid_stride_loop"), in any lesson.
std::vector<StepRef> steps_by_bare_name(const Manifest& m, const std::string& text) {
    std::vector<StepRef> found;
    std::string t = text;
    if (t.size() > 3 && t.substr(t.size() - 3) == ".cu") t.resize(t.size() - 3);
    for (std::size_t l = 0; l < m.lessons.size(); ++l) {
        for (std::size_t s = 0; s < m.lessons[l].steps.size(); ++s) {
            const std::string& id = m.lessons[l].steps[s].id;
            const auto underscore = id.find('_');
            if (id == t || (underscore != std::string::npos && id.substr(underscore + 1) == t))
                found.push_back({l, s});
        }
    }
    return found;
}

// A name given as a path relative to the current folder ("02_grid_stride_loop.cu" inside
// lessons/01_vector_add, "." inside a lesson): the same path relative to the course root.
std::string relative_to_root(const std::string& text, const std::string& root) {
    std::error_code ec;
    const fs::path here = fs::absolute(text, ec);
    if (ec || !fs::exists(here, ec)) return text;
    const fs::path canonical_root = fs::weakly_canonical(root, ec);
    const fs::path rel = fs::relative(fs::weakly_canonical(here, ec), canonical_root, ec);
    if (ec || rel.empty() || *rel.begin() == "..") return text;
    return rel.generic_string();
}

// A passed step whose file changed since it passed: `check` moves past it, so say so.
void note_edited_passed_steps(const Options& o, const Manifest& m, const Progress& p) {
    for (const auto& ref : all_steps(m)) {
        const std::string name = step_name(m, ref);
        const std::string hash = p.passed_hash(name);
        if (hash.empty()) continue;
        const auto& lesson = m.lessons[ref.lesson];
        const std::string file =
            o.resolved_root + "/lessons/" + lesson.id + "/" + lesson.steps[ref.step].id + ".cu";
        if (Hasher().add_file(file).hex() == hash) continue;
        std::cerr << "note: " << name << " changed since it passed; `./cudalings check " << name
                  << "` checks it again\n";
    }
}

}  // namespace

std::vector<StepRef> all_steps(const Manifest& m) {
    std::vector<StepRef> refs;
    for (std::size_t l = 0; l < m.lessons.size(); ++l)
        for (std::size_t s = 0; s < m.lessons[l].steps.size(); ++s) refs.push_back({l, s});
    return refs;
}

bool gpu_here(const CoursePaths& paths) {
    static std::optional<bool> present;
    if (!present) present = Checker(paths, Manifest{}, CheckOptions{}).gpu().present;
    return *present;
}

std::optional<StepRef> current_step(const CoursePaths& paths, const Manifest& m,
                                    const Progress& p) {
    const std::string recorded = load_current_step(paths.state_dir);
    return step_in_hand(m, p, gpu_here(paths),
                        recorded.empty() ? std::nullopt : find_step(m, recorded));
}

namespace {

// The steps a GPU-less machine passes over, not passed yet: how many.
std::size_t waiting_for_a_gpu(const Manifest& m, const Progress& p) {
    std::size_t n = 0;
    for (const auto& ref : all_steps(m))
        n += m.lessons[ref.lesson].steps[ref.step].needs_gpu && !p.passed(step_name(m, ref));
    return n;
}

bool lesson_done(const Manifest& m, const Progress& p, std::size_t lesson) {
    for (std::size_t s = 0; s < m.lessons[lesson].steps.size(); ++s)
        if (!p.passed(step_name(m, {lesson, s}))) return false;
    return true;
}

// The reference solution of `step`, relative to the course root ("" when the copy has none).
std::string solution_to_compare(const CoursePaths& paths, const Manifest& m, const StepRef& step) {
    const auto& lesson = m.lessons[step.lesson];
    const std::string file = paths.step_file(lesson, lesson.steps[step.step], true);
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) return {};
    // As the learner sees it from the course root (solutions/ may be a link elsewhere).
    return "solutions/" + lesson.id + "/" + lesson.steps[step.step].id + ".cu";
}

// A step that needs a GPU, checked where there is none: SKIPPED, and not the learner's to fix.
bool skipped_for_want_of_a_gpu(const CoursePaths& paths, const Manifest& m, const StepRef& step,
                               const StepReport& r) {
    return r.verdict == Verdict::Skipped && m.lessons[step.lesson].steps[step.step].needs_gpu &&
           !gpu_here(paths);
}

}  // namespace

std::string what_next(const CoursePaths& paths, const Manifest& m, const Progress& p,
                      const StepRef& step, const StepReport& r, std::optional<StepRef>& next) {
    next.reset();
    const bool passed = r.verdict == Verdict::Pass;
    const bool gpu_step = skipped_for_want_of_a_gpu(paths, m, step, r);
    if (!passed && !gpu_step) return {};
    std::ostringstream s;
    s << "\n";
    if (gpu_step)
        s << "This step needs an NVIDIA GPU (the emulator cannot run it): it does not hold up "
             "the course.\n";
    const std::string solution = passed ? solution_to_compare(paths, m, step) : "";
    if (!solution.empty())
        s << "Compare yours with the reference: " << solution
          << " (its comments say why it is written that way)\n";
    next = next_unfinished(m, p, gpu_here(paths), step);
    const std::string lesson = m.lessons[step.lesson].id;
    if (next) {
        if (next->lesson != step.lesson && lesson_done(m, p, step.lesson))
            s << "Every step of " << lesson << " is done. ";
        const std::string name = step_name(m, *next);
        s << "Next: " << name << " — " << m.lessons[next->lesson].steps[next->step].title
          << "\n      ./cudalings check " << name << "\n";
    } else {
        s << all_done_sentence(paths, m, p) << "\n";
    }
    return s.str();
}

std::string all_done_sentence(const CoursePaths& paths, const Manifest& m, const Progress& p) {
    const std::size_t waiting = gpu_here(paths) ? 0 : waiting_for_a_gpu(m, p);
    if (!waiting) return "Every step is done. Well done!";
    return "Every step this machine can run is done. Well done! " + std::to_string(waiting) +
           (waiting == 1 ? " step needs" : " steps need") +
           " an NVIDIA GPU (`./cudalings list` marks them).";
}

void what_next_json(const CoursePaths& paths, const Manifest& m, const Progress& p,
                    const StepRef& step, const StepReport& r, nlohmann::json& j) {
    std::optional<StepRef> next;
    what_next(paths, m, p, step, r, next);
    if (r.verdict == Verdict::Pass) {
        const std::string solution = solution_to_compare(paths, m, step);
        if (!solution.empty()) j["solution"] = solution;
    }
    if (next) j["next"] = step_name(m, *next);
}

bool open_one_step(const Options& o, const char* command, CoursePaths& paths, Manifest& m,
                   StepRef& step) {
    if (!open_course(o, paths, m)) return false;
    Progress progress(paths.state_dir + "/progress.json");
    std::vector<StepRef> steps;
    if (!select_steps(o, paths, m, progress, steps)) return false;
    if (steps.size() != 1) {
        std::cerr << "cudalings: " << command << " takes one step\n";
        return false;
    }
    step = steps[0];
    return true;
}

// The steps a command acts on: named, --all, or the step the learner is on.
bool select_steps(const Options& o, const CoursePaths& paths, const Manifest& m, const Progress& p,
                  std::vector<StepRef>& steps) {
    if (o.all) {
        steps = all_steps(m);
        return true;
    }
    if (!o.step.empty()) {
        std::string error;
        const std::string text = relative_to_root(o.step, o.resolved_root);
        auto found = resolve_steps(m, text, &error);
        if (!found) {
            const auto bare = steps_by_bare_name(m, text);
            if (bare.size() == 1) {
                steps = bare;
                return true;
            }
            if (bare.size() > 1) {
                std::cerr << "cudalings: \"" << o.step << "\" names a step in several lessons:";
                for (const auto& ref : bare) std::cerr << " " << step_name(m, ref);
                std::cerr << "\n";
                return false;
            }
            std::cerr << "cudalings: " << error << did_you_mean(o.step, step_names(m)) << "\n";
            return false;
        }
        steps = *found;
        return true;
    }
    auto next = current_step(paths, m, p);
    if (next) steps = {*next};
    note_edited_passed_steps(o, m, p);
    return true;
}

void add_judge_split_flags(CLI::App* command, Options& o) {
    auto* split = command->add_flag("--judge-split", o.judge_split,
                                    "the default: each step runs in a process of its own that "
                                    "the checker judges from outside, on a GPU or the emulator");
    command
        ->add_flag("--in-process", o.in_process,
                   "run each step inside the checker's own process instead (for comparisons "
                   "only: the step can forge its verdict there; also CUDALINGS_IN_PROCESS=1)")
        ->excludes(split);
}

bool judge_split_wanted(const Options& o) {
    if (o.in_process) return false;
    const char* v = std::getenv("CUDALINGS_IN_PROCESS");
    return !(v && std::string(v) == "1");
}

bool check_options(const Options& o, CheckOptions& options) {
    options.timing = !o.no_time;
    options.compile_seconds = o.compile_timeout;
    options.case_idle_seconds = o.case_timeout;
    options.sanitize = o.sanitize;
    options.hazards = !o.no_hazards;
    options.judge_split = judge_split_wanted(o);
    options.reuse_unchanged = o.seed.empty() && !o.rerun && !o.solutions;
    options.first_failure = o.first_failure && !o.all_cases;  // watch: unless --all-cases
    if (o.seed.empty()) {
        options.seed = fresh_seed();
        return true;
    }
    // 1 to 16 hexadecimal digits, nothing else (strtoull would take "-5" and wrap it).
    const bool hex = o.seed.size() <= 16 && std::all_of(o.seed.begin(), o.seed.end(), [](char c) {
                         return std::isxdigit(static_cast<unsigned char>(c));
                     });
    if (!hex) {
        std::cerr << "cudalings: --seed takes the 16 hexadecimal digits a report printed (not \""
                  << o.seed << "\")\n";
        return false;
    }
    options.seed = std::strtoull(o.seed.c_str(), nullptr, 16);
    return true;
}

StepReport check_and_record(Checker& checker, const Options& o, const Manifest& m,
                            Progress& progress, const StepRef& step) {
    StepReport r = checker.check(step, o.solutions);
    if (o.solutions) return r;
    const std::string name = step_name(m, step);
    const bool about_the_code = r.verdict != Verdict::Skipped && r.verdict != Verdict::SetupError &&
                                r.verdict != Verdict::InternalError;
    if (r.verdict == Verdict::Pass)
        progress.mark_passed(name, Hasher().add_file(r.file).hex());
    else if (about_the_code)
        progress.clear(name);
    static bool warned = false;
    const std::string& state = checker.paths().state_dir;
    if ((!progress.save() || !record_result(state, r) || !record_explained(state, r)) && !warned) {
        warned = true;
        std::cerr << "cudalings: cannot save progress in " << state << " (" << std::strerror(errno)
                  << "): use --state-dir DIR (docs/troubleshooting.md"
                  << "#state-dir)\n";
    }
    return r;
}

nlohmann::json versioned(nlohmann::json j) {
    j["format_version"] = kJsonFormatVersion;
    return j;
}

CLI::Validator positive_seconds() {
    return CLI::Validator(
        [](std::string& text) -> std::string {
            char* end = nullptr;
            const double v = std::strtod(text.c_str(), &end);
            if (end == text.c_str() || *end || !(v > 0) || v > 86400)
                return "takes a number of seconds above 0 (and at most a day), not \"" + text +
                       "\"";
            return {};
        },
        "SECONDS");
}

std::vector<std::string> command_names(const CLI::App& app) {
    std::vector<std::string> names;
    for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; }))
        names.push_back(sub->get_name());
    return names;
}

void add_check_flags(CLI::App* command, Options& o) {
    command->add_option("--seed", o.seed, "reproduce a run: the hexadecimal seed a report printed");
    command->add_flag("--no-time", o.no_time, "correctness only");
    command->add_flag("--first-failure", o.first_failure,
                      "emulated: stop at the first failing case (what watch does)");
    command->add_flag("--all-cases", o.all_cases,
                      "emulated: run every case, also after one failed (what check does)");
    command->add_flag("--rerun", o.rerun,
                      "emulated: run the cases even when the file, its headers and the checks are "
                      "unchanged since its last check (else that check's verdict is shown)");
    command->add_flag("-v,--verbose", o.verbose, "show every case, not only failures");
    command->add_flag(
        "--emulate", o.emulate,
        "run the cases on the CPU emulator (correctness only, no timing), even on a GPU");
    command->add_flag("--no-emulate", o.no_emulate,
                      "without a GPU, only compile (SKIPPED, exit code 77) instead of emulating");
    command->add_flag("--explain", o.explain,
                      "emulate, and show teaching metrics: bank conflicts, sectors per request");
    add_judge_split_flags(command, o);
    command->add_flag("--no-hazards", o.no_hazards,
                      "on a GPU, skip the hazard pass (the CPU emulator's race, barrier, mask and "
                      "bounds checks on the small cases)");
    command->add_flag(
        "--sanitize", o.sanitize,
        "also run compute-sanitizer (memcheck, racecheck, initcheck, synccheck) on small cases");
    command
        ->add_option("--compile-timeout", o.compile_timeout,
                     "seconds of CPU time each compiler process may use (default 120; wall clock: "
                     "3x + 30 s)")
        ->check(positive_seconds());
    command
        ->add_option("--case-timeout", o.case_timeout,
                     "seconds a case may go without progress before it is a TIMEOUT (default 20; "
                     "emulated: seconds of CPU time, with a wall-clock backstop of 3x + 30 s)")
        ->check(positive_seconds());
}

std::string pristine_or_explain(const CoursePaths& paths) {
    const std::string pristine = pristine_root(paths.tool_dir);
    if (pristine.empty())
        std::cerr << "cudalings: the course's own lesson files are not in " << paths.tool_dir
                  << "/pristine: build the checker with ./cudalings (or cmake) first\n";
    return pristine;
}

}  // namespace cudalings::cli
