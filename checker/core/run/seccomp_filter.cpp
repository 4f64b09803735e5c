#include "seccomp_filter.h"

#include <cstdint>
#include <cerrno>
#include <cstring>
#include <memory>

#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef CUDALINGS_HAVE_SECCOMP
#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace cudalings::seccomp {
namespace {

// Refused outright (EPERM). Names, not numbers: a call this machine's libseccomp does not know
// (an older release) cannot be made through it either, and is skipped.
constexpr const char* kRefused[] = {
    // other processes
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_open", "pidfd_getfd",
    "pidfd_send_signal", "kcmp",
    // kernel interfaces a submission never needs
    "perf_event_open", "bpf", "keyctl", "add_key", "request_key", "io_uring_setup",
    "io_uring_enter", "io_uring_register", "userfaultfd",
    // its world: mounts, namespaces, root
    "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsmount",
    "fsconfig", "fspick", "mount_setattr", "unshare", "setns",
    // the machine
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load", "reboot",
    "swapon", "swapoff", "acct", "quotactl", "lookup_dcookie", "nfsservctl", "vhangup"};

// Signals: refused to every process but the filtered one (or, for a sandbox, to its init).
// kill, rt_sigqueueinfo: arg0 is the target process; tgkill, rt_tgsigqueueinfo: arg0 is the
// thread group. tkill names a thread only, which a filter cannot tie to a process.
constexpr const char* kSignalByProcess[] = {"kill", "tgkill", "rt_sigqueueinfo",
                                            "rt_tgsigqueueinfo"};

}  // namespace

std::vector<std::string> refused_calls() {
    std::vector<std::string> names(std::begin(kRefused), std::end(kRefused));
    names.insert(names.end(), {"clone3 (ENOSYS)", "clone with a namespace flag",
                               "ioctl TIOCSTI/TIOCLINUX", "tkill", "signals to other processes"});
    return names;
}

bool drop_capabilities(std::string* why) {
    // The bounding set first (needs CAP_SETPCAP, which a process without capabilities lacks:
    // then there is nothing to drop there either, as far as exec is concerned with NNP set).
    for (int cap = 0; cap <= 63; ++cap) {
        if (::prctl(PR_CAPBSET_READ, cap, 0, 0, 0) != 1) continue;
        if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EPERM && errno != EINVAL) {
            if (why) *why = std::string("PR_CAPBSET_DROP: ") + std::strerror(errno);
            return false;
        }
    }
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2] = {};
    if (::syscall(SYS_capset, &header, data) != 0) {
        if (why) *why = std::string("capset: ") + std::strerror(errno);
        return false;
    }
    (void)::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    if (::syscall(SYS_capget, &header, data) != 0) return false;
    return data[0].effective == 0 && data[0].permitted == 0 && data[1].effective == 0 &&
           data[1].permitted == 0;
}

Confinement confine_self() {
    Confinement c;
    c.no_capabilities = drop_capabilities(&c.why);
    c.filtered = install({::getpid()}, &c.why);
    return c;
}

#ifdef CUDALINGS_HAVE_SECCOMP

namespace {

struct ContextDeleter {
    void operator()(void* ctx) const { seccomp_release(ctx); }
};
using Context = std::unique_ptr<void, ContextDeleter>;

bool fail(std::string* why, const std::string& what, int rc) {
    if (why) *why = what + ": " + std::strerror(rc < 0 ? -rc : rc);
    return false;
}

// One comparison of a call's argument (the library's SCMP_A0... macros leave a field to the C
// compound literal, which C++ warnings object to).
scmp_arg_cmp arg(unsigned index, scmp_compare op, scmp_datum_t a, scmp_datum_t b = 0) {
    scmp_arg_cmp c{};
    c.arg = index;
    c.op = op;
    c.datum_a = a;
    c.datum_b = b;
    return c;
}

// A rule for `name` when this libseccomp knows the call; 0 or an error code.
template <typename... Args>
int add_rule(void* ctx, std::uint32_t action, const char* name, unsigned count, Args... args) {
    int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) return 0;
    return seccomp_rule_add(ctx, action, nr, count, args...);
}

