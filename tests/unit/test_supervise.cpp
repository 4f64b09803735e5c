#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <dirent.h>
#include <atomic>
#include <chrono>
#include <csignal>
#include <fstream>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "supervise.h"

using namespace cudalings;

namespace {
std::string program(const char* name) { return std::string(CUDALINGS_TEST_PROGRAMS) + "/" + name; }
}  // namespace

TEST_CASE("a hanging child is killed at the wall-clock limit", "[supervise]") {
    ChildOptions o;
    o.wall_seconds = 0.5;
    auto r = run_supervised({program("fixture_hang")}, o);
    CHECK(r.started);
    CHECK(r.timed_out);
    CHECK_FALSE(r.exited_ok());
    CHECK(r.wall_seconds < 5);
}

TEST_CASE("a silent result channel times out before the wall clock", "[supervise]") {
    ChildOptions o;
    o.wall_seconds = 30;
    o.result_channel = true;
    o.channel_idle_seconds = 0.3;
    auto r = run_supervised({program("fixture_hang")}, o);
    CHECK(r.timed_out);
    CHECK(r.idle_timeout);
    CHECK(r.wall_seconds < 5);
}

TEST_CASE("a CPU limit stops every process of a child that computes, not one that waits",
          "[supervise]") {
    ChildOptions o;
    o.wall_seconds = 30;
    o.cpu_seconds = 1;
    // A grandchild that spins: the limit reaches every process the child starts.
    auto spin = run_supervised({"/bin/sh", "-c", "sh -c 'while :; do :; done'; echo $? >&2"}, o);
    CHECK(spin.started);
    CHECK_FALSE(spin.timed_out);
    CHECK(spin.exited_ok());  // the outer shell goes on, and says how its child ended
    CHECK_THAT(spin.err.head, Catch::Matchers::EndsWith(std::to_string(128 + SIGXCPU) + "\n"));
    CHECK(spin.wall_seconds < 10);
    // Waiting costs no CPU time: only the wall clock stops it.
    o.wall_seconds = 2.5;
    auto wait = run_supervised({"/bin/sh", "-c", "sleep 1.5; echo slept"}, o);
    CHECK(wait.exited_ok());
    CHECK(wait.out.head == "slept\n");
}

TEST_CASE(
    "an idle limit in CPU time: a silent child that computes times out, one that waits "
    "does not",
    "[supervise]") {
    ChildOptions o;
    o.wall_seconds = 30;
    o.result_channel = true;
    o.channel_idle_seconds = 1;
    o.idle_in_cpu_time = true;
    // A grandchild that spins: its CPU time counts for the child.
    auto spin = run_supervised({"/bin/sh", "-c", "sh -c 'while :; do :; done'"}, o);
    CHECK(spin.timed_out);
    CHECK(spin.idle_timeout);
    CHECK(spin.wall_seconds < 10);
    // Silent for longer than the limit, without computing (a machine too busy to run it looks
    // the same): it goes on, says something, and ends.
    o.channel_idle_seconds = 0.5;
    auto wait = run_supervised({"/bin/sh", "-c", "sleep 2; echo said >&3"}, o);
    CHECK_FALSE(wait.timed_out);
    CHECK(wait.exited_ok());
    CHECK(wait.channel.head == "said\n");
    // The same limit in wall-clock time stops it.
    o.idle_in_cpu_time = false;
    auto wall = run_supervised({"/bin/sh", "-c", "sleep 2; echo said >&3"}, o);
    CHECK(wall.idle_timeout);
}

TEST_CASE("a process tree's CPU time counts its descendants", "[supervise]") {
    const double before = tree_cpu_seconds(::getpid());  // a fresh process: maybe 0 ticks
    // A child that computes for a while: its time shows in this process's tree while it runs.
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        volatile unsigned long long x = 0;
        for (;;) x = x + 1;
    }
    // Until it has used 0.3 s (a busy machine gives it less than the clock's time).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    double alone = 0;
    while (alone <= 0.3 && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        alone = tree_cpu_seconds(child);
    }
    const double during = tree_cpu_seconds(::getpid());
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    CHECK(alone > 0.3);
    CHECK(during >= before + alone - 0.05);
    CHECK(tree_cpu_seconds(child) == 0);  // gone
}

