#include "supervise.h"

#include "text.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sys/stat.h>
#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <vector>

extern char** environ;

namespace cudalings {
namespace {

using Clock = std::chrono::steady_clock;

// ------------------------------------------------------------------ children still running
// A fixed table (no allocation, lock-free) that a signal handler may read: the process group of
// every child that is running, and its memory cgroup's directory when it has one.
struct RunningChild {
    std::atomic<pid_t> group{0};  // 0: free; -1: being filled in
    std::atomic<bool> has_cgroup{false};
    char cgroup_dir[512] = {};
};
std::array<RunningChild, 256> running;
void (*on_termination)(int) = nullptr;

int remember_child(pid_t group, const std::string& cgroup_dir) {
    for (std::size_t i = 0; i < running.size(); ++i) {
        pid_t free_slot = 0;
        if (!running[i].group.compare_exchange_strong(free_slot, -1)) continue;
        bool fits = !cgroup_dir.empty() && cgroup_dir.size() < sizeof running[i].cgroup_dir;
        if (fits) std::memcpy(running[i].cgroup_dir, cgroup_dir.c_str(), cgroup_dir.size() + 1);
        running[i].has_cgroup.store(fits);
        running[i].group.store(group);
        return static_cast<int>(i);
    }
    return -1;  // more than 256 at once: PR_SET_PDEATHSIG still covers them
}

void forget_child(int slot) {
    if (slot < 0) return;
    running[static_cast<std::size_t>(slot)].has_cgroup.store(false);
    running[static_cast<std::size_t>(slot)].group.store(0);
}

// Async-signal-safe: kill(2), open(2), write(2), rmdir(2), nanosleep(2) and raise(3) only.
extern "C" void end_children_and_die(int sig) {
    if (on_termination) on_termination(sig);
    for (auto& child : running) {
        pid_t group = child.group.load();
        if (group <= 0) continue;
        ::kill(-group, SIGKILL);
        if (child.has_cgroup.load()) {
            // Processes that left the group are still in the cgroup (Linux 5.14+).
            char path[sizeof child.cgroup_dir + 16];
            std::size_t n = 0;
            while (child.cgroup_dir[n] && n < sizeof child.cgroup_dir)
                path[n] = child.cgroup_dir[n], ++n;
            const char* leaf = "/cgroup.kill";
            for (std::size_t i = 0; leaf[i]; ++i) path[n++] = leaf[i];
            path[n] = '\0';
            int fd = ::open(path, O_WRONLY);
            if (fd >= 0) {
                (void)!::write(fd, "1", 1);
                ::close(fd);
            }
        }
    }
    // The cgroups go once their processes are gone (a few milliseconds after SIGKILL).
    for (int attempt = 0; attempt < 20; ++attempt) {
        bool left = false;
        for (auto& child : running)
            if (child.has_cgroup.load() && ::rmdir(child.cgroup_dir) != 0 && errno == EBUSY)
                left = true;
        if (!left) break;
        timespec pause{0, 5 * 1000 * 1000};
        ::nanosleep(&pause, nullptr);
    }
    ::signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    ::pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
    ::raise(sig);
}

constexpr int kTerminationSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

// Children that said they were finished and were killed, but whose exit was not awaited
// (ChildOptions::finished): the exit of a GPU process overlaps whatever the caller does next.
// Each later call reaps those that are gone by then.
std::mutex unreaped_mutex;
std::vector<pid_t> unreaped;

void reap_finished_children() {
    std::lock_guard<std::mutex> lock(unreaped_mutex);
    unreaped.erase(std::remove_if(unreaped.begin(), unreaped.end(),
                                  [](pid_t pid) {
                                      int status;
                                      return waitpid(pid, &status, WNOHANG) != 0;
                                  }),
                   unreaped.end());
}

struct Pipe {
    int read_end = -1;
    int write_end = -1;
    bool open() {
        int fds[2];
        if (pipe2(fds, O_CLOEXEC) != 0) return false;
        read_end = fds[0];
        write_end = fds[1];
        return true;
    }
    void close_read() {
        if (read_end >= 0) ::close(read_end);
        read_end = -1;
    }
    void close_write() {
        if (write_end >= 0) ::close(write_end);
        write_end = -1;
    }
};

// Append what is readable now; keep at most `cap` bytes, count the rest.
// Returns false once the pipe reached end-of-file or failed.
bool drain(int fd, CapturedStream& into, std::size_t cap) {
    char buffer[65536];
    ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0) return errno == EINTR || errno == EAGAIN;
    if (got == 0) return false;
    std::size_t n = static_cast<std::size_t>(got);
    std::size_t room = into.head.size() < cap ? cap - into.head.size() : 0;
    std::size_t keep = n < room ? n : room;
    into.head.append(buffer, keep);
    into.dropped += n - keep;
    return true;
}

}  // namespace

