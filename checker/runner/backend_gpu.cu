// The runner's GPU backend (cudalings-runner, program.h): the CUDA runtime on a GPU. A check's
// learner's process (and, timed, the reference's) and this process's CUDA runtime start before
// the channel's key is read, so that their contexts are made while the checker still builds the
// step; a timed check through the judge split times the reference in a process of its own, in
// phases apart from the learner's (timing.h, Apart); `profile` brackets one call with the
// profiler's range.
#include <cuda_profiler_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "gpu_processes.h"
#include "program.h"

using namespace cudalings;

namespace runner {
namespace {

// On a GPU the learner's process is started first thing (launch_learner_early, from main), so
// that its CUDA context is made while this process makes its own and the step is still being
// built; start_learner() takes it from here.
std::unique_ptr<Split> early_learner;
// A timed check with a reference: the reference's process (the same program, the solution's
// object), started at the same time, timed apart from the learner's (runner/timing.h, Apart).
std::unique_ptr<Split> early_reference;

void launch_learner_early(int argc, char** argv) {
    Split::Start how;
    std::string reference;
    bool timed = false;
    for (int i = 2; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--time") timed = true;
        if (i + 1 >= argc) continue;
        if (a == "--learner") how.learner = argv[i + 1];
        if (a == "--step") how.step = argv[i + 1];
        if (a == "--shims") how.shims = argv[i + 1];
        if (a == "--reference") reference = argv[i + 1];
        if (a == "--exact-inputs") return;  // refused below, with the usage
    }
    if (how.learner.empty() || how.step.empty() || how.shims.empty()) return;
    early_learner = std::make_unique<Split>();
    std::string why;
    if (!early_learner->launch(how, &why)) early_learner.reset();  // start_learner tries again
    if (timed && !reference.empty()) {
        how.step = reference;
        early_reference = std::make_unique<Split>(Split::Role::Reference);
        if (!early_reference->launch(how, &why)) early_reference.reset();
    }
}

// A process of a timed check's Apart (the reference's, or a learner's for a timed phase): the
// learner's program with `object`, no probes (the first learner's process made them), replies
// polled.
Split::Start timing_process(const CheckArgs& args, const LoadedStep& step,
                            const std::string& object) {
    Split::Start how;
    how.learner = args.learner;
    how.step = object;
    how.shims = args.shims;
    how.symbol = step.problem->symbol;
    how.spin = true;
    return how;
}

// A learner's process started for the next timed phase, its object not loaded yet.
bool idle_learner(const LoadedStep& step) {
    return step.split && !step.split->loaded() && !step.split->state().ended;
}

// The reference's process of a timed check through the judge split (launched early with the
// learner's): ready, its object loaded, the route of the reference's calls. Null (with a
// warning: the step is then timed without a reference) when it did not get there.
std::unique_ptr<Split> start_reference(const CheckArgs& args, const LoadedStep& step) {
    std::unique_ptr<Split> r = early_reference ? std::move(early_reference)
                                               : std::make_unique<Split>(Split::Role::Reference);
    const Split::Start how = timing_process(args, step, args.reference);
    std::string why;
    bool fault = false;
    if (!r->start(how, &why, &fault)) {
        // The note goes to the learner (and, graded, to the student): no paths in it. Why, for
        // whoever runs the checker, on this process's stderr.
        std::fprintf(stderr, "cudalings-runner: the reference's process did not start: %s\n",
                     why.c_str());
        emit_message(Message::Warning,
                     "the reference solution could not be started in a process of its own: your "
                     "step was timed without it (no comparison with the reference)");
        return nullptr;
    }
    return r;
}

// Processes on the GPU that are none of the judge's own, -1 when NVML cannot tell: this one, the
// reference's, and a learner's process whose object is not loaded (started for the next phase:
// it may have made its context or not yet).
int others_on_gpu(const LoadedStep& step) {
    const int n = compute_processes_on_gpu();
    if (n < 2) return -1;  // a list missing some of ours cannot be trusted
    return std::max(0, n - 2 - (idle_learner(step) ? 1 : 0));
}

// The learner's side of Apart: each learner phase in a fresh process, started (making its CUDA
// context) while the reference is timed, its object loaded only once that phase is over.
Apart apart_from(const CheckArgs& args, LoadedStep& step) {
    Apart a;
    const Split::Start how = timing_process(args, step, args.step);
    a.learner_away = [how, &step] {
        if (idle_learner(step)) return;
        const kit::remote::Route figures = step.split->route();
        step.split->finish();
        // The ended process's context goes with it, in the driver, soon after: wait for that (at
        // most a second) before the next one starts, so that the count tells them apart.
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
        while (compute_processes_on_gpu() > 2 && std::chrono::steady_clock::now() < until)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        auto next = std::make_unique<Split>();
        next->take_clock_figures(figures);
        std::string why;
        if (!next->launch(how, &why))
            throw dev::Error(cudaErrorUnknown, "the learner's next process did not start: " + why);
        step.split = std::move(next);
    };
    a.learner_back = [how, &step] {
        std::string why;
        bool fault = false;
        if (!step.split->ready(how, &why))
            throw dev::Error(cudaErrorUnknown, "the learner's next process did not start: " + why);
        if (!step.split->load(how, &why, &fault)) {
            const cudalings::LearnerState& st = step.split->state();
            throw LearnerGone{
                fault ? why
                      : "the process running your code for its timing did not load it: " + why,
                cudalings::describe_exit(st.signal, st.exit_code)};
        }
        step.split->on_returning([] { emit_event(Marker::CallEnd); });
    };
    a.others_on_gpu = [&step] { return others_on_gpu(step); };
    return a;
}

}  // namespace

void backend::before_key(int argc, char** argv) {
    if (argc < 2 || std::string(argv[1]) != "check") return;
    launch_learner_early(argc, argv);
    dev::start_runtime();
}

std::unique_ptr<Split> backend::take_early_learner() { return std::move(early_learner); }
void backend::learner_started(Split&) {}

// Every size runs whole on a GPU: none is checked for its launches only.
std::vector<kit::Case> backend::launch_only_cases(const Driver&, const CheckArgs&) { return {}; }
void backend::launch_only(Driver&, const std::vector<kit::Case>&, int, const std::string&, void*,
                          const CheckArgs&, const kit::ProblemInfo&, bool) {
    throw std::logic_error("the GPU's backend has no launch-only sizes");
}

void backend::case_starting(const CaseResult&) {}
void backend::large_case_starting() {}
void backend::attach_findings(CaseResult&) {}
bool backend::too_slow(const CaseResult&) { return false; }
bool backend::rerun_with_race_checks(const std::function<void()>&) { return false; }

backend::Timing backend::timing(const CheckArgs& args, LoadedStep& step, void* loaded) {
    Timing t;
    t.reference = loaded;
    if (!step.split || args.reference.empty()) return t;
    t.process = start_reference(args, step);
    if (!t.process) return t;
    t.reference = kit::remote::reference_entry();
    t.apart = apart_from(args, step);
    return t;
}

// The process Apart started for a phase that did not come holds nothing of the learner's:
// killed, not waited for.
void backend::timing_over(LoadedStep& step) {
    if (idle_learner(step)) step.split->finish(0);
}

bool backend::profiler(std::function<void()>* begin, std::function<void()>* end) {
    *begin = [] { DEV_CHECK(cudaProfilerStart()); };
    *end = [] { DEV_CHECK(cudaProfilerStop()); };
    return true;
}

// After a check has said everything on the channel, leave without the CUDA runtime's orderly
// tear-down of the context: the driver releases the same resources when the process ends. (A
// check without a sandbox reports once it has read "done" and does not wait for this exit; a
// sandboxed one, grading's, waits for it, so there the exit is part of the time to verdict.)
int backend::leave(int code) {
    std::fflush(nullptr);
    std::_Exit(code);
}

}  // namespace runner
