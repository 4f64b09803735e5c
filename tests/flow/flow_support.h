// What the learner-flow tests share: running the real `cudalings` binary with an environment
// of their choosing, and throw-away copies of the course.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "supervise.h"

namespace flow {

namespace fs = std::filesystem;

struct Run {
    int code = -1;
    std::string out, err;
};

inline std::string temp_dir(const std::string& what) {
    static int counter = 0;
    const fs::path dir =
        fs::temp_directory_path() / ("cudalings_flow_" + what + "_" + std::to_string(::getpid()) +
                                     "_" + std::to_string(counter++));
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir.string();
}

// `cudalings ARGS` with a private state directory (unless the environment names one).
inline Run cudalings(std::vector<std::string> args, std::map<std::string, std::string> env = {},
                     const std::string& cwd = CUDALINGS_SOURCE_DIR, double seconds = 600) {
    args.insert(args.begin(), CUDALINGS_BINARY);
    cudalings::ChildOptions o;
    o.wall_seconds = seconds;
    o.output_cap = 4 << 20;
    o.working_dir = cwd;
    o.env = std::move(env);
    if (!o.env.count("CUDALINGS_STATE_DIR")) o.env["CUDALINGS_STATE_DIR"] = temp_dir("state");
    o.env.emplace("NO_COLOR", "1");
    auto r = cudalings::run_supervised(args, o);
    if (!r.started) throw std::runtime_error("cannot run cudalings: " + r.start_error);
    return {r.timed_out ? -2 : r.exit_code, r.out.head, r.err.head};
}

// A copy of the course a learner could have: course.json and lessons/ copied (theirs to edit),
// solutions/ and checks/ linked.
inline std::string course_copy() {
    const fs::path root = temp_dir("course");
    const fs::path src = CUDALINGS_SOURCE_DIR;
    fs::copy(src / "course.json", root / "course.json");
    fs::copy(src / "lessons", root / "lessons", fs::copy_options::recursive);
    for (const char* linked : {"solutions", "checks"})
        if (fs::exists(src / linked)) fs::create_directory_symlink(src / linked, root / linked);
    return root.string();
}

// A real headless browser run on the page at `file` with `flags` (e.g. "--dump-dom"):
// `browser` false when none is installed (the caller skips), `ok` false when it failed; `home`
// is its private profile folder (a screenshot can go there).
struct BrowserRun {
    bool browser = false, ok = false;
    std::string out, home;
};
inline BrowserRun headless_browser(const std::string& file, std::vector<std::string> flags) {
    BrowserRun run;
    std::string browser;
    for (const char* name : {"chromium", "chromium-browser", "google-chrome"})
        if (browser.empty()) browser = cudalings::find_program(name);
    if (browser.empty()) return run;
    run.browser = true;
    run.home = temp_dir("browser");
    cudalings::ChildOptions o;
    o.wall_seconds = 120;
    o.output_cap = 8 << 20;
    o.env["HOME"] = run.home;
    std::vector<std::string> argv{browser, "--headless", "--no-sandbox", "--disable-gpu",
                                  "--user-data-dir=" + run.home};
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.push_back("file://" + file);
    auto r = cudalings::run_supervised(argv, o);
    run.ok = r.exited_ok();
    run.out = r.out.head;
    return run;
}
constexpr const char* kNoBrowser =
    "no headless browser installed (Debian: apt-get install chromium)";

inline void write(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

inline std::string read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace flow