// A memory cgroup for one child (or a MemoryGroup's children): created before the fork, joined
// by the child before exec, removed afterwards. Outside the anonymous namespace: MemoryGroup
// holds one. Supports the unified hierarchy (v2) and the v1 memory controller.
class MemoryCgroup {
  public:
    MemoryCgroup() = default;
    MemoryCgroup(const MemoryCgroup&) = delete;
    MemoryCgroup& operator=(const MemoryCgroup&) = delete;
    // What is left in it (a process of a sandbox whose PID namespace is still being torn
    // down) is killed, and the cgroup removed once it is empty.
    ~MemoryCgroup() { kill_and_remove(); }
    bool create(std::size_t limit) {
        static std::atomic<int> counter{0};  // builds and screens start children from threads
        std::string own_v1, own_v2;
        std::ifstream self("/proc/self/cgroup");
        std::string line;
        while (std::getline(self, line)) {
            if (line.rfind("0::", 0) == 0) own_v2 = line.substr(3);
            auto memory = line.find(":memory:");
            if (memory != std::string::npos) own_v1 = line.substr(memory + 8);
        }
        std::string name =
            "/cudalings-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
        std::string limit_text = std::to_string(limit);
        limit_ = limit;
        if (::access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0) {
            dir_ = "/sys/fs/cgroup" + own_v2 + name;
            v2_ = true;
            if (::mkdir(dir_.c_str(), 0755) == 0 && write_to("memory.max", limit_text) &&
                write_to("memory.swap.max", "0"))
                return true;
            if (::access((dir_ + "/memory.max").c_str(), F_OK) == 0 &&
                write_to("memory.max", limit_text))
                return true;  // no swap control: still limited
        } else if (!own_v1.empty()) {
            if (own_v1 == "/") own_v1.clear();
            dir_ = "/sys/fs/cgroup/memory" + own_v1 + name;
            v2_ = false;
            if (::mkdir(dir_.c_str(), 0755) == 0 && write_to("memory.limit_in_bytes", limit_text)) {
                write_to("memory.memsw.limit_in_bytes", limit_text);  // no escape into swap
                return true;
            }
        }
        if (!dir_.empty()) ::rmdir(dir_.c_str());
        dir_.clear();
        return false;
    }
    // Called in the child after fork: move this process into the cgroup.
    void join() const {
        if (dir_.empty()) return;
        std::string procs = dir_ + "/cgroup.procs";
        int fd = ::open(procs.c_str(), O_WRONLY);
        if (fd < 0) return;
        (void)!::write(fd, "0", 1);
        ::close(fd);
    }
    bool oom_killed() const {
        if (dir_.empty()) return false;
        // v2: memory.events; v1: memory.oom_control (newer kernels), else the usage peak.
        std::ifstream in(dir_ + (v2_ ? "/memory.events" : "/memory.oom_control"));
        std::string key;
        unsigned long long value = 0;
        while (in >> key >> value)
            if (key == "oom_kill" && value > 0) return true;
        if (v2_) return false;
        unsigned long long peak = 0, failures = 0;
        std::ifstream(dir_ + "/memory.max_usage_in_bytes") >> peak;
        std::ifstream(dir_ + "/memory.failcnt") >> failures;
        return failures > 0 || (limit_ > 0 && peak + (1u << 20) >= limit_);
    }
    // The kernel's kills at the limit (v2 memory.events; v1 memory.oom_control where it says,
    // else the times the limit was hit), so far: a group shared by several children compares
    // the count before and after each.
    unsigned long long limit_events() const {
        if (dir_.empty()) return 0;
        std::ifstream in(dir_ + (v2_ ? "/memory.events" : "/memory.oom_control"));
        std::string key;
        unsigned long long value = 0;
        while (in >> key >> value)
            if (key == "oom_kill") return value;
        if (v2_) return 0;
        unsigned long long failures = 0;
        std::ifstream(dir_ + "/memory.failcnt") >> failures;
        return failures;
    }
    // Ends every process still in the cgroup and removes it (a group shared by several
    // children: a process that left its process group may still be there for a moment).
    void kill_and_remove() {
        if (dir_.empty()) return;
        write_to("cgroup.kill", "1");  // v2, Linux 5.14+; elsewhere the rmdir waits below
        for (int attempt = 0; attempt < 50; ++attempt) {
            if (::rmdir(dir_.c_str()) == 0 || errno != EBUSY) break;
            if (!v2_) {
                std::ifstream procs(dir_ + "/cgroup.procs");
                for (pid_t pid; procs >> pid;) ::kill(pid, SIGKILL);
            }
            ::usleep(2000);
        }
        dir_.clear();
    }
    bool active() const { return !dir_.empty(); }
    const std::string& dir() const { return dir_; }