Context build(const Policy& policy, std::string* why) {
    Context ctx(seccomp_init(SCMP_ACT_ALLOW));
    if (!ctx) {
        if (why) *why = "seccomp_init failed";
        return nullptr;
    }
    const std::uint32_t refuse = SCMP_ACT_ERRNO(EPERM);
    int rc = 0;
    auto check = [&](int r, const char* what) {
        if (r != 0 && rc == 0) {
            rc = r;
            if (why) *why = std::string("seccomp rule for ") + what + ": " + std::strerror(-r);
        }
    };
    for (const char* name : kRefused) check(add_rule(ctx.get(), refuse, name, 0), name);
    // clone3 takes its flags in memory a filter cannot read: ENOSYS makes the C library use
    // clone, whose flags are an argument.
    check(add_rule(ctx.get(), SCMP_ACT_ERRNO(ENOSYS), "clone3", 0), "clone3");
    constexpr scmp_datum_t kNamespaceFlags[] = {CLONE_NEWNS,  CLONE_NEWCGROUP, CLONE_NEWUTS,
                                                CLONE_NEWIPC, CLONE_NEWUSER,   CLONE_NEWPID,
                                                CLONE_NEWNET};
    for (scmp_datum_t flag : kNamespaceFlags)
        check(add_rule(ctx.get(), refuse, "clone", 1, arg(0, SCMP_CMP_MASKED_EQ, flag, flag)),
              "clone");
    for (scmp_datum_t request : {scmp_datum_t{TIOCSTI}, scmp_datum_t{TIOCLINUX}})
        check(add_rule(ctx.get(), refuse, "ioctl", 1,
                       arg(1, SCMP_CMP_MASKED_EQ, 0xffffffffu, request)),
              "ioctl");
    for (const char* name : kSignalByProcess) {
        if (policy.self > 0)
            check(add_rule(ctx.get(), refuse, name, 1,
                           arg(0, SCMP_CMP_NE, static_cast<scmp_datum_t>(policy.self))),
                  name);
        else
            check(add_rule(ctx.get(), refuse, name, 1, arg(0, SCMP_CMP_EQ, 1)), name);
    }
    if (policy.self > 0)
        check(add_rule(ctx.get(), refuse, "tkill", 0), "tkill");
    else
        check(add_rule(ctx.get(), refuse, "tkill", 1, arg(0, SCMP_CMP_EQ, 1)), "tkill");
    if (rc != 0) return nullptr;
    // No new privileges (a set-uid program cannot shed the filter), and every thread of the
    // process at once: the CUDA driver's threads may already run.
    check(seccomp_attr_set(ctx.get(), SCMP_FLTATR_CTL_NNP, 1), "no_new_privs");
    check(seccomp_attr_set(ctx.get(), SCMP_FLTATR_CTL_TSYNC, 1), "tsync");
    if (rc != 0) return nullptr;
    return ctx;
}

}  // namespace

bool available(std::string*) { return true; }

bool install(const Policy& policy, std::string* why) {
    Context ctx = build(policy, why);
    if (!ctx) return false;
    int rc = seccomp_load(ctx.get());
    if (rc != 0) return fail(why, "seccomp_load", rc);
    return true;
}

int export_bpf(const Policy& policy, std::string* why) {
    Context ctx = build(policy, why);
    if (!ctx) return -1;
    int fd = ::memfd_create("cudalings-seccomp", MFD_CLOEXEC);
    if (fd < 0) {
        fail(why, "memfd_create", errno);
        return -1;
    }
    int rc = seccomp_export_bpf(ctx.get(), fd);
    if (rc != 0 || ::lseek(fd, 0, SEEK_SET) != 0) {
        fail(why, "seccomp_export_bpf", rc != 0 ? rc : errno);
        ::close(fd);
        return -1;
    }
    return fd;
}

#else  // no libseccomp at configure time

namespace {
constexpr const char* kMissing =
    "this cudalings was built without libseccomp (install libseccomp-dev and rebuild)";
}

bool available(std::string* why) {
    if (why) *why = kMissing;
    return false;
}

bool install(const Policy&, std::string* why) { return available(why); }

int export_bpf(const Policy&, std::string* why) {
    available(why);
    return -1;
}

#endif

}  // namespace cudalings::seccomp
