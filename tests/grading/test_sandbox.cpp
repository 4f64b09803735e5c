// The sandbox (checker/core/run/sandbox.h): the command it builds on any machine, and, where
// bubblewrap can make one here, what a program inside can and cannot do.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "grading_support.h"
#include "sandbox.h"

using Catch::Matchers::ContainsSubstring;
using namespace cudalings;
using namespace grading_test;
namespace fs = std::filesystem;

namespace {

std::string program(const char* name) { return std::string(CUDALINGS_TEST_PROGRAMS) + "/" + name; }

bool has_sequence(const std::vector<std::string>& cmd, const std::vector<std::string>& words) {
    return std::search(cmd.begin(), cmd.end(), words.begin(), words.end()) != cmd.end();
}

const Sandbox& live_sandbox() {
    static std::shared_ptr<const Sandbox> sandbox;
    if (!sandbox) {
        std::string why;
        if (!sandbox_works(&why)) SKIP("no sandbox here: " + why);
        SandboxSettings settings;
        settings.scratch_bytes = std::size_t{8} << 20;
        sandbox = open_sandbox(settings, why);
        if (!sandbox) SKIP("no sandbox here: " + why);
    }
    return *sandbox;
}

ChildResult inside(const std::vector<std::string>& argv, const SandboxView& view = {},
                   double seconds = 30) {
    ChildOptions o;
    o.wall_seconds = seconds;
    return run_contained(&live_sandbox(), argv, o, view);
}

}  // namespace

TEST_CASE("the sandbox command: namespaces, a clean environment, only the view", "[sandbox]") {
    ::setenv("CUDALINGS_SEED", "00112233445566778899aabbccddeeff", 1);
    SandboxSettings settings;
    settings.bwrap = "/usr/bin/bwrap";
    settings.scratch_bytes = 1234567;
    Sandbox sandbox(settings);
    SandboxView view;
    view.read_only = {"/srv/course-copy/lessons/01_vector_add", "/srv/course-copy/step.cu"};
    view.writable = {"/srv/out"};
    auto cmd = sandbox.command({"/opt/tool", "--flag"}, view, {{"CUDALINGS_EMU_MODE", "check"}});
    ::unsetenv("CUDALINGS_SEED");
    CHECK(cmd.front() == "/usr/bin/bwrap");
    for (const char* flag :
         {"--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-net", "--die-with-parent",
          "--new-session", "--clearenv", "--disable-userns"})
        CHECK(std::find(cmd.begin(), cmd.end(), flag) != cmd.end());
    CHECK(has_sequence(cmd,
                       {"--ro-bind-try", "/srv/course-copy/step.cu", "/srv/course-copy/step.cu"}));
    CHECK(has_sequence(cmd, {"--bind", "/srv/out", "/srv/out"}));
    CHECK(has_sequence(cmd, {"--size", "1234567", "--tmpfs", "/tmp"}));
    CHECK(has_sequence(cmd, {"--setenv", "CUDALINGS_EMU_MODE", "check"}));
    CHECK(has_sequence(cmd, {"--setenv", "HOME", "/tmp"}));
    // A build sees /dev/null and no other device; the grader's secret is not passed on.
    CHECK(has_sequence(cmd, {"--tmpfs", "/dev", "--dev-bind", "/dev/null", "/dev/null"}));
    CHECK(std::find(cmd.begin(), cmd.end(), "--dev") == cmd.end());
    for (const auto& word : cmd) CHECK_THAT(word, !ContainsSubstring("00112233445566778899"));
    // The program comes last, unchanged, started by the sandbox's init as PID 1 (no bwrap
    // process inside), every process under the seccomp filter bwrap reads from descriptor 5.
    CHECK(cmd[cmd.size() - 2] == "/opt/tool");
    CHECK(cmd.back() == "--flag");
    CHECK(cmd[cmd.size() - 4] == "--");
    CHECK(cmd[cmd.size() - 3] == "/cudalings-sandbox-init");
    CHECK(std::find(cmd.begin(), cmd.end(), "--as-pid-1") != cmd.end());
    CHECK(has_sequence(cmd, {"--seccomp", std::to_string(Sandbox::kFilterDescriptor)}));
    CHECK(has_sequence(cmd, {"--ro-bind", sandbox.settings().init, "/cudalings-sandbox-init"}));
    CHECK((!sandbox.filter().empty() || !sandbox.filter_error().empty()));

    view.devices = true;
    auto program = sandbox.command({"/opt/tool"}, view, {});
    CHECK(has_sequence(program, {"--dev", "/dev", "--size", "1234567", "--tmpfs", "/dev/shm"}));
    CHECK(has_sequence(program, {"--remount-ro", "/dev", "--remount-ro", "/"}));
    CHECK_FALSE(has_sequence(program, {"--ro-bind", "/sys", "/sys"}));
    view.gpu = true;
    auto gpu = sandbox.command({"/opt/tool"}, view, {});
    CHECK(has_sequence(gpu, {"--dev", "/dev"}));
    CHECK(has_sequence(gpu, {"--ro-bind", "/sys", "/sys"}));
}

