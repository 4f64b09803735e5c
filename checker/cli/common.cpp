// Shared by every command: the tool directory, colour, the course, the steps, the options.
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "cli.h"

namespace fs = std::filesystem;

namespace cudalings::cli {

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
        manifest = load_manifest(paths.root);
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
}  // namespace cudalings::cli