  private:
    bool write_to(const char* file, const std::string& value) const {
        std::ofstream out(dir_ + "/" + file);
        out << value;
        out.flush();
        return static_cast<bool>(out);
    }
    std::string dir_;
    bool v2_ = false;
    std::size_t limit_ = 0;
};

namespace {

// Closes descriptors first..last (async-signal-safe): close_range where the kernel has it
// (5.9), else one by one up to the process's limit.
void close_descriptors(int first, unsigned last);

// Closes the descriptors from 3 up to the highest target that are not targets (the gaps between
// them), and returns the first descriptor above every target (async-signal-safe).
int close_gaps(const DescriptorMove* moves, int count) {
    int first_free = 3;
    for (int i = 0; i < count; ++i) first_free = std::max(first_free, moves[i].target + 1);
    for (int fd = 3; fd < first_free; ++fd) {
        bool target = false;
        for (int i = 0; i < count; ++i) target = target || moves[i].target == fd;
        if (!target) ::close(fd);
    }
    return first_free;
}

void close_descriptors(int first, unsigned last) {
    if (first < 0 || static_cast<unsigned>(first) > last) return;
#ifdef SYS_close_range
    if (::syscall(SYS_close_range, static_cast<unsigned>(first), last, 0u) == 0) return;
#endif
    long limit = ::sysconf(_SC_OPEN_MAX);
    if (limit < 0 || limit > 65536) limit = 65536;
    for (long fd = first; fd < limit && static_cast<unsigned long>(fd) <= last; ++fd)
        ::close(static_cast<int>(fd));
}

[[noreturn]] void exec_child(const std::vector<std::string>& argv, const ChildOptions& options,
                             Pipe& out, Pipe& err, Pipe& channel, Pipe& secret, int report_fd,
                             const MemoryCgroup& cgroup, bool address_space, pid_t parent,
                             const sigset_t& mask) {
    setpgid(0, 0);
    // The exec report pipe above every descriptor the child is given (it is close-on-exec).
    if (report_fd < 64) {
        int moved = fcntl(report_fd, F_DUPFD_CLOEXEC, 64);
        if (moved >= 0) report_fd = moved;
    }
    // Killed with the checker, whatever ends it (even SIGKILL); if it is already gone, go too.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    cgroup.join();
    if (options.cpu_seconds > 0) {
        rlimit cpu{};
        cpu.rlim_cur = static_cast<rlim_t>(std::ceil(options.cpu_seconds));
        cpu.rlim_max = cpu.rlim_cur + 1;
        setrlimit(RLIMIT_CPU, &cpu);
    }
    if (address_space) {
        rlimit as{};
        as.rlim_cur = as.rlim_max = static_cast<rlim_t>(options.address_space_limit);
        setrlimit(RLIMIT_AS, &as);
    }
    // Default signal dispositions and mask for the program we start.
    signal(SIGPIPE, SIG_DFL);
    for (int sig : kTerminationSignals) signal(sig, SIG_DFL);
    sigprocmask(SIG_SETMASK, &mask, nullptr);
    int devnull = ::open("/dev/null", O_RDONLY);
    DescriptorMove moves[16];
    int count = 0;
    if (devnull >= 0) moves[count++] = {devnull, 0};
    moves[count++] = {out.write_end, 1};
    moves[count++] = {err.write_end, 2};
    if (options.result_channel) moves[count++] = {channel.write_end, 3};
    if (!options.secret.empty()) moves[count++] = {secret.read_end, 4};
    for (const auto& move : options.descriptors)
        if (count < 16) moves[count++] = move;
    if (count == 16 || !arrange_descriptors(moves, count)) {
        std::string message =
            std::string("cannot set up the child's descriptors: ") + strerror(errno);
        (void)!write(report_fd, message.data(), message.size());
        _exit(127);
    }
    // Nothing else of this process's: a descriptor it inherited without close-on-exec (from
    // whatever started the checker) would reach the program, in a sandbox too. The exec report
    // pipe stays: it is close-on-exec, and above every target.
    const int first_free = close_gaps(moves, count);
    if (report_fd < first_free) {
        std::string message = "the exec report pipe lies among the child's descriptors";
        (void)!write(report_fd, message.data(), message.size());
        _exit(127);
    }
    close_descriptors(first_free, static_cast<unsigned>(report_fd) - 1);
    close_descriptors(report_fd + 1, ~0u);
    if (!options.working_dir.empty() && chdir(options.working_dir.c_str()) != 0) {
        std::string message = "cannot enter " + options.working_dir + ": " + strerror(errno);
        (void)!write(report_fd, message.data(), message.size());
        _exit(127);
    }
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    if (options.clear_environment) {
        std::vector<std::string> entries;
        for (const auto& [key, value] : options.env) entries.push_back(key + "=" + value);
        std::vector<char*> envp;
        for (auto& e : entries) envp.push_back(e.data());
        envp.push_back(nullptr);
        execvpe(args[0], args.data(), envp.data());  // searches this process's PATH
    } else {
        for (const auto& [key, value] : options.env) setenv(key.c_str(), value.c_str(), 1);
        execvp(args[0], args.data());
    }
    std::string message = "cannot run " + argv[0] + ": " + strerror(errno);
    (void)!write(report_fd, message.data(), message.size());
    _exit(127);
}

}  // namespace

