// Ctrl-C (SIGINT) or SIGTERM at any moment of a check leaves no process behind: the check is
// interrupted while nvcc builds, while the emulator's build runs, and while the runner spins
// in a kernel that never ends; afterwards no process that the check started is alive. Every
// process of a run carries a marker in its environment, so survivors are found wherever they
// were reparented.
#include <catch2/catch_test_macros.hpp>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "flow_support.h"

extern char** environ;

namespace {

namespace fs = std::filesystem;

// Processes (other than this one) whose environment holds `marker`, as "pid: command line".
std::vector<std::string> carrying(const std::string& marker) {
    std::vector<std::string> found;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator("/proc", ec)) {
        const std::string pid = e.path().filename().string();
        if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
        if (std::stoi(pid) == ::getpid()) continue;
        const std::string env = flow::read(e.path().string() + "/environ");
        if (env.find(marker) == std::string::npos) continue;
        std::string cmd = flow::read(e.path().string() + "/cmdline");
        for (auto& c : cmd)
            if (c == '\0') c = ' ';
        found.push_back(pid + ": " + cmd);
    }
    return found;
}

// Starts `cudalings args` with `marker` in its environment, sends `sig` after `delay` seconds
// (if it is still running), and returns the processes left carrying the marker.
std::vector<std::string> interrupt(const std::vector<std::string>& args, const std::string& state,
                                   const std::string& marker, double delay, int sig) {
    std::vector<std::string> argv_text{CUDALINGS_BINARY};
    argv_text.insert(argv_text.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_text) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> env_text{"CUDALINGS_FLOW_MARKER=" + marker,
                                      "CUDALINGS_STATE_DIR=" + state, "NO_COLOR=1"};
    for (char** e = environ; *e; ++e) env_text.emplace_back(*e);
    std::vector<char*> envp;
    for (auto& e : env_text) envp.push_back(e.data());
    envp.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid = 0;
    REQUIRE(posix_spawn(&pid, CUDALINGS_BINARY, &actions, nullptr, argv.data(), envp.data()) == 0);
    posix_spawn_file_actions_destroy(&actions);
    std::this_thread::sleep_for(std::chrono::duration<double>(delay));
    ::kill(pid, sig);
    int status = 0;
    ::waitpid(pid, &status, 0);
    // SIGKILL is delivered asynchronously: give the kernel a moment before looking.
    std::vector<std::string> left;
    for (int i = 0; i < 20; ++i) {
        left = carrying(marker);
        if (left.empty()) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return left;
}

}  // namespace

TEST_CASE("Ctrl-C at any moment of a check leaves no process behind", "[signals][cli]") {
    const std::string root = flow::course_copy();
    int run = 0;
    // A fresh state directory each time: nvcc, the policy screen and the emulator's build
    // really run, and are interrupted at different points.
    for (double delay : {0.2, 0.8, 1.6, 3.0, 5.0, 8.0}) {
        const std::string marker =
            "flow-signal-" + std::to_string(::getpid()) + "-" + std::to_string(run++);
        INFO("SIGINT after " << delay << " s");
        auto left = interrupt({"--root", root, "check", "1/1", "--emulate"},
                              flow::temp_dir("state"), marker, delay, SIGINT);
        for (const auto& p : left) UNSCOPED_INFO("left behind: " << p);
        CHECK(left.empty());
    }
}

TEST_CASE("SIGINT or SIGTERM while the runner spins in an endless kernel ends it",
          "[signals][cli]") {
    const std::string root = flow::course_copy();
    flow::write(root + "/lessons/01_vector_add/01_one_thread_per_element.cu",
                "#include \"vector_add.cuh\"\n"
                "__global__ void spin(float* out) {\n"
                "    volatile float* p = out;\n"
                "    while (p[0] != 1.5f) {}  // the output holds NaN: forever\n"
                "}\n"
                "extern \"C\" cudaError_t vector_add(const float*, const float*, float* out,\n"
                "                                    size_t, cudaStream_t stream) {\n"
                "    spin<<<1, 1, 0, stream>>>(out);\n"
                "    return cudaGetLastError();\n"
                "}\n");
    const std::string state = flow::temp_dir("state");
    // A first run with a short case limit builds everything (cached) and shows the hang.
    auto first = flow::cudalings(
        {"--root", root, "--json", "check", "1/1", "--emulate", "--case-timeout", "3"},
        {{"CUDALINGS_STATE_DIR", state}});
    INFO(first.out.substr(0, 400));
    REQUIRE(first.out.find("TIMEOUT") != std::string::npos);
    int run = 0;
    for (int sig : {SIGINT, SIGTERM}) {
        const std::string marker =
            "flow-spin-" + std::to_string(::getpid()) + "-" + std::to_string(run++);
        auto left =
            interrupt({"--root", root, "check", "1/1", "--emulate"}, state, marker, 2.5, sig);
        for (const auto& p : left) UNSCOPED_INFO("left behind: " << p);
        CHECK(left.empty());
    }
}