TEST_CASE("a crashing child reports its signal", "[supervise]") {
    ChildOptions o;
    auto segv = run_supervised({program("fixture_crash"), "segv"}, o);
    CHECK(segv.started);
    CHECK(segv.signal == SIGSEGV);
    CHECK_THAT(describe_signal(segv.signal), Catch::Matchers::ContainsSubstring("SIGSEGV"));
    auto abrt = run_supervised({program("fixture_crash"), "abort"}, o);
    CHECK(abrt.signal == SIGABRT);
}

TEST_CASE("output floods are capped while streaming, and the whole group is killed",
          "[supervise]") {
    ChildOptions o;
    o.output_cap = 4096;
    o.wall_seconds = 20;
    // 32 MiB on each stream, then a grandchild that writes forever
    auto r = run_supervised({program("fixture_flood"), "32", "fork"}, o);
    CHECK(r.started);
    CHECK(r.exit_code == 3);
    CHECK(r.out.head.size() == 4096);
    CHECK(r.err.head.size() == 4096);
    CHECK(r.out.dropped >= (32u << 20) - 4096);
    CHECK(r.err.dropped == (32u << 20) - 4096);
    CHECK_FALSE(r.timed_out);  // the grandchild did not hold the supervisor hostage
}

TEST_CASE("the result channel arrives on fd 3 and exit codes pass through", "[supervise]") {
    ChildOptions o;
    o.result_channel = true;
    auto r = run_supervised({program("fixture_channel"), "5"}, o);
    CHECK(r.channel.head == "{\"event\":\"hello\"}\n");
    CHECK(r.exit_code == 5);
    CHECK_FALSE(r.exited_ok());
    auto ok = run_supervised({program("fixture_channel"), "0"}, o);
    CHECK(ok.exited_ok());
}

namespace {
// This process's children that have exited and were not reaped.
int zombie_children() {
    int zombies = 0;
    DIR* proc = opendir("/proc");
    while (dirent* e = proc ? readdir(proc) : nullptr) {
        std::ifstream stat(std::string("/proc/") + e->d_name + "/stat");
        std::string line;
        if (!std::getline(stat, line) || line.rfind(')') == std::string::npos) continue;
        std::istringstream rest(line.substr(line.rfind(')') + 2));
        char state = 0;
        int parent = 0;
        rest >> state >> parent;
        zombies += parent == getpid() && state == 'Z';
    }
    if (proc) closedir(proc);
    return zombies;
}
}  // namespace

TEST_CASE("a child that says it is finished is not waited for, and a later call reaps it",
          "[supervise]") {
    ChildOptions o;
    o.result_channel = true;
    o.wall_seconds = 30;
    int asked = 0;
    o.finished = [&asked](const std::string& channel) {
        ++asked;
        return channel.find("finished\n") != std::string::npos;
    };
    // It says something else first, then that it is finished, then takes 5 s to exit.
    auto r = run_supervised(
        {"/bin/sh", "-c", "echo working >&3; sleep 0.2; echo finished >&3; exec sleep 5"}, o);
    CHECK(r.started);
    CHECK(r.finished_early);
    CHECK(r.exited_ok());
    CHECK(r.channel.head == "working\nfinished\n");
    CHECK(asked >= 2);
    CHECK(r.wall_seconds < 2);
    CHECK_FALSE(r.timed_out);
    // Without the predicate's yes, the exit is awaited as always.
    auto waited = run_supervised({"/bin/sh", "-c", "echo working >&3; exec sleep 0.3"}, o);
    CHECK_FALSE(waited.finished_early);
    CHECK(waited.exited_ok());
    CHECK(waited.wall_seconds >= 0.3);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    (void)run_supervised({"/bin/true"}, {});
    CHECK(zombie_children() == 0);
}

TEST_CASE("a program that does not exist is reported, not run", "[supervise]") {
    auto r = run_supervised({"/nonexistent/program"}, {});
    CHECK_FALSE(r.started);
    CHECK_THAT(r.start_error, Catch::Matchers::ContainsSubstring("cannot run"));
}

