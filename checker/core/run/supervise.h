// Run a child program under supervision: its own process group, a wall-clock limit that
// kills the whole group, stdout/stderr capped while streaming (the excess is drained and
// counted, never stored), and an optional result channel on file descriptor 3.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace cudalings {

// In a child between fork and exec: makes each `target` descriptor a copy of its `source`,
// whatever numbers the sources have. A source may itself be another move's target (the
// checker's threads open and close descriptors while children start, so a pipe the child needs
// on fd 4 may sit on fd 3 when the fork happens): every source is first moved above all targets.
// Async-signal-safe (fcntl, dup2, close); false when a descriptor cannot be copied.
struct DescriptorMove {
    int source, target;
};
bool arrange_descriptors(const DescriptorMove* moves, int count);
// Then: closes every descriptor from 3 up that is not a target, so nothing else of the parent's
// reaches the program (async-signal-safe).
void close_all_but_targets(const DescriptorMove* moves, int count);

class MemoryGroup;  // below

struct ChildOptions {
    double wall_seconds = 30.0;          // whole process group killed past this
    // > 0: every process of the child (it, and all it starts) may use this many seconds of CPU
    // time each (RLIMIT_CPU; SIGXCPU past it, SIGKILL a second later). A limit that a busy
    // machine cannot trip: the wall-clock limit stays, as the backstop for a child that waits.
    double cpu_seconds = 0;
    std::size_t output_cap = 64 * 1024;  // bytes kept of stdout and of stderr each
    bool result_channel = false;         // open a pipe on fd 3 in the child
    std::size_t channel_cap = 16 << 20;  // bytes kept of the channel
    double channel_idle_seconds = 0;     // > 0: time out when the channel is silent this long
    // With channel_idle_seconds: "this long" is CPU time that the child and every process it
    // started used while the channel was silent (a machine busy with other work slows a child
    // down; only the child's own work counts), with a wall-clock backstop of 3x + 30 s for a
    // child that waits without computing.
    bool idle_in_cpu_time = false;
    std::string secret;                  // non-empty: readable once from fd 4 in the child
    // > 0: the child's host memory is limited with a cgroup (v2 or v1 memory controller) where
    // this process may create one; never with `ulimit -v`, which breaks CUDA's initialisation.
    std::size_t memory_limit = 0;
    // When set (and active), the child joins this group instead, with the children started
    // before and beside it: one limit for them all (memory_limit is not used).
    const MemoryGroup* memory_group = nullptr;
    // > 0: where neither of those could be applied (no memory cgroup may be created here), each
    // of the child's processes gets this much address space (RLIMIT_AS, which its children
    // inherit). Only for children that never start CUDA (builds: nvcc, the preprocessor, nm):
    // an allocation past it fails in that process, and the build fails saying so.
    std::size_t address_space_limit = 0;
    // When set and it becomes true, the child's group is killed (e.g. a build that is no
    // longer needed); the result then says timed_out = false, cancelled = true.
    const std::atomic<bool>* cancel = nullptr;
    // When set, the child starts at once but `secret` is written only once *hold becomes 1
    // (until then the wall-clock and idle limits do not run): a child can get ready (start
    // CUDA) while its input is still being made, and wait on fd 4. When *hold becomes -1 the
    // child's group is killed and the result says cancelled = true.
    const std::atomic<int>* hold = nullptr;
    std::string working_dir;  // empty: inherit
    // When set, called with the result channel's bytes whenever more arrived: once it returns
    // true the child has said all it will say, and the result comes back without waiting for
    // the child's exit (a GPU process's exit is the driver tearing its context down, ~0.1 s).
    // The group is killed as always, and a later run_supervised call reaps it, so finished
    // children never pile up. Not for a child in a memory cgroup (the cgroup is removed when
    // the call returns, which needs its processes gone).
    std::function<bool(const std::string&)> finished;
    // When set, also called with the result channel's bytes whenever more arrived, in any
    // child (set `cancel` from it to stop the child on what it said).
    std::function<void(const std::string&)> on_channel;
    std::map<std::string, std::string> env;  // added to (or replacing in) the environment
    // The program starts with `env` alone as its environment, nothing of this process's (the
    // grading sandbox's bwrap: the grader's tokens must not reach it).
    bool clear_environment = false;
    // More descriptors for the child: each source (open in this process; it stays open here)
    // becomes the child's `target` (5 and up: 0-4 are the streams, the channel and the secret).
    std::vector<DescriptorMove> descriptors;
};