TEST_CASE("a runner's view holds the files its command line names", "[sandbox]") {
    TempDir dir("runner_view");
    std::ofstream(dir / "step.so") << "x";
    std::ofstream(dir / "libhelper.so") << "x";
    auto view =
        runner_view({dir / "runner", "check", "--step", dir / "step.so", "--seed", "12"}, true);
    CHECK(view.gpu);
    CHECK(std::find(view.read_only.begin(), view.read_only.end(), dir / "step.so") !=
          view.read_only.end());
    CHECK(std::find(view.read_only.begin(), view.read_only.end(), dir / "libhelper.so") !=
          view.read_only.end());
    CHECK(std::find(view.read_only.begin(), view.read_only.end(), "12") == view.read_only.end());
}

TEST_CASE("no bwrap: open_sandbox says why", "[sandbox]") {
    SandboxSettings settings;
    settings.bwrap = "/nonexistent/bwrap";
    std::string why;
    CHECK_FALSE(open_sandbox(settings, why));
    CHECK_THAT(why, ContainsSubstring("/nonexistent/bwrap"));
    // A "bwrap" that never starts its program is a start failure, not the program's.
    Sandbox fake(SandboxSettings{"/bin/false", 1 << 20, ""});
    ChildOptions o;
    auto r = run_contained(&fake, {"/bin/true"}, o, {});
    CHECK_FALSE(r.started);
    CHECK_THAT(r.start_error, ContainsSubstring("sandbox did not start"));
}

TEST_CASE("inside: exit codes, signals, the result channel and the secret pass through",
          "[sandbox]") {
    SandboxView view;
    view.read_only = {program("fixture_crash"), program("fixture_channel")};
    auto ok = inside({"/bin/sh", "-c", "exit 0"});
    CHECK(ok.exited_ok());
    CHECK(ok.err.head.empty());  // the start marker is not part of the program's output
    auto code = inside({"/bin/sh", "-c", "echo said >&2; exit 42"});
    CHECK(code.exit_code == 42);
    CHECK(code.err.head == "said\n");
    auto segv = inside({program("fixture_crash"), "segv"}, view);
    CHECK(segv.signal == SIGSEGV);
    auto abort = inside({program("fixture_crash"), "abort"}, view);
    CHECK(abort.signal == SIGABRT);
    ChildOptions o;
    o.result_channel = true;
    o.secret = "0123456789abcdef";
    auto channel = run_contained(&live_sandbox(), {program("fixture_channel"), "3"}, o, view);
    CHECK(channel.exit_code == 3);
    CHECK(channel.channel.head == "{\"event\":\"hello\"}\n");
    auto secret = run_contained(&live_sandbox(), {"/bin/sh", "-c", "head -c 16 <&4"}, o, {});
    CHECK(secret.out.head == "0123456789abcdef");
}