TEST_CASE("host memory is limited with a cgroup where one can be made", "[supervise]") {
    if (!memory_cgroups_available()) SKIP("no writable memory cgroup here (v1 or v2)");
    ChildOptions o;
    o.memory_limit = std::size_t{256} << 20;
    o.wall_seconds = 60;
    auto within = run_supervised({program("fixture_hog"), "64"}, o);
    CHECK(within.memory_limited);
    CHECK(within.exit_code == 0);
    CHECK_FALSE(within.memory_limit_hit);
    auto beyond = run_supervised({program("fixture_hog"), "2048"}, o);
    CHECK(beyond.memory_limited);
    CHECK_FALSE(beyond.exited_ok());
    CHECK(beyond.memory_limit_hit);
}

TEST_CASE("without a memory cgroup, a build's processes get an address-space limit instead",
          "[supervise]") {
    ChildOptions o;
    o.address_space_limit = std::size_t{512} << 20;
    o.wall_seconds = 60;
    // No memory_limit: as where no cgroup can be made. Each process may then map 512 MiB.
    auto within = run_supervised({program("fixture_hog"), "64"}, o);
    CHECK(within.address_space_limited);
    CHECK_FALSE(within.memory_limited);
    CHECK(within.exit_code == 0);
    auto beyond = run_supervised({program("fixture_hog"), "2048"}, o);
    CHECK(beyond.address_space_limited);
    CHECK(beyond.exit_code == 2);  // its malloc failed
    // Where a cgroup holds the child, its address space is left alone.
    if (memory_cgroups_available()) {
        o.memory_limit = std::size_t{4} << 30;
        auto held = run_supervised({program("fixture_hog"), "1024"}, o);
        CHECK(held.memory_limited);
        CHECK_FALSE(held.address_space_limited);
        CHECK(held.exit_code == 0);
    }
}

TEST_CASE("a held child gets its secret only when released; its limits count from then",
          "[supervise]") {
    std::atomic<int> hold{0};
    ChildOptions o;
    o.wall_seconds = 0.5;  // shorter than the hold: must not count while held
    o.secret = "0123456789abcdef";
    o.hold = &hold;
    std::thread release([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(800));
        hold = 1;
    });
    auto r = run_supervised({"/bin/sh", "-c", "read -r key <&4; echo \"got $key\""}, o);
    release.join();
    CHECK(r.exited_ok());
    CHECK_FALSE(r.timed_out);
    CHECK(r.wall_seconds > 0.7);
    CHECK_THAT(r.out.head, Catch::Matchers::ContainsSubstring("got 0123456789abcdef"));
}

TEST_CASE("a held child is killed when its hold is cancelled", "[supervise]") {
    std::atomic<int> hold{0};
    ChildOptions o;
    o.secret = "0123456789abcdef";
    o.hold = &hold;
    std::thread cancel([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        hold = -1;
    });
    auto r = run_supervised({"/bin/sh", "-c", "read -r key <&4; echo \"got $key\""}, o);
    cancel.join();
    CHECK(r.cancelled);
    CHECK_FALSE(r.exited_ok());
    CHECK(r.out.head.find("got") == std::string::npos);
}

