#include "cli_support.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "supervise.h"

namespace fs = std::filesystem;
using cudalings::ChildOptions;
using cudalings::run_supervised;

namespace test_support {

std::string fresh_state_dir() {
    static int counter = 0;
    auto dir = fs::temp_directory_path() / ("cudalings_test_state_" + std::to_string(::getpid()) +
                                            "_" + std::to_string(counter++));
    fs::remove_all(dir);
    return dir.string();
}

Run cudalings(std::vector<std::string> args, const std::string& state, const std::string& cwd) {
    args.insert(args.begin(), CUDALINGS_BINARY);
    ChildOptions o;
    o.wall_seconds = 600;
    o.output_cap = 4 << 20;
    o.working_dir = cwd;
    o.env["CUDALINGS_STATE_DIR"] = state;
    o.env["NO_COLOR"] = "1";
    auto r = run_supervised(args, o);
    if (!r.started) throw std::runtime_error("cannot run cudalings: " + r.start_error);
    return {r.timed_out ? -2 : r.exit_code, r.out.head, r.err.head};
}

std::string course_with(const std::string& fixture, const std::string& step_file) {
    static int counter = 0;
    fs::path root = fs::temp_directory_path() / ("cudalings_test_course_" +
                                                 std::to_string(::getpid()) + "_" +
                                                 std::to_string(counter++));
    fs::remove_all(root);
    fs::path src = CUDALINGS_SOURCE_DIR;
    fs::create_directories(root);
    fs::copy(src / "course.json", root / "course.json");
    fs::copy(src / "lessons", root / "lessons", fs::copy_options::recursive);
    fs::copy_file(fixture, root / "lessons" / step_file, fs::copy_options::overwrite_existing);
    return root.string();
}

void remove_course(const std::string& root) {
    std::error_code ec;
    fs::remove_all(root, ec);
}

namespace {
std::string& probe_output() {
    static std::string output;
    static bool probed = false;
    if (!probed) {
        ChildOptions o;
        o.result_channel = true;
        o.wall_seconds = 60;
        auto r = run_supervised({CUDALINGS_RUNNER, "probe"}, o);
        output = r.channel.head;
        probed = true;
    }
    return output;
}
}  // namespace

bool gpu_present() {
    const std::string& p = probe_output();
    return p.find("\"gpus\":") != std::string::npos && p.find("\"gpus\":0") == std::string::npos;
}

std::string gpu_absent_reason() {
    const std::string& p = probe_output();
    auto at = p.find("\"message\":\"");
    if (at == std::string::npos) return "no GPU found";
    auto end = p.find('"', at + 11);
    return "no GPU: " + p.substr(at + 11, end - at - 11);
}

FixtureSpec read_fixture(const std::string& path) {
    std::ifstream in(path);
    FixtureSpec spec;
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("// expect: ", 0) == 0) spec.expect = line.substr(11);
        if (line.rfind("// step: ", 0) == 0) spec.step = line.substr(9);
    }
    if (spec.step.empty()) {
        // default: the first step of the lesson the fixture's folder is named after
        std::string lesson = fs::path(path).parent_path().filename().string();
        std::vector<std::string> steps;
        for (auto& e : fs::directory_iterator(fs::path(CUDALINGS_SOURCE_DIR) / "lessons" / lesson))
            if (e.path().extension() == ".cu" && e.path().filename().string()[0] >= '0' &&
                e.path().filename().string()[0] <= '9')
                steps.push_back(e.path().filename().string());
        std::sort(steps.begin(), steps.end());
        if (!steps.empty()) spec.step = lesson + "/" + steps.front();
    }
    return spec;
}

}  // namespace test_support