TEST_CASE("inside: only the view, read-only; the scratch space is small and private", "[sandbox]") {
    TempDir dir("sandbox_view");
    fs::create_directories(dir / "ro");
    fs::create_directories(dir / "rw");
    fs::create_directories(dir / "hidden");
    std::ofstream(dir / "ro/file") << "readable";
    std::ofstream(dir / "hidden/file") << "secret";
    SandboxView view;
    view.read_only = {dir / "ro"};
    view.writable = {dir / "rw"};
    auto r = inside({"/bin/sh", "-c",
                     "cat " + dir / "ro/file" + " && ! test -e " + dir / "hidden/file" +
                         " && ! test -e " + std::string(CUDALINGS_SOURCE_DIR) + " && ! (echo x > " +
                         dir / "ro/new" + ") 2>/dev/null && echo out > " + dir / "rw/new"},
                    view);
    INFO(r.err.head);
    CHECK(r.exited_ok());
    CHECK(r.out.head == "readable");
    CHECK_FALSE(fs::exists(dir / "ro/new"));
    CHECK(read_text(dir / "rw/new") == "out\n");
    // Nowhere else to write: not the sandbox's root, not /dev.
    auto elsewhere = inside({"/bin/sh", "-c",
                             "for f in /x /dev/x /usr/x /proc/x; do (echo x > $f) 2>/dev/null "
                             "&& echo wrote $f; done; echo done"},
                            view);
    CHECK(elsewhere.out.head == "done\n");
    // 8 MiB of scratch: the ninth does not fit.
    auto fill = inside({"/bin/sh", "-c", "yes 0123456789abcdef | head -c 9437184 > /tmp/fill"});
    CHECK_FALSE(fill.exited_ok());
    CHECK_THAT(fill.err.head, ContainsSubstring("No space left"));
    // The checker's environment stays outside.
    ::setenv("CUDALINGS_SEED", "00112233445566778899aabbccddeeff", 1);
    auto env = inside({"/bin/sh", "-c", "env"});
    ::unsetenv("CUDALINGS_SEED");
    CHECK_THAT(env.out.head, !ContainsSubstring("CUDALINGS_SEED"));
    CHECK_THAT(env.out.head, ContainsSubstring("HOME=/tmp"));
}

TEST_CASE("inside: alone in its PID namespace, no network, no daemon survives", "[sandbox]") {
    // Its own processes only: the shell, and bwrap's init.
    auto ps = inside({"/bin/sh", "-c", "ls /proc | grep -c '^[0-9]'"});
    CHECK(std::stoi(ps.out.head) <= 4);  // init, sh, ls, grep
    // Its parent is the namespace's init, which it cannot kill; kill(-1) hits nobody outside.
    auto kill = inside({"/bin/sh", "-c", "kill -9 $PPID; kill -9 -1; echo alive"});
    CHECK(kill.out.head == "alive\n");
    // Loopback only.
    auto net = inside({"/bin/sh", "-c", "cat /proc/net/dev"});
    CHECK_THAT(net.out.head, ContainsSubstring("lo:"));
    CHECK_THAT(net.out.head, !ContainsSubstring("eth"));
    // A daemon in its own session dies with the sandbox (bwrap returns as soon as its program
    // ends; the namespace's teardown follows within moments).
    auto daemon =
        inside({"/bin/sh", "-c", "setsid sleep 317 </dev/null >/dev/null 2>&1 & echo $!"});
    CHECK(daemon.exited_ok());
    auto alive = [] {
        for (pid_t pid : processes_named("sleep"))
            if (read_text("/proc/" + std::to_string(pid) + "/cmdline") == std::string("sleep\0"
                                                                                      "317\0",
                                                                                      10))
                return true;
        return false;
    };
    bool gone = false;
    for (int i = 0; i < 100 && !gone; ++i) {
        gone = !alive();
        if (!gone) usleep(20000);
    }
    CHECK(gone);
}