// The runner reads its key on fd 4 and writes results on fd 3. When the checker's other threads
// had just closed fd 3, the key's pipe could sit on fd 3 at the fork: copying the channel onto
// fd 3 first destroyed it, the runner read no key, every line it wrote was unauthenticated and
// the check ended in "the runner ended before its first case ... exited (code 0)".
TEST_CASE("a child's descriptors are arranged even when a source sits on another's target",
          "[supervise]") {
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        int key[2], channel[2];
        if (pipe(key) != 0 || pipe(channel) != 0) _exit(10);
        // Every end well above 4 first, then the collision: the key's read end on fd 3, the
        // channel's write end on fd 4.
        for (int* fd : {&key[0], &key[1], &channel[0], &channel[1]}) {
            const int high = fcntl(*fd, F_DUPFD, 100);
            if (high < 0) _exit(11);
            ::close(*fd);
            *fd = high;
        }
        if (dup2(key[0], 3) < 0 || dup2(channel[1], 4) < 0) _exit(12);
        ::close(key[0]);
        ::close(channel[1]);
        const DescriptorMove moves[] = {{4, 3}, {3, 4}};  // channel -> 3, key -> 4
        if (!arrange_descriptors(moves, 2)) _exit(12);
        if (write(key[1], "k", 1) != 1) _exit(13);
        char c = 0;
        if (read(4, &c, 1) != 1 || c != 'k') _exit(14);  // the key arrives on fd 4
        if (write(3, "r", 1) != 1) _exit(15);
        if (read(channel[0], &c, 1) != 1 || c != 'r') _exit(16);  // results leave on fd 3
        _exit(0);
    }
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("a child gets the descriptors it is given, nothing else, and a clean environment",
          "[supervise]") {
    // A descriptor this process holds without close-on-exec, and one to pass on as fd 5.
    int stray = ::open("/dev/null", O_RDONLY);
    REQUIRE(stray >= 0);
    int pipe_fds[2];
    REQUIRE(::pipe2(pipe_fds, O_CLOEXEC) == 0);
    REQUIRE(::write(pipe_fds[1], "passed", 6) == 6);
    ::close(pipe_fds[1]);
    ::setenv("CUDALINGS_TEST_SUPERVISE_TOKEN", "tok-3e0d", 1);
    ChildOptions o;
    o.descriptors.push_back({pipe_fds[0], 5});
    o.env["ONLY"] = "this";
    o.env["PATH"] = "/usr/bin:/bin";
    o.clear_environment = true;
    auto r = run_supervised(
        {"/bin/sh", "-c", "echo fds $(ls /proc/self/fd | tr '\\n' ' '); head -c 6 <&5; echo; env"},
        o);
    ::unsetenv("CUDALINGS_TEST_SUPERVISE_TOKEN");
    ::close(pipe_fds[0]);
    INFO(r.out.head << r.err.head);
    CHECK(r.exited_ok());
    // ls's own directory is 3; the stray descriptor is not there.
    CHECK_THAT(r.out.head, Catch::Matchers::ContainsSubstring("fds 0 1 2 3 5\n"));
    CHECK_THAT(r.out.head, Catch::Matchers::ContainsSubstring("passed\n"));
    CHECK_THAT(r.out.head, Catch::Matchers::ContainsSubstring("ONLY=this"));
    CHECK_THAT(r.out.head, !Catch::Matchers::ContainsSubstring("CUDALINGS_TEST_SUPERVISE_TOKEN"));
    CHECK_THAT(r.out.head, !Catch::Matchers::ContainsSubstring("HOME="));
    ::close(stray);
    // What a child writes comes back as valid UTF-8: a Latin-1 byte becomes U+FFFD.
    auto latin1 = run_supervised({"/bin/sh", "-c", "printf 'caf\\351\\n'; printf '\\377' >&2"}, {});
    CHECK(latin1.out.head == "caf\xEF\xBF\xBD\n");
    CHECK(latin1.err.head == "\xEF\xBF\xBD");
}

TEST_CASE("one memory limit for several children: a build's processes hold it together",
          "[supervise]") {
    if (!memory_cgroups_available()) SKIP("no writable memory cgroup here (v1 or v2)");
    constexpr std::size_t kLimit = std::size_t{256} << 20;
    // Alone, each fits: 200 MiB under 256.
    ChildOptions alone;
    alone.memory_limit = kLimit;
    alone.wall_seconds = 60;
    CHECK(run_supervised({program("fixture_hog"), "200"}, alone).exited_ok());
    // Two at once in one group: 400 MiB do not fit in 256, and the one stopped says so.
    ChildResult first, second;
    {
        MemoryGroup group(kLimit);
        REQUIRE(group.active());
        ChildOptions o;
        o.memory_group = &group;
        o.memory_limit = kLimit;  // not used: the group's limit is
        o.wall_seconds = 60;
        std::thread a([&] { first = run_supervised({program("fixture_hog"), "200", "3"}, o); });
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        second = run_supervised({program("fixture_hog"), "200", "3"}, o);
        a.join();
        CHECK(group.limit_events() > 0);
    }
    CHECK(first.memory_limited);
    CHECK(second.memory_limited);
    CHECK(first.exited_ok() + second.exited_ok() <= 1);
    const ChildResult& stopped = first.exited_ok() ? second : first;
    CHECK_FALSE(stopped.exited_ok());
    CHECK(stopped.memory_limit_hit);
    // One that survived was not hit, even though the group's count rose while it ran.
    if (first.exited_ok()) CHECK_FALSE(first.memory_limit_hit);
    if (second.exited_ok()) CHECK_FALSE(second.memory_limit_hit);
}
