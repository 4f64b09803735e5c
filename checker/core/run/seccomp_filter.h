// The seccomp filter every process that runs a submission's code starts under: the learner's
// process in `check` and in `grade`, and everything inside the grading sandbox (bwrap's
// `--seccomp FD`). Built with libseccomp (the library systemd, Flatpak and Docker use).
//
// It refuses, with EPERM unless said otherwise:
//   - reaching into other processes: ptrace, process_vm_readv/writev, pidfd_open, pidfd_getfd,
//     pidfd_send_signal, kcmp;
//   - signals to any process but the filtered one itself (kill, tgkill, tkill,
//     rt_sigqueueinfo, rt_tgsigqueueinfo), when the filter is built for a known process
//     (`Policy::self`); a filter built for a sandbox refuses signals to PID 1, its init;
//   - kernel interfaces a submission never needs and that widen what it can reach:
//     perf_event_open, bpf, keyctl/add_key/request_key, io_uring_*, userfaultfd;
//   - changing its world: the mount family, pivot_root, chroot, unshare, setns, clone with any
//     namespace flag (and clone3 with ENOSYS, so that the C library falls back to clone, whose
//     flags a filter can see), kernel modules, kexec, reboot, swap, acct, the terminal's input
//     queue (ioctl TIOCSTI, TIOCLINUX).
// Everything else is allowed: the CUDA driver's ioctls and mmaps, threads, files, sockets.
//
// Filters only add up: a process that installed this one cannot remove it, and its children
// inherit it (PR_SET_NO_NEW_PRIVS first, so no set-uid program can shed it either).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace cudalings::seccomp {

struct Policy {
    // > 0: signals may only go to this process (the filtered one): built inside it, after
    // fork. 0: a filter built for a sandbox, whose processes' numbers are not known yet.
    pid_t self = 0;
};

// Whether this build can make filters (libseccomp was found when it was configured); when it
// cannot, `why` says so.
bool available(std::string* why = nullptr);

// The system calls the filter refuses, by name (for tests and the instructor guide).
std::vector<std::string> refused_calls();

// Sets PR_SET_NO_NEW_PRIVS and loads the filter into the calling thread's process (every thread
// it creates from now on, and every child, inherits it). Threads that exist already are covered
// too (SECCOMP_FILTER_FLAG_TSYNC). False, with `why`, when it could not be loaded.
bool install(const Policy& policy, std::string* why = nullptr);

// Drops every capability the calling process has (effective, permitted, inheritable and the
// bounding set), for a learner's process started by root outside a sandbox: without
// CAP_SYS_PTRACE it cannot open the judge's /proc/<pid>/mem once the judge is not dumpable.
// Call before install() (dropping the bounding set needs CAP_SETPCAP). True when none is left.
bool drop_capabilities(std::string* why = nullptr);

// What a process that runs a learner's code does to itself before loading it: drop_capabilities,
// then install with Policy{getpid()}. `why` says what could not be done.
struct Confinement {
    bool no_capabilities = false, filtered = false;
    std::string why;
};
Confinement confine_self();

// The filter as a BPF program (what `bwrap --seccomp FD` reads) written to a new anonymous
// file, rewound: the descriptor to pass, or -1 with `why`. The caller closes it.
int export_bpf(const Policy& policy, std::string* why = nullptr);

}  // namespace cudalings::seccomp