TEST_CASE("inside: a timeout kills the whole sandbox", "[sandbox]") {
    // A copy of the hanging program under a name no other test uses.
    TempDir dir("sandbox_hang");
    const std::string name = "sbx-hang-" + std::to_string(::getpid() % 100000);
    fs::copy_file(program("fixture_hang"), dir / name);
    SandboxView view;
    view.read_only = {dir / name};
    auto r =
        inside({"/bin/sh", "-c", dir / name + " & setsid " + dir / name + " & wait"}, view, 0.5);
    CHECK(r.timed_out);
    CHECK(r.wall_seconds < 5);
    bool gone = false;
    for (int i = 0; i < 50 && !gone; ++i) {
        gone = processes_named(name).empty();
        if (!gone) usleep(20000);
    }
    CHECK(gone);
}

TEST_CASE("check --sandbox: the learner's own check in the same sandbox", "[sandbox]") {
    std::string why;
    if (!sandbox_works(&why)) SKIP("no sandbox here: " + why);
    TempDir dir("check_sandbox");
    const fs::path source = CUDALINGS_SOURCE_DIR;
    fs::copy_file(source / "course.json", dir / "course.json");
    fs::copy(source / "lessons", dir / "lessons", fs::copy_options::recursive);
    fs::create_directory_symlink(source / "solutions", dir / "solutions");
    fs::create_directory_symlink(source / "checks", dir / "checks");
    fs::copy_file(source / "checks/01_vector_add/fixtures/reject_solution_include.cu",
                  dir / "lessons/01_vector_add/01_one_thread_per_element.cu",
                  fs::copy_options::overwrite_existing);
    // The solutions are not in the sandbox: the include is rejected for what it names.
    auto rejected = run_cudalings({"--root", dir.path(), "check", "1/1", "--sandbox", "--json"});
    INFO(rejected.err);
    auto j = nlohmann::json::parse(rejected.out);
    CHECK(j["results"][0]["verdict"] == "REJECTED");
    CHECK_THAT(j["results"][0]["reason"].get<std::string>(), ContainsSubstring("no-foreign-files"));
    auto solution = run_cudalings(
        {"--root", dir.path(), "check", "1/1", "--solutions", "--sandbox", "--no-time", "--json"});
    INFO(solution.err);
    CHECK(nlohmann::json::parse(solution.out)["results"][0]["verdict"] == "PASS");
}