struct MemoryGroup::Impl {
    MemoryCgroup cgroup;
};

MemoryGroup::MemoryGroup(std::size_t limit) : limit_(limit), impl_(std::make_unique<Impl>()) {
    if (limit > 0) impl_->cgroup.create(limit);
}

MemoryGroup::~MemoryGroup() = default;  // the cgroup's own destructor ends and removes it

bool MemoryGroup::active() const { return impl_->cgroup.active(); }

unsigned long long MemoryGroup::limit_events() const { return impl_->cgroup.limit_events(); }

bool arrange_descriptors(const DescriptorMove* moves, int count) {
    int above = 0;
    for (int i = 0; i < count; ++i)
        above = moves[i].target + 1 > above ? moves[i].target + 1 : above;
    int moved[16];
    if (count > 16) return false;
    // Copies above every target first: a dup2 onto a target can then never overwrite a source
    // that a later move still needs.
    for (int i = 0; i < count; ++i) {
        moved[i] = fcntl(moves[i].source, F_DUPFD_CLOEXEC, above);
        if (moved[i] < 0) return false;
    }
    for (int i = 0; i < count; ++i)
        if (dup2(moved[i], moves[i].target) < 0) return false;  // the target is not CLOEXEC
    for (int i = 0; i < count; ++i) ::close(moved[i]);
    return true;
}

void close_all_but_targets(const DescriptorMove* moves, int count) {
    close_descriptors(close_gaps(moves, count), ~0u);
}

std::string find_program(const std::string& program) {
    if (program.find('/') != std::string::npos) return program;
    const char* path = std::getenv("PATH");
    std::istringstream dirs(path ? path : "");
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
        std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
        if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    }
    return {};
}

bool memory_cgroups_available() {
    MemoryCgroup probe;
    return probe.create(std::size_t{1} << 30);
}

