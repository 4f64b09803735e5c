// The seccomp filter (checker/core/run/seccomp_filter.h), installed in a forked child: every call
// it refuses answers the errno it should, and what a step's process does every day (threads, fork,
// files, pipes, sockets, signals to itself) still works. The probes are chosen so that the kernel's
// own answer, without the filter, differs from the filter's: a test that passed without a filter
// would prove nothing.
#include <catch2/catch_test_macros.hpp>

#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <sstream>
#include <string>
#include <thread>

#include "seccomp_filter.h"

namespace {

using Probes = std::map<std::string, int>;  // name -> 0 when the call worked, else its errno

// In the child: one line "name errno" per probe, on `fd`.
void report(int fd, const char* name, long rc) {
    const int error = rc < 0 ? errno : 0;
    std::string line = std::string(name) + " " + std::to_string(error) + "\n";
    (void)!::write(fd, line.data(), line.size());
}

// Forks, installs the filter of `policy` (self = the child itself when `self`), runs `probe`
// there and returns what it reported, or {"install", errno...} when the filter did not load.
template <typename Probe>
Probes in_filtered_child(bool self, Probe probe) {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        ::close(fds[0]);
        cudalings::seccomp::Policy policy;
        if (self) policy.self = ::getpid();
        std::string why;
        if (!cudalings::seccomp::install(policy, &why)) {
            report(fds[1], "install", -1);
            _exit(1);
        }
        probe(fds[1]);
        _exit(0);
    }
    ::close(fds[1]);
    std::string text;
    char buffer[4096];
    ssize_t n;
    while ((n = ::read(fds[0], buffer, sizeof buffer)) > 0)
        text.append(buffer, static_cast<std::size_t>(n));
    ::close(fds[0]);
    int status = 0;
    ::waitpid(child, &status, 0);
    Probes probes;
    std::istringstream lines(text);
    std::string name;
    int error = 0;
    while (lines >> name >> error) probes[name] = error;
    probes["exit"] = WIFEXITED(status) ? WEXITSTATUS(status) : 1000 + WTERMSIG(status);
    return probes;
}

// The calls every filter refuses, each with arguments whose kernel answer (no filter) is not
// EPERM for root or for an ordinary user: a non-existent path, a bad descriptor, a null
// pointer, or a call that would simply work.
void refused_probes(int fd) {
    const pid_t parent = ::getppid();
    char byte = 0;
    iovec local{&byte, 1}, remote{&byte, 1};
    report(fd, "ptrace_traceme", ::ptrace(PTRACE_TRACEME, 0, nullptr, nullptr));
    report(fd, "ptrace_attach", ::syscall(SYS_ptrace, PTRACE_SEIZE, parent, 0, 0));
    report(fd, "process_vm_readv", ::process_vm_readv(::getpid(), &local, 1, &remote, 1, 0));
    report(fd, "process_vm_writev", ::process_vm_writev(::getpid(), &local, 1, &remote, 1, 0));
    report(fd, "pidfd_open", ::syscall(SYS_pidfd_open, ::getpid(), 0));
    report(fd, "pidfd_getfd", ::syscall(SYS_pidfd_getfd, -1, 0, 0));
    report(fd, "kcmp", ::syscall(SYS_kcmp, ::getpid(), parent, 0, 0, 0));
    report(fd, "perf_event_open", ::syscall(SYS_perf_event_open, nullptr, 0, -1, -1, 0));
    report(fd, "bpf", ::syscall(SYS_bpf, 0, nullptr, 0));
    report(fd, "keyctl", ::syscall(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3, 0));
    report(fd, "add_key", ::syscall(SYS_add_key, nullptr, nullptr, nullptr, 0, 0));
    report(fd, "io_uring_setup", ::syscall(SYS_io_uring_setup, 1, nullptr));
    report(fd, "userfaultfd", ::syscall(SYS_userfaultfd, O_CLOEXEC));
    report(fd, "mount", ::mount("none", "/nonexistent-cudalings", "tmpfs", 0, nullptr));
    report(fd, "umount2", ::umount2("/nonexistent-cudalings", 0));
    report(fd, "chroot", ::chroot("/nonexistent-cudalings"));
    report(fd, "pivot_root", ::syscall(SYS_pivot_root, "/nonexistent-a", "/nonexistent-b"));
    report(fd, "unshare", ::unshare(0));
    report(fd, "setns", ::setns(-1, 0));
    report(fd, "init_module", ::syscall(SYS_init_module, nullptr, 0, ""));
    report(fd, "ioctl_tiocsti", ::ioctl(-1, TIOCSTI, "x"));
    // clone with each namespace flag; without the filter a child would start: it leaves at
    // once. clone3: ENOSYS, so that the C library falls back to clone.
    for (unsigned long flag : {CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNS, CLONE_NEWNET, CLONE_NEWIPC,
                               CLONE_NEWUTS, CLONE_NEWCGROUP}) {
        long rc = ::syscall(SYS_clone, flag | SIGCHLD, nullptr, nullptr, nullptr, nullptr);
        if (rc == 0) _exit(0);
        if (rc > 0) ::waitpid(static_cast<pid_t>(rc), nullptr, 0);
        report(fd, ("clone_" + std::to_string(flag)).c_str(), rc);
    }
    report(fd, "clone3", ::syscall(SYS_clone3, nullptr, 0));
}