TEST_CASE("inside: nothing of the grader's, PID 1 out of reach, the filter in force", "[sandbox]") {
    // A token in the grader's environment, and a folder whose path only bwrap's arguments hold.
    TempDir dir("sandbox_grader");
    fs::create_directories(dir / "bound-only-here");
    const std::string token = "tok-5c1e77a0-grader-only";
    ::setenv("CUDALINGS_TEST_GRADER_TOKEN", token.c_str(), 1);
    SandboxView view;
    view.read_only = {dir / "bound-only-here"};
    // Every process's environment and command line it can read, what it can open of PID 1's,
    // its own descriptors, its seccomp mode, and whether PID 1 takes a signal.
    auto seen = inside(
        {"/bin/sh", "-c", "for p in /proc/[0-9]*; do cat $p/environ $p/cmdline 2>/dev/null; done"},
        view);
    ::unsetenv("CUDALINGS_TEST_GRADER_TOKEN");
    INFO(seen.out.head << seen.err.head);
    CHECK(seen.exited_ok());
    CHECK_THAT(seen.out.head, ContainsSubstring("cudalings-sandbox-init"));  // PID 1's
    CHECK_THAT(seen.out.head, !ContainsSubstring(token));
    CHECK_THAT(seen.out.head, !ContainsSubstring("CUDALINGS_TEST_GRADER_TOKEN"));
    CHECK_THAT(seen.out.head, !ContainsSubstring("bound-only-here"));
    CHECK_THAT(seen.out.head, !ContainsSubstring("--ro-bind"));
    auto r = inside({"/bin/sh", "-c",
                     "for f in /proc/1/environ /proc/1/mem /proc/1/fd/0 /proc/1/fd/2 "
                     "/proc/1/maps; do (: <$f) 2>/dev/null && echo OPEN $f; done; "
                     "readlink /proc/1/exe /proc/1/cwd /proc/1/root 2>/dev/null; "
                     "echo fds $(ls /proc/self/fd); grep '^Seccomp:' /proc/$$/status; "
                     "kill -STOP 1 2>/dev/null && echo STOPPED; kill -KILL 1 2>/dev/null && "
                     "echo KILLED; echo pid $$ ppid $PPID; cat /proc/1/comm"});
    INFO(r.out.head << r.err.head);
    CHECK(r.exited_ok());
    CHECK_THAT(r.out.head, !ContainsSubstring("OPEN"));
    CHECK_THAT(r.out.head, !ContainsSubstring("STOPPED"));
    CHECK_THAT(r.out.head, !ContainsSubstring("KILLED"));
    CHECK_THAT(r.out.head, !ContainsSubstring("/"));  // no readlink of PID 1's answered
    CHECK_THAT(r.out.head, ContainsSubstring("cudalings-sandb"));  // PID 1 is the init
    CHECK_THAT(r.out.head, ContainsSubstring("pid 2 ppid 1"));
    // Only its standard streams (and ls's own 3): bwrap's filter and arguments (5, 6) are gone.
    CHECK_THAT(r.out.head, ContainsSubstring("fds 0 1 2 3\n"));
    CHECK_THAT(r.out.head, ContainsSubstring("Seccomp:\t2"));
    // The init reaps what the program leaves and reports the program's own end.
    auto orphans = inside({"/bin/sh", "-c", "(sleep 0.1 &) ; (true &) ; sleep 0.3; exit 5"});
    CHECK(orphans.exit_code == 5);
    CHECK(orphans.err.head.empty());
    // A descriptor the caller gives the program passes through bwrap and the init, and the
    // sandbox's own two come after it.
    int pipe_fds[2];
    REQUIRE(::pipe2(pipe_fds, O_CLOEXEC) == 0);
    REQUIRE(::write(pipe_fds[1], "given", 5) == 5);
    ::close(pipe_fds[1]);
    ChildOptions o;
    o.descriptors.push_back({pipe_fds[0], 5});
    auto given = run_contained(&live_sandbox(),
                               {"/bin/sh", "-c", "head -c 5 <&5; echo; ls /proc/self/fd"}, o, {});
    ::close(pipe_fds[0]);
    INFO(given.err.head);
    CHECK(given.out.head == "given\n0\n1\n2\n3\n5\n");
}

TEST_CASE("a sandbox without its filter or its init does not open", "[sandbox]") {
    std::string why;
    SandboxSettings settings;
    settings.init = "/nonexistent/cudalings-sandbox-init";
    CHECK_FALSE(open_sandbox(settings, why));
    CHECK_THAT(why, ContainsSubstring("cudalings-sandbox-init"));
    // A sandbox whose filter could not be built runs nothing (built without libseccomp, this
    // is every sandbox: open_sandbox says so, as it does for a missing bwrap).
    Sandbox sandbox(SandboxSettings{"/usr/bin/bwrap", 1 << 20, ""});
    if (sandbox.filter().empty()) {
        auto r = run_contained(&sandbox, {"/bin/true"}, ChildOptions{}, {});
        CHECK_FALSE(r.started);
        CHECK_THAT(r.start_error, ContainsSubstring("seccomp"));
        CHECK_FALSE(open_sandbox({}, why));
        CHECK_THAT(why, ContainsSubstring("seccomp"));
    } else {
        CHECK(sandbox.filter_error().empty());
        CHECK(sandbox.filter().size() % 8 == 0);  // BPF instructions, 8 bytes each
    }
}
