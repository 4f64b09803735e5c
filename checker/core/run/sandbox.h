// Sealed runs: every child that reads or runs a submission's code (the preprocessor, nvcc, the
// emulator's build, nm, the runner, compute-sanitizer) can be started inside a bubblewrap
// (bwrap) sandbox instead of directly. bubblewrap is the well-kept tool Flatpak uses; cudalings
// only chooses what the child may see:
//
//   - new user, PID, IPC, network, UTS and cgroup namespaces: the child sees only its own
//     processes (it cannot signal the checker or anything else), has no network but its own
//     loopback, and runs as "nobody" with no capabilities;
//   - the operating system read-only (/usr and the loader's files in /etc), a fresh /proc, a
//     minimal /dev (the GPU's device nodes and /sys only when it runs GPU code);
//   - the paths its command line names, bound read-only at the same place (the step file and
//     its headers, the built object, the runner); the directories it writes its outputs into,
//     and nothing else of the host: no home, no course, no other submission;
//   - a size-limited tmpfs as /tmp, HOME and TMPDIR (its scratch space), another as /dev/shm;
//     everything else (the sandbox's own root, /dev) is read-only;
//   - an environment of a few known variables (never the grader's secrets); bwrap itself starts
//     with an empty environment and reads its arguments from a descriptor (`--args`), so that
//     nothing of the grader's is in any process's environment or command line inside;
//   - a seccomp filter (checker/core/run/seccomp_filter.h, bwrap's `--seccomp`) on every process
//     inside: no ptrace, no reading other processes' memory, no namespaces or mounts, no signal
//     to PID 1...; without libseccomp there is no sandbox (open_sandbox says why);
//   - PID 1 is cudalings-sandbox-init (bwrap's `--as-pid-1`: no bwrap process inside), which
//     makes itself non-dumpable, so that its /proc/1/mem, /environ and /fd cannot be opened
//     from inside, starts the program and reaps every orphan;
//   - when the child ends, or the checker dies, every process it started dies with the PID
//     namespace: a daemon cannot outlive its step.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "supervise.h"

namespace cudalings {

// What one sandboxed child may see besides the operating system.
struct SandboxView {
    std::vector<std::string> read_only;  // files or directories, bound read-only at their path
    std::vector<std::string> writable;   // directories it writes into, bound at their path
    bool gpu = false;                    // the GPU's device nodes and /sys
    // The standard /dev (null, zero, random, tty...) for a program that runs; a build gets
    // /dev/null alone, so that no endless device can be #included.
    bool devices = false;
};

struct SandboxSettings {
    std::string bwrap;                                   // the bwrap executable
    std::size_t scratch_bytes = std::size_t{512} << 20;  // the size of its /tmp (and /dev/shm)
    std::string init;  // cudalings-sandbox-init; "" finds it (find_sandbox_init)
};

class Sandbox {
  public:
    // Finds the init when the settings name none, and builds the seccomp filter once.
    explicit Sandbox(SandboxSettings settings);

    // bwrap's command line that runs `argv` seeing `view`; `env` is added to the few variables
    // passed through from the checker's environment (PATH, LD_LIBRARY_PATH,
    // CUDA_VISIBLE_DEVICES...). run_contained passes bwrap's options (every word between the
    // first and "--") through `--args`, and the filter on `filter_descriptor`, which the
    // command names (above every descriptor the caller gives the program).
    std::vector<std::string> command(const std::vector<std::string>& argv, const SandboxView& view,
                                     const std::map<std::string, std::string>& env,
                                     int filter_descriptor = kFilterDescriptor) const;
    const SandboxSettings& settings() const { return settings_; }
    // "bubblewrap 0.8.0 (/usr/bin/bwrap), seccomp filter", for reports.
    std::string description() const;
    // The seccomp filter as BPF (what bwrap's --seccomp reads); empty, with filter_error()
    // saying why, where none could be built (no libseccomp): then nothing runs in this sandbox.
    const std::string& filter() const { return filter_; }
    const std::string& filter_error() const { return filter_error_; }

    // bwrap's --seccomp descriptor when the program gets none beyond the standard five (0-2,
    // the result channel 3, the secret 4); its --args is the next one.
    static constexpr int kFilterDescriptor = 5;

  private:
    SandboxSettings settings_;
    std::string filter_, filter_error_;
};

// Where bwrap is: `option` when given, else $CUDALINGS_BWRAP, else bwrap on PATH; "" when none.
std::string find_bwrap(const std::string& option);

// Where cudalings-sandbox-init is: `option` when given, else $CUDALINGS_SANDBOX_INIT, else
// beside this program's executable (cudalings, cudalings-runner), else where the build put it;
// "" when none of them is an executable.
std::string find_sandbox_init(const std::string& option);

// A sandbox that works here: bwrap and the init found, the seccomp filter built, and a trivial
// program (with the GPU's device nodes, where the machine has them) runs inside it, alone and
// under the filter. Null, with `why` saying what is missing, when it does not.
std::shared_ptr<const Sandbox> open_sandbox(const SandboxSettings& settings, std::string& why);

// run_supervised, inside `sandbox` when it is not null. The result reads as if the program had
// run directly: the sandbox's own start-up failure is a start_error, and a death by signal (which
// bwrap reports as exit code 128 + n) is a signal again.
ChildResult run_contained(const Sandbox* sandbox, const std::vector<std::string>& argv,
                          ChildOptions options, const SandboxView& view);

// A runner's view: every absolute path on its command line (the runner, the step's object, the
// reference, a sanitizer) is a file it reads, and so are the shared libraries beside the runner
// (the emulator's runtime).
SandboxView runner_view(const std::vector<std::string>& argv, bool gpu);

// Where a tool is installed, when that is outside the system directories every sandbox sees
// (/opt/cuda for /opt/cuda/bin/nvcc); "" when the system directories already hold it.
std::string install_root(const std::string& program);

// A directory of its own under `parent` (mkdtemp), removed with everything in it when the
// object goes away: where a build writes its outputs, so that its sandbox needs no other
// writable place (and sees no other build's files).
class PrivateDir {
  public:
    explicit PrivateDir(const std::string& parent);
    ~PrivateDir();
    PrivateDir(const PrivateDir&) = delete;
    PrivateDir& operator=(const PrivateDir&) = delete;
    const std::string& path() const { return path_; }  // "" when it could not be made
    bool ok() const { return !path_.empty(); }

  private:
    std::string path_;
};

}  // namespace cudalings