ChildResult run_supervised(const std::vector<std::string>& argv, const ChildOptions& options) {
    ChildResult result;
    if (argv.empty()) {
        result.start_error = "no program given";
        return result;
    }
    Pipe out, err, channel, exec_report, secret;
    if (!out.open() || !err.open() || !exec_report.open() ||
        (options.result_channel && !channel.open()) ||
        (!options.secret.empty() && !secret.open())) {
        result.start_error = std::string("pipe: ") + strerror(errno);
        return result;
    }
    reap_finished_children();
    MemoryCgroup own;
    const MemoryGroup* group =
        options.memory_group && options.memory_group->active() ? options.memory_group : nullptr;
    const MemoryCgroup& cgroup = group ? group->impl().cgroup : own;
    const unsigned long long events_before = group ? group->limit_events() : 0;
    result.memory_limited =
        group != nullptr || (options.memory_limit > 0 && own.create(options.memory_limit));
    result.address_space_limited = !result.memory_limited && options.address_space_limit > 0;
    auto start = Clock::now();
    // No termination signal in this thread between the fork and the child's registration.
    sigset_t blocked, previous;
    sigemptyset(&blocked);
    for (int sig : kTerminationSignals) sigaddset(&blocked, sig);
    pthread_sigmask(SIG_BLOCK, &blocked, &previous);
    const pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        pthread_sigmask(SIG_SETMASK, &previous, nullptr);
        result.start_error = std::string("fork: ") + strerror(errno);
        return result;
    }
    if (pid == 0)
        exec_child(argv, options, out, err, channel, secret, exec_report.write_end, cgroup,
                   result.address_space_limited, parent, previous);

    setpgid(pid, pid);  // also done in the child: whichever runs first wins the race
    const int slot = remember_child(pid, cgroup.dir());
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    // A descriptor that becomes readable when the child exits (Linux 5.3 and later), so the
    // wait below wakes at once instead of at its next 20 ms tick.
    int exit_fd = -1;