// What must keep working.
void allowed_probes(int fd) {
    int value = 0;
    std::thread([&] { value = 42; }).join();
    report(fd, "thread", value == 42 ? 0 : (errno = EINVAL, -1));
    const pid_t child = ::fork();
    if (child == 0) _exit(7);
    int status = 0;
    long waited = child > 0 ? ::waitpid(child, &status, 0) : -1;
    report(fd, "fork",
           waited == child && WIFEXITED(status) && WEXITSTATUS(status) == 7 ? 0
                                                                            : (errno = EINVAL, -1));
    char name[] = "/tmp/cudalings-seccomp-XXXXXX";
    int file = ::mkstemp(name);
    long io = file >= 0 && ::write(file, "abc", 3) == 3 && ::lseek(file, 0, SEEK_SET) == 0 &&
                      ::read(file, name + 20, 3) == 3
                  ? 0
                  : -1;
    if (file >= 0) ::close(file);
    ::unlink(name);
    report(fd, "files", io);
    int pair[2];
    long sockets = ::socketpair(AF_UNIX, SOCK_STREAM, 0, pair);
    if (sockets == 0) {
        sockets = ::send(pair[0], "x", 1, 0) == 1 && ::recv(pair[1], &value, 1, 0) == 1 ? 0 : -1;
        ::close(pair[0]);
        ::close(pair[1]);
    }
    report(fd, "socketpair", sockets);
    int inet = ::socket(AF_INET, SOCK_STREAM, 0);
    report(fd, "socket_inet", inet);
    if (inet >= 0) ::close(inet);
    report(fd, "kill_self", ::kill(::getpid(), 0));
    static volatile sig_atomic_t got = 0;
    ::signal(SIGUSR1, [](int) { got = 1; });
    long raised = ::raise(SIGUSR1) == 0 && got == 1 ? 0 : -1;
    report(fd, "raise", raised);
    report(fd, "prctl_name", ::prctl(PR_SET_NAME, "cudalings-t"));
}

}  // namespace

TEST_CASE("seccomp filter: every refused call is refused, ordinary calls work", "[seccomp]") {
    std::string why;
    if (!cudalings::seccomp::available(&why)) SKIP(why);
    for (bool self : {true, false}) {
        INFO((self ? "Policy{self}" : "Policy{} (a sandbox's)"));
        Probes refused = in_filtered_child(self, refused_probes);
        INFO("install: " << (refused.count("install") ? "failed" : "ok"));
        REQUIRE(refused.count("install") == 0);
        CHECK(refused["exit"] == 0);
        for (const auto& [name, error] : refused) {
            if (name == "exit") continue;
            INFO(name);
            CHECK(error == (name == "clone3" ? ENOSYS : EPERM));
        }
        CHECK(refused.size() >= 29);  // every probe reported
        Probes allowed = in_filtered_child(self, allowed_probes);
        CHECK(allowed["exit"] == 0);
        for (const char* name : {"thread", "fork", "files", "socketpair", "socket_inet",
                                 "kill_self", "raise", "prctl_name"}) {
            INFO(name);
            REQUIRE(allowed.count(name) == 1);
            CHECK(allowed[name] == 0);
        }
    }
}

TEST_CASE("seccomp filter: signals only to itself, or never to a sandbox's PID 1", "[seccomp]") {
    std::string why;
    if (!cudalings::seccomp::available(&why)) SKIP(why);
    // A process it started: another process, refused under Policy{self}; allowed in a sandbox.
    auto signal_probes = [](int fd) {
        // A child that leaves by itself once this process is gone (its pipe's end closes):
        // under Policy{self} no signal can end it.
        int gone[2];
        if (::pipe(gone) != 0) return;
        const pid_t child = ::fork();
        if (child == 0) {
            ::close(gone[1]);
            char byte;
            (void)!::read(gone[0], &byte, 1);
            _exit(0);
        }
        ::close(gone[0]);
        report(fd, "kill_child", ::kill(child, 0));
        report(fd, "kill_parent", ::kill(::getppid(), 0));
        report(fd, "kill_1", ::kill(1, 0));
        report(fd, "tgkill_1", ::syscall(SYS_tgkill, 1, 1, 0));
        report(fd, "tkill_1", ::syscall(SYS_tkill, 1, 0));
        report(fd, "rt_sigqueueinfo_1", ::syscall(SYS_rt_sigqueueinfo, 1, 0, nullptr));
        report(fd, "kill_self", ::kill(::getpid(), 0));
        ::close(gone[1]);
        ::waitpid(child, nullptr, 0);
    };
    Probes self = in_filtered_child(true, signal_probes);
    REQUIRE(self.count("install") == 0);
    CHECK(self["kill_child"] == EPERM);
    CHECK(self["kill_parent"] == EPERM);
    CHECK(self["kill_1"] == EPERM);
    CHECK(self["tgkill_1"] == EPERM);
    CHECK(self["tkill_1"] == EPERM);
    CHECK(self["rt_sigqueueinfo_1"] == EPERM);
    CHECK(self["kill_self"] == 0);
    Probes sandbox = in_filtered_child(false, signal_probes);
    REQUIRE(sandbox.count("install") == 0);
    CHECK(sandbox["kill_child"] == 0);
    CHECK(sandbox["kill_parent"] == 0);
    CHECK(sandbox["kill_1"] == EPERM);
    CHECK(sandbox["tgkill_1"] == EPERM);
    CHECK(sandbox["tkill_1"] == EPERM);
    CHECK(sandbox["rt_sigqueueinfo_1"] == EPERM);
    CHECK(sandbox["kill_self"] == 0);
}
