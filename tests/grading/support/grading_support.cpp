#include "grading_support.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "sandbox.h"
#include "supervise.h"

namespace fs = std::filesystem;

namespace grading_test {

TempDir::TempDir(const std::string& tag) {
    std::string pattern = (fs::temp_directory_path() / ("cudalings_" + tag + "_XXXXXX")).string();
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (!::mkdtemp(buffer.data())) throw std::runtime_error("mkdtemp " + pattern);
    path_ = buffer.data();
}

TempDir::~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
}

bool sandbox_works(std::string* why) {
    static int works = -1;
    static std::string reason;
    if (works < 0) {
        cudalings::SandboxSettings settings;
        works = cudalings::open_sandbox(settings, reason) ? 1 : 0;
    }
    if (why) *why = reason;
    return works == 1;
}

std::vector<std::string> sandbox_or_not() {
    if (sandbox_works()) return {};
    return {"--no-sandbox"};
}

test_support::Run run_cudalings(std::vector<std::string> args,
                                const std::map<std::string, std::string>& env,
                                const std::string& cwd) {
    args.insert(args.begin(), CUDALINGS_BINARY);
    cudalings::ChildOptions o;
    o.wall_seconds = 900;
    o.output_cap = 4 << 20;
    o.working_dir = cwd;
    o.env["CUDALINGS_STATE_DIR"] = test_support::fresh_state_dir();
    o.env["NO_COLOR"] = "1";
    for (const auto& [k, v] : env) o.env[k] = v;
    auto r = cudalings::run_supervised(args, o);
    if (!r.started) throw std::runtime_error("cannot run cudalings: " + r.start_error);
    return {r.timed_out ? -2 : r.exit_code, r.out.head, r.err.head};
}

std::string sample_submission(const std::string& parent, const std::string& name,
                              const std::string& kind) {
    const fs::path src = CUDALINGS_SOURCE_DIR;
    const fs::path root = fs::path(parent) / name;
    fs::create_directories(root);
    if (kind == "untouched" || kind == "solved") {
        fs::create_directories(root / "lessons");
        fs::copy(src / "lessons/01_vector_add", root / "lessons/01_vector_add",
                 fs::copy_options::recursive);
        if (kind == "solved")
            for (const auto& e : fs::directory_iterator(src / "solutions/01_vector_add"))
                if (e.path().extension() == ".cu")
                    fs::copy_file(e.path(), root / "lessons/01_vector_add" / e.path().filename(),
                                  fs::copy_options::overwrite_existing);
    } else if (kind == "broken") {
        fs::copy_file(src / "checks/01_vector_add/fixtures/compile_error.cu",
                      root / "01_one_thread_per_element.cu");
    } else if (kind != "empty") {
        throw std::runtime_error("no sample submission of kind " + kind);
    }
    return root.string();
}

std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

nlohmann::json read_json(const std::string& path) {
    std::string text = read_text(path);
    if (text.empty()) throw std::runtime_error("no file " + path);
    return nlohmann::json::parse(text);
}

int validate_json(const std::string& schema, const std::string& file, std::string* message) {
    cudalings::ChildOptions o;
    o.wall_seconds = 60;
    auto r = cudalings::run_supervised({"python3", CUDALINGS_VALIDATE_JSON, schema, file}, o);
    if (message) *message = r.started ? r.err.head : "cannot run python3: " + r.start_error;
    if (!r.started) return 77;
    return r.exit_code;
}

std::vector<pid_t> processes_named(const std::string& name) {
    std::vector<pid_t> found;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator("/proc", ec)) {
        std::string pid = e.path().filename().string();
        if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
        std::string comm = read_text(e.path().string() + "/comm");
        while (!comm.empty() && comm.back() == '\n') comm.pop_back();
        if (comm == name) found.push_back(static_cast<pid_t>(std::stol(pid)));
    }
    return found;
}

std::map<std::string, std::string> verdicts(const nlohmann::json& result) {
    std::map<std::string, std::string> v;
    for (const auto& s : result.value("results", nlohmann::json::array()))
        v[s.value("step", "")] = s.value("verdict", "");
    return v;
}

}  // namespace grading_test