struct CapturedStream {
    std::string head;         // the first output_cap bytes
    std::size_t dropped = 0;  // bytes read past the cap and thrown away
};

struct ChildResult {
    bool started = false;
    std::string start_error;  // why the program could not be started
    bool timed_out = false;
    bool idle_timeout = false;  // timed out because the result channel fell silent
    bool cancelled = false;
    bool memory_limited = false;    // the child ran under a memory cgroup
    bool memory_limit_hit = false;  // ... and the kernel killed it for exceeding the limit
    // No cgroup could be made: address_space_limit was applied instead.
    bool address_space_limited = false;
    int exit_code = -1;             // when it exited normally
    int signal = 0;                 // when a signal ended it
    CapturedStream out, err, channel;
    double wall_seconds = 0;
    bool finished_early = false;  // `finished` said so: exit_code is 0, the exit not awaited

    bool exited_ok() const { return started && !timed_out && signal == 0 && exit_code == 0; }
};

ChildResult run_supervised(const std::vector<std::string>& argv, const ChildOptions& options);

// The CPU time (user and system, in seconds) that a process and its living descendants have
// used, from /proc (their finished, reaped children included); 0 when it is gone.
double tree_cpu_seconds(pid_t root);

// Where `program` lives: itself when it names a path, else the first executable of that name on
// PATH; empty when there is none.
std::string find_program(const std::string& program);

// Whether a memory cgroup can be made here (for tests and reports).
bool memory_cgroups_available();

// One memory limit for several children (ChildOptions::memory_group): a build's nvcc, every
// process it starts, and the screen's preprocessor passes beside it hold `limit` together, not
// each. A cgroup made when the group is, removed (its processes killed first) when it goes.
// Inactive where no memory cgroup can be made: the children then run without a limit, as with
// memory_limit.
class MemoryGroup {
  public:
    explicit MemoryGroup(std::size_t limit);
    ~MemoryGroup();
    MemoryGroup(const MemoryGroup&) = delete;
    MemoryGroup& operator=(const MemoryGroup&) = delete;
    bool active() const;
    std::size_t limit() const { return limit_; }
    // How often the kernel has stopped a process of the group at its limit so far.
    unsigned long long limit_events() const;
    struct Impl;
    const Impl& impl() const { return *impl_; }

  private:
    std::size_t limit_;
    std::unique_ptr<Impl> impl_;
};

// "SIGSEGV (segmentation fault)" for 11, and so on.
std::string describe_signal(int signal);
// How a process ended: describe_signal(signal) when a signal ended it, else "exit code N".
std::string describe_exit(int signal, int exit_code);

// Ctrl-C, SIGTERM, SIGHUP and SIGQUIT end every child process group started by run_supervised
// (and still running) before this process ends with the same signal: nothing the checker
// started outlives it. Each child also gets SIGKILL if this process dies without a chance to
// clean up (PR_SET_PDEATHSIG), and a child under a memory cgroup is killed through the cgroup
// too (cgroup.kill), which also reaches processes that left its group. Call once, early in
// main(); `on_signal` (optional, async-signal-safe only) runs first, e.g. to restore a terminal.
void end_children_on_termination(void (*on_signal)(int) = nullptr);

// How many child process groups are running now (for tests).
int running_children();

}  // namespace cudalings