#ifdef SYS_pidfd_open
    exit_fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#endif
    out.close_write();
    err.close_write();
    channel.close_write();
    exec_report.close_write();
    // A pipe holds far more than a key: this write never blocks.
    auto give_secret = [&] {
        if (options.secret.empty()) return;
        (void)!::write(secret.write_end, options.secret.data(), options.secret.size());
        secret.close_write();
        secret.close_read();
    };
    bool held = options.hold != nullptr;
    if (!held) give_secret();

    // exec succeeded when the report pipe closes empty (it is close-on-exec).
    std::string exec_error;
    {
        char buffer[512];
        ssize_t got;
        while ((got = ::read(exec_report.read_end, buffer, sizeof buffer)) > 0)
            exec_error.append(buffer, static_cast<std::size_t>(got));
        exec_report.close_read();
    }

    struct Watched {
        int fd;
        CapturedStream* into;
        std::size_t cap;
    };
    std::vector<Watched> watched{{out.read_end, &result.out, options.output_cap},
                                 {err.read_end, &result.err, options.output_cap}};
    if (options.result_channel)
        watched.push_back({channel.read_end, &result.channel, options.channel_cap});

    const auto wall = std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(options.wall_seconds));
    auto deadline = start + wall;
    auto idle_limit = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
        options.idle_in_cpu_time ? 3 * options.channel_idle_seconds + 30
                                 : options.channel_idle_seconds));
    Clock::time_point last_channel_data = start;
    // The idle limit in CPU time: the child tree's CPU time, sampled twice a second, and its
    // value when the channel last spoke.
    const bool idle_cpu =
        options.idle_in_cpu_time && options.result_channel && options.channel_idle_seconds > 0;
    double cpu_now = 0, cpu_at_data = 0;
    Clock::time_point cpu_sampled = start;
    int status = 0;
    bool reaped = false;
    bool finished = false;  // options.finished said so
    const bool may_finish_early = options.finished && !result.memory_limited;
    Clock::time_point reaped_at{};
    while (true) {
        if (!reaped) {
            pid_t w = waitpid(pid, &status, WNOHANG);
            if (w == pid) {
                reaped = true;
                reaped_at = Clock::now();
            }
        }
        bool any_open = false;
        for (auto& w : watched) any_open = any_open || w.fd >= 0;
        if (reaped && !any_open) break;
        auto now = Clock::now();
        // A held child: its limits count from its release; a cancelled hold is a cancel.
        const int hold = held && !reaped ? options.hold->load() : 1;
        if (held && hold >= 0) {
            deadline = now + wall;
            last_channel_data = now;
            cpu_at_data = cpu_now;
        }
        if (held && hold > 0) {
            held = false;
            give_secret();
        }
        // After the child is gone, give leftover writers (its own children) a moment only.
        if (reaped && now - reaped_at > std::chrono::milliseconds(200)) {
            kill(-pid, SIGKILL);
            break;
        }
        if (idle_cpu && !reaped && now - cpu_sampled >= std::chrono::milliseconds(500)) {
            cpu_now = tree_cpu_seconds(pid);
            cpu_sampled = now;
        }
        bool idle = options.result_channel && options.channel_idle_seconds > 0 &&
                    (now - last_channel_data > idle_limit ||
                     (idle_cpu && cpu_now - cpu_at_data > options.channel_idle_seconds));
        if (!reaped && (hold < 0 || (options.cancel && options.cancel->load()))) {
            result.cancelled = true;
            kill(-pid, SIGKILL);
            waitpid(pid, &status, 0);
            reaped = true;
            reaped_at = Clock::now();
            continue;
        }
        if (!reaped && (now >= deadline || idle)) {
            result.timed_out = true;
            result.idle_timeout = now < deadline;
            kill(-pid, SIGKILL);
            waitpid(pid, &status, 0);
            reaped = true;
            reaped_at = Clock::now();
            continue;
        }
        std::vector<pollfd> fds;
        for (auto& w : watched)
            if (w.fd >= 0) fds.push_back({w.fd, POLLIN, 0});
        if (exit_fd >= 0 && !reaped) fds.push_back({exit_fd, POLLIN, 0});
        int wait_ms = held ? 2 : 20;  // a held child's release is noticed within 2 ms
        if (!fds.empty()) {
            int ready = poll(fds.data(), fds.size(), wait_ms);
            if (ready < 0 && errno != EINTR) break;
            for (auto& p : fds) {
                if (!(p.revents & (POLLIN | POLLHUP | POLLERR))) continue;
                for (auto& w : watched) {
                    if (w.fd != p.fd) continue;
                    if (w.into == &result.channel) {
                        last_channel_data = Clock::now();
                        cpu_at_data = cpu_now;
                    }
                    if (!drain(w.fd, *w.into, w.cap)) {
                        ::close(w.fd);
                        w.fd = -1;
                    }
                    if (w.into == &result.channel && options.on_channel && !reaped)
                        options.on_channel(result.channel.head);
                    if (w.into == &result.channel && may_finish_early && !reaped)
                        finished = options.finished(result.channel.head);
                }
            }
            if (finished) break;
        } else {
            usleep(wait_ms * 1000);
        }
    }
    // Leave nothing of the group behind, whatever happened.
    kill(-pid, SIGKILL);
    if (finished) {
        std::lock_guard<std::mutex> lock(unreaped_mutex);
        unreaped.push_back(pid);
    }
    forget_child(slot);
    if (exit_fd >= 0) ::close(exit_fd);
    secret.close_write();  // still open when a held child never got its secret
    secret.close_read();
    for (auto& w : watched)
        if (w.fd >= 0) ::close(w.fd);
    result.wall_seconds = std::chrono::duration<double>(Clock::now() - start).count();

    if (!exec_error.empty()) {
        result.start_error = exec_error;
        return result;
    }
    result.started = true;
    if (finished) {
        result.finished_early = true;
        result.exit_code = 0;
    } else if (!result.timed_out) {
        if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
        if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
    }
    // A group's limit was hit while this child ran, and it did not survive it.
    result.memory_limit_hit = group ? group->limit_events() > events_before && !result.exited_ok()
                                    : result.memory_limited && own.oom_killed();
    // What a child wrote is shown, and stored in JSON: valid UTF-8 from here on (a Latin-1
    // comment quoted by a compiler, a cap that cut a character in two). The result channel is
    // left as sent: it is a protocol, parsed and authenticated byte for byte.
    result.out.head = valid_utf8(result.out.head);
    result.err.head = valid_utf8(result.err.head);
    return result;
}

