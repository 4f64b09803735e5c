// The runner program's shared parts: its channel to the checker, its command line, a loaded step,
// and the hooks of its two backends. One program (main.cu: the commands, the case loop, timing)
// is built twice, each time with one backend:
//
//   cudalings-runner      backend_gpu.cu   the CUDA runtime on a GPU: the learner's process and
//                                          the runtime started early, the reference timed in a
//                                          process of its own (timing.h, Apart), profiling
//   cudalings-runner-emu  backend_emu.cu   the CPU emulator (its CUDA sources rewritten,
//                                          emulator/CMakeLists.txt): the emulator's findings in
//                                          each case's result, the sizes too large to emulate
//                                          checked for their launches (and sampled blocks)
//
// main.cu calls each hook at one place; the backend a build links decides what it does there.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "../core/run/protocol.h"
#include "driver.h"
#include "kit.h"
#include "split.h"

namespace runner {

// ---------------------------------------------------------------- the channel (main.cu)
// One JSON line to the checker (fd 3), tagged with the channel's key once it has one.
void emit(nlohmann::json j);
void emit_event(cudalings::Marker m);
void emit_message(cudalings::Message kind, const std::string& message);
// What a learner-facing CUDA error usually means.
std::string explain(cudaError_t e);
// After a learner's error, can this process still use the GPU?
bool context_usable();
// dlopen + dlsym of `symbol` in `path`; null with *error set when either fails.
void* load_symbol(const std::string& path, const char* symbol, std::string* error);

// ---------------------------------------------------------------- the command line
struct CheckArgs {
    std::string checks, baselines, problem, step, reference, baseline;
    std::string column;          // profile: the timed case's column ("": the first)
    std::string learner, shims;  // the judge split: the learner's process and the call shims
    std::uint64_t seed = 0;
    int first_case = 0;
    bool time = false;
    bool exact_inputs = false;  // compute-sanitizer runs: inputs without guard zones
    std::uint64_t max_n = 0;    // > 0: only cases up to this size (sanitizers, emulation)
    std::uint64_t large_n = 0;  // emulation: one values-only case up to this size (main.cu)
    // Emulation, two processes at once (the checker's CPU cores): "defer" runs the small cases
    // and leaves the larger sizes out (no events), "only" runs the larger sizes alone (the
    // values-only case, then the launches-only sizes); "" runs them all in order.
    std::string larger;
    std::uint64_t timed_size = 0;  // > 0: the size of the timed cases (a step's timed_size)
};

// What `check` and `profile` start from: the problem, the GPU, a stream and the learner's
// function (in this process, or the entry point of the learner's process of the judge split).
struct LoadedStep {
    const kit::ProblemInfo* problem = nullptr;
    dev::Properties props;
    cudaStream_t stream = nullptr;
    void* fn = nullptr;
    std::unique_ptr<Split> split;  // the learner's process, when the step runs there
};

// The case a result speaks of: its size, and its shape when 2-D.
void set_size(cudalings::CaseResult& result, const kit::Case& c);

// ---------------------------------------------------------------- the backend's hooks
namespace backend {

// main(), before the channel's key is read: the GPU's backend starts a check's learner's (and
// reference's) process and the CUDA runtime here, so that their contexts are made while the
// checker still builds the step.
void before_key(int argc, char** argv);
// The learner's process started before_key, if any (start_learner takes it from there).
std::unique_ptr<Split> take_early_learner();
// A learner's process of the judge split has loaded the step (the emulator's adapter connects
// to it here).
void learner_started(Split& split);

// The sizes checked for their launches only, after every other case (none on a GPU).
std::vector<kit::Case> launch_only_cases(const Driver& driver, const CheckArgs& args);
// Runs them as one case (its index, its name); the emulated backend only.
void launch_only(Driver& driver, const std::vector<kit::Case>& sizes, int index,
                 const std::string& name, void* fn, const CheckArgs& args,
                 const kit::ProblemInfo& problem, bool split);

// Around each case: before its run, and as the larger case (values only) starts.
void case_starting(const cudalings::CaseResult& result);
void large_case_starting();
// After a run of a case: what the backend saw during it (the emulator's races, bounds and
// deadlocks) joins the result.
void attach_findings(cudalings::CaseResult& result);
// The case was stopped because it outran what the backend can run in its time (the emulator's
// "slow"): not a verdict on the code at the larger case, and an excuse for the runner's own call
// failing after it.
bool too_slow(const cudalings::CaseResult& result);
// Runs `run` again with the race checks on (the larger case, whose values were wrong); false
// when the backend has no such checks (the GPU's), without running it.
bool rerun_with_race_checks(const std::function<void()>& run);

// A timed check's reference: in a process of its own through the judge split on a GPU (then
// `apart` is how its phases alternate with the learner's), else the function loaded here
// (`loaded`, null when none). Given once the cases have passed.
struct Timing {
    void* reference = nullptr;
    std::unique_ptr<Split> process;
    Apart apart;
    const Apart* apart_or_null() const { return process ? &apart : nullptr; }
};
Timing timing(const CheckArgs& args, LoadedStep& step, void* loaded);
// After the timed cases: a process started for a phase that never came is ended.
void timing_over(LoadedStep& step);

// The profiler's range around one call (cudaProfilerStart/Stop); false where there is none.
bool profiler(std::function<void()>* begin, std::function<void()>* end);
// How the process ends after its last line on the channel.
int leave(int code);

}  // namespace backend
}  // namespace runner
