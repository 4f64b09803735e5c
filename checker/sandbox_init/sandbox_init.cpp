// cudalings-sandbox-init: the first process inside every grading sandbox (PID 1 of its PID
// namespace; bwrap runs it with --as-pid-1, so no bwrap process is inside with it).
//
// Why a process of our own rather than bwrap's init: a sandboxed program can open any file of
// /proc for a process of its own user that is "dumpable", and bwrap's init is one. Its
// /proc/1/mem, /proc/1/environ and /proc/1/fd were open to the student's code (the memory held
// every bind path of the grader, the environment the grader's own). This init makes itself
// non-dumpable before anything else: the kernel then lets only a process with CAP_SYS_PTRACE
// in the sandbox's user namespace open those files, and nothing inside has a capability. The
// seccomp filter refuses ptrace and signals to PID 1 (checker/core/run/seccomp_filter.h).
//
// What it does: writes the sandbox's start marker to stderr (checker/core/run/sandbox.cpp reads
// it), starts the program (argv[1...]) as PID 2, reaps every process that ends in the
// namespace, and when the program ends, ends too with its status (128 + n for a death by signal
// n, as a shell reports it): the end of PID 1 ends every process left in the namespace.
//
// Plain C library calls only (no allocation after the fork), so that it is small and obvious.
#include <errno.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <initializer_list>

namespace {

constexpr char kStarted[] = "[cudalings sandbox]\n";  // sandbox.cpp's kStarted

void say(const char* a, const char* b = "", const char* c = "") {
    for (const char* part : {a, b, c}) (void)!::write(2, part, strlen(part));
}

// Every descriptor from 3 up, in this process (the program keeps its own).
void close_from_3() {
#ifdef SYS_close_range
    if (::syscall(SYS_close_range, 3u, ~0u, 0u) == 0) return;
#endif
    for (int fd = 3; fd < 4096; ++fd) ::close(fd);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        say("cudalings-sandbox-init: no program to run\n");
        return 127;
    }
    if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
        say("cudalings-sandbox-init: cannot make itself non-dumpable: ", strerror(errno), "\n");
        return 127;
    }
    say(kStarted);
    const pid_t program = ::fork();
    if (program < 0) {
        say("cudalings-sandbox-init: fork: ", strerror(errno), "\n");
        return 127;
    }
    if (program == 0) {
        // exec makes the program dumpable again: its own /proc files are its own business.
        ::execvp(argv[1], argv + 1);
        const int error = errno;
        say("cannot run ", argv[1], ": ");
        say(strerror(error), "\n");
        _exit(127);
    }
    close_from_3();
    while (true) {
        int status = 0;
        const pid_t ended = ::waitpid(-1, &status, 0);
        if (ended < 0) {
            if (errno == EINTR) continue;
            return 127;  // ECHILD: cannot happen while the program is not reaped
        }
        if (ended != program) continue;  // an orphan of the program's: reaped, nothing more
        if (WIFEXITED(status)) return WEXITSTATUS(status);
        if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    }
}