std::string describe_exit(int signal, int exit_code) {
    return signal ? describe_signal(signal) : "exit code " + std::to_string(exit_code);
}

std::string describe_signal(int sig) {
    // Names from a table: sigabbrev_np() needs glibc 2.32, older systems are still common.
    static const std::pair<int, const char*> names[] = {
        {SIGHUP, "SIGHUP"},       {SIGINT, "SIGINT"},   {SIGQUIT, "SIGQUIT"},  {SIGILL, "SIGILL"},
        {SIGTRAP, "SIGTRAP"},     {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},    {SIGFPE, "SIGFPE"},
        {SIGKILL, "SIGKILL"},     {SIGUSR1, "SIGUSR1"}, {SIGSEGV, "SIGSEGV"},  {SIGUSR2, "SIGUSR2"},
        {SIGPIPE, "SIGPIPE"},     {SIGALRM, "SIGALRM"}, {SIGTERM, "SIGTERM"},  {SIGCHLD, "SIGCHLD"},
        {SIGCONT, "SIGCONT"},     {SIGSTOP, "SIGSTOP"}, {SIGTSTP, "SIGTSTP"},  {SIGTTIN, "SIGTTIN"},
        {SIGTTOU, "SIGTTOU"},     {SIGXCPU, "SIGXCPU"}, {SIGXFSZ, "SIGXFSZ"},  {SIGSYS, "SIGSYS"},
        {SIGVTALRM, "SIGVTALRM"}, {SIGPROF, "SIGPROF"}, {SIGWINCH, "SIGWINCH"}};
    std::string out = "signal " + std::to_string(sig);
    for (const auto& [number, name] : names)
        if (number == sig) out = name;
    const char* text = ::strsignal(sig);
    if (text && std::string(text).rfind("Unknown signal", 0) != 0)
        out += std::string(" (") + text + ")";
    return out;
}

void end_children_on_termination(void (*on_signal)(int)) {
    on_termination = on_signal;
    struct sigaction action {};
    action.sa_handler = end_children_and_die;
    sigemptyset(&action.sa_mask);
    for (int sig : kTerminationSignals) sigaddset(&action.sa_mask, sig);  // one at a time
    for (int sig : kTerminationSignals) sigaction(sig, &action, nullptr);
}

int running_children() {
    int n = 0;
    for (const auto& child : running) n += child.group.load() > 0;
    return n;
}

double tree_cpu_seconds(pid_t root) {
    // Every process's parent and CPU time, from /proc/<pid>/stat: the fields after the command
    // name's closing parenthesis are state, ppid, ... utime (14th of the line), stime, cutime,
    // cstime. A PID namespace (the sandbox's) shows its processes here with this namespace's
    // numbers, their parents too.
    static const double tick = static_cast<double>(::sysconf(_SC_CLK_TCK));
    std::map<pid_t, std::vector<pid_t>> children;
    std::map<pid_t, double> cpu;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
        const std::string name = entry.path().filename().string();
        if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::ifstream in(entry.path() / "stat");
        std::string line;
        if (!std::getline(in, line)) continue;
        const std::size_t close = line.rfind(')');
        if (close == std::string::npos) continue;
        std::istringstream fields(line.substr(close + 1));
        std::string state;
        long long ppid = 0, skip = 0, utime = 0, stime = 0, cutime = 0, cstime = 0;
        fields >> state >> ppid;
        for (int k = 0; k < 9; ++k) fields >> skip;  // pgrp .. cmajflt
        fields >> utime >> stime >> cutime >> cstime;
        if (!fields) continue;
        const pid_t pid = static_cast<pid_t>(std::stol(name));
        children[static_cast<pid_t>(ppid)].push_back(pid);
        cpu[pid] = static_cast<double>(utime + stime + cutime + cstime) / tick;
    }
    double total = 0;
    std::vector<pid_t> todo{root};
    std::set<pid_t> seen;
    while (!todo.empty()) {
        const pid_t p = todo.back();
        todo.pop_back();
        if (!seen.insert(p).second) continue;
        if (auto it = cpu.find(p); it != cpu.end()) total += it->second;
        if (auto it = children.find(p); it != children.end())
            todo.insert(todo.end(), it->second.begin(), it->second.end());
    }
    return total;
}

}  // namespace cudalings
