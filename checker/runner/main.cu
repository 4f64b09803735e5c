// cudalings-runner: the child process that runs a learner's step on the GPU (cudalings-runner-emu:
// the same program on the CPU emulator; program.h says what its two backends do).
//
// It is started by the checker, never by the learner. It loads the learner's shared object,
// runs the lesson's cases and (when asked) the timing, and reports each result as one JSON
// line on file descriptor 3. The checker decides verdicts; this process only measures.
//
// A lesson's checks are a plugin (checks/NN_topic/checks.cu, built by the checker): loading it
// registers its problems (see checker/kit/problem.h).
//
//   cudalings-runner probe
//   cudalings-runner copy-bandwidth
//   cudalings-runner fp32-rate
//   cudalings-runner list --checks CHECKS.so
//   cudalings-runner check --checks CHECKS.so --problem NAME --step FILE.so
//                          [--reference FILE.so] --seed HEX [--first-case K] [--time]
//                          [--timed-size N] [--max-n N] [--exact-inputs]
//                          [--learner cudalings-learner --shims SHIMS.so]
//       with --learner: the judge split (split.h). The step is never loaded here:
//       a learner's process loads it and makes the calls on memory this process lends it
//   cudalings-runner baseline --checks CHECKS.so --baselines BASELINES.so --problem NAME
//                             --name BASELINE --seed HEX [--timed-size N]
//   cudalings-runner profile --checks CHECKS.so --problem NAME --step FILE.so --seed HEX
//                            [--timed-size N] [--column NAME]
//       one warm-up call, then one timed call between cudaProfilerStart and cudaProfilerStop
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "../core/course/hash.h"
#include "../core/run/protocol.h"
#include "../core/run/seccomp_filter.h"
#include "driver.h"
#include "kit.h"
#include "program.h"
#include "split.h"
#include "timing.h"

using nlohmann::json;
using namespace cudalings;

namespace runner {
namespace {

int channel_fd = -1;
// The key that authenticates our lines (see cudalings::line_tag): read from fd 4, which is
// closed before the learner's library is loaded.
unsigned char channel_key[16];
bool have_key = false;
std::uint64_t channel_sequence = 0;

void read_channel_key() {
    if (fcntl(4, F_GETFD) == -1) return;
    char hex[64];
    ssize_t got = ::read(4, hex, sizeof hex);
    ::close(4);
    have_key = got >= 32 && cudalings::key_from_hex(std::string_view(hex, 32), channel_key);
}

// Milliseconds since the runner started: every event carries it, so the checker can say
// where a check's time went (start-up, cases, timing).
double elapsed_ms() {
    static const auto start = std::chrono::steady_clock::now();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
        .count();
}

}  // namespace

void emit(json j) {
    j["t_ms"] = elapsed_ms();
    std::string line = j.dump(-1, ' ', false, json::error_handler_t::replace);
    if (have_key) line += "\t" + cudalings::line_tag(channel_key, channel_sequence++, line);
    line += "\n";
    int fd = channel_fd >= 0 ? channel_fd : 1;
    const char* p = line.data();
    std::size_t left = line.size();
    while (left > 0) {
        ssize_t wrote = ::write(fd, p, left);
        if (wrote <= 0) return;
        p += wrote;
        left -= static_cast<std::size_t>(wrote);
    }
}

void emit_event(Marker m) { emit(marker(m)); }
void emit_message(Message kind, const std::string& message) {
    emit(event_json(MessageEvent{name(kind), message}));
}

// What a learner-facing CUDA error usually means.
std::string explain(cudaError_t e) {
    switch (e) {
        case cudaErrorIllegalAddress:
            return "a thread read or wrote memory outside every allocation: check the bounds "
                   "test and the index arithmetic";
        case cudaErrorMisalignedAddress:
            return "a load or store at an address that is not a multiple of its size (a float4 "
                   "needs 16-byte alignment)";
        case cudaErrorInvalidConfiguration:
            return "the launch configuration is invalid: a block of more than 1024 threads, a "
                   "grid dimension of 0 or over its limit (gridDim.y and gridDim.z at most "
                   "65,535), or too much shared memory";
        case cudaErrorInvalidValue:
            return "a CUDA call got an invalid argument (a launch with 0 blocks or threads?)";
        case cudaErrorAssert:
            return "a device-side assert() failed";
        case cudaErrorLaunchFailure:
        case cudaErrorIllegalInstruction:
            return "the kernel stopped with an exception (a __trap()?)";
        case cudaErrorInvalidDeviceFunction:
        case cudaErrorNoKernelImageForDevice:
            return "no code for this GPU in the built file";
        default:
            return dev::error_text(e);
    }
}

// After a learner's error, can this process still use the GPU?
bool context_usable() {
    if (dev::sync_device_status() != cudaSuccess) return false;
    (void)dev::take_last_error();
    void* p = nullptr;
    if (cudaMalloc(&p, 256) != cudaSuccess) return false;
    cudaFree(p);
    return dev::sync_device_status() == cudaSuccess;
}
void* load_symbol(const std::string& path, const char* symbol, std::string* error) {
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char* e = dlerror();
        *error = e ? e : "dlopen failed";
        return nullptr;
    }
    void* fn = dlsym(handle, symbol);
    if (!fn) *error = std::string("the file does not define extern \"C\" ") + symbol;
    return fn;
}

void set_size(CaseResult& result, const kit::Case& c) {
    result.n = c.n();
    result.size = c.shape.text();
    result.rows = c.shape.two_d ? c.shape.rows : 0;
    result.cols = c.shape.two_d ? c.shape.cols : 0;
}

}  // namespace runner

namespace {

using namespace runner;

int probe() {
    dev::Properties p = dev::probe();
    ProbeEvent e;
    if (p.count == 0) {
        e.error = p.error == cudaSuccess ? "none" : dev::error_name(p.error);
        e.message = p.error == cudaSuccess
                        ? "no CUDA device found"
                        : std::string(dev::error_name(p.error)) + ": " + dev::error_text(p.error);
        emit(event_json(e));
        return 0;
    }
    e.gpus = p.count;
    e.name = p.name;
    e.arch = "sm_" + std::to_string(p.major) + std::to_string(p.minor);
    e.sms = p.sms;
    e.l2_bytes = p.l2_bytes;
    e.memory_bytes = p.global_bytes;
    e.uuid = p.uuid;
    e.driver = p.driver_version;
    e.runtime = p.runtime_version;
    emit(event_json(e));
    return 0;
}

// A rate of this GPU, measured once per GPU by the checker (copy-bandwidth, fp32-rate):
// `measure` fills the event on a stream of its own; the GPU's name and UUID are added here.
template <typename Event, typename Measure>
int gpu_rate(Measure measure) {
    dev::Properties p = dev::probe();
    if (p.count == 0) {
        emit_message(Message::InternalError, "no GPU");
        return 1;
    }
    cudaStream_t s = dev::create_stream();
    Event e;
    measure(s, p, e);
    e.uuid = p.uuid;
    e.name = p.name;
    emit(event_json(e));
    dev::destroy_stream(s);
    return 0;
}

int copy_bandwidth() {
    return gpu_rate<CopyBandwidthEvent>(
        [](cudaStream_t s, const dev::Properties& p, CopyBandwidthEvent& e) {
            e.gbps = runner::measure_copy_bandwidth(s, p.l2_bytes, &e.median_us);
            e.bytes = 2.0 * double(std::size_t{1} << 30);
        });
}

int fp32_rate() {
    return gpu_rate<Fp32RateEvent>([](cudaStream_t s, const dev::Properties& p, Fp32RateEvent& e) {
        e.gflops = runner::measure_fp32_rate(s, p.sms, &e.median_us, &e.operations);
    });
}

// Loads a lesson's checks (their static initializers register problems and baselines).
bool load_plugin(const std::string& path) {
    if (dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL)) return true;
    const char* e = dlerror();
    emit_message(Message::InternalError,
                 "the lesson's checks cannot be loaded: " + std::string(e ? e : path));
    return false;
}

const kit::ProblemInfo* find_problem(const CheckArgs& args) {
    if (!load_plugin(args.checks)) return nullptr;
    const kit::ProblemInfo* p = kit::find_problem(args.problem);
    if (!p)
        emit_message(Message::InternalError, "the lesson's checks have no problem " + args.problem);
    return p;
}

int list(const CheckArgs& args) {
    if (!load_plugin(args.checks)) return 1;
    if (!args.baselines.empty() && !load_plugin(args.baselines)) return 1;
    ChecksListing out;
    for (const kit::ProblemInfo* p : kit::all_problems()) {
        ProblemListing l;
        l.name = p->name;
        l.symbol = p->symbol;
        l.cases = static_cast<int>(p->cases().size());
        const auto timed = p->timed ? p->timed() : std::vector<kit::Case>{};
        l.timed = static_cast<int>(timed.size());
        for (const auto& c : timed) l.timed_columns.push_back(c.column);
        out.problems.push_back(l);
    }
    for (const kit::Baseline* b : kit::all_baselines())
        out.baselines.emplace_back(b->problem, b->name);
    emit(event_json(out));
    return 0;
}

// Before the learner's code is loaded, this process confines itself as the learner's process of
// the judge split does (core/run/seccomp_filter.h): no capabilities, and no ptrace, no
// process_vm_*, no signals to any other process (its checker), no namespaces... Not under a
// sanitizer or a profiler, whose tools work inside this process. Where the filter cannot be
// installed (a build without libseccomp) the check goes on as before.
void confine_before_loading() {
    const seccomp::Confinement c = seccomp::confine_self();
    if (!c.filtered) emit_message(Message::Note, "no seccomp filter: " + c.why);
}

// The judge split: the learner's process loads the step (and is confined there, before any of
// the learner's code runs); this process keeps the checks, the key and the reference.
constexpr int kClockProbes = 25;

int start_learner(const CheckArgs& args, LoadedStep& out) {
    out.split = backend::take_early_learner();
    if (!out.split) out.split = std::make_unique<runner::Split>();
    std::string why;
    bool learner_fault = false;
    emit_event(Marker::StepLoading);
    runner::Split::Start how;
    how.learner = args.learner;
    how.step = args.step;
    how.shims = args.shims;
    how.symbol = out.problem->symbol;
    // A timed check: the judge's clock is probed before the learner's code is loaded, each probe
    // after a cold L2 as every timed call is (the learner's events are then checked against it).
    if (args.time) {
        how.probes = kClockProbes;
        how.before_probe = runner::cold_l2(out.stream, out.props.l2_bytes);
        how.after_probe = [stream = out.stream] { runner::gpu_turn(stream); };
    }
    const bool started = out.split->start(how, &why, &learner_fault);
    emit_event(Marker::StepLoaded);
    if (started && !seccomp::available())
        emit_message(Message::Warning,
                     "this checker was built without libseccomp, so your step ran without its "
                     "seccomp filter (code of yours could signal the checker); install "
                     "libseccomp-dev and run the command again to rebuild the checker with it");
    if (started) {
        out.split->on_returning([] { emit_event(Marker::CallEnd); });
        backend::learner_started(*out.split);
        out.fn = kit::remote::learner_entry();
        return -1;
    }
    if (learner_fault) {  // ended by the learner's own code (a constructor, an initialiser)
        const cudalings::LearnerState& st = out.split->state();
        emit(event_json(CasesEvent{1, out.problem->name, out.problem->advice}));
        emit(event_json(cudalings::ended_around_loading(
            false, cudalings::describe_exit(st.signal, st.exit_code))));
        emit_event(Marker::Done);
        return 0;
    }
    if (!out.split->state().message.empty()) {
        emit_message(Message::LoadError, out.split->state().message);
        return 0;
    }
    emit_message(Message::InternalError, "the learner's process did not start: " + why);
    return 1;
}

// What `check` and `profile` start from (LoadedStep). Returns -1 when all is there, else the
// runner's exit code (after saying why).
int load_step(const CheckArgs& args, LoadedStep& out, bool confine) {
    out.problem = find_problem(args);
    if (!out.problem) return 1;
    out.props = dev::probe();
    if (out.props.count == 0) {
        emit_message(Message::InternalError, "no GPU");
        return 1;
    }
    out.stream = dev::create_stream();
    if (!args.learner.empty()) return start_learner(args, out);
    std::string error;
    // Between these two the learner's code runs for the first time (its constructors and
    // static initialisers): a process that ends there ended by the learner's hand.
    if (confine) confine_before_loading();
    emit_event(Marker::StepLoading);
    out.fn = load_symbol(args.step, out.problem->symbol.c_str(), &error);
    emit_event(Marker::StepLoaded);
    if (!out.fn) {
        emit_message(Message::LoadError, error);
        return 0;
    }
    return -1;
}

// The name of the launch-only case (the emulated backend's, program.h): its shapes.
std::string launch_only_name(const std::vector<kit::Case>& sizes) {
    std::vector<std::string> shapes;
    for (const auto& c : sizes)
        if (std::find(shapes.begin(), shapes.end(), c.shape.text()) == shapes.end())
            shapes.push_back(c.shape.text());
    std::string name = "launches only:";
    for (const auto& shape : shapes) name += (name.back() == ':' ? " " : ", ") + shape;
    return name;
}

// A case left out because an earlier one failed (the larger emulated cases need all to pass).
void emit_not_run(int index, const std::string& name, const kit::Case& c) {
    CaseResult skipped;
    skipped.index = index;
    skipped.name = name;
    skipped.n = c.n();
    skipped.size = c.shape.text();
    skipped.verdict = Verdict::Skipped;
    skipped.reason = "not run: a smaller case already failed";
    emit(event_json(skipped));
}

// After a learner's CUDA error: can the learner's step still be called (in this process, or in
// the learner's own)?
bool learner_usable(const LoadedStep& step) {
    if (step.split) return step.split->learner_context_ok();
    return context_usable();
}

int check(const CheckArgs& args) {
    LoadedStep step;
    if (int code = load_step(args, step, !args.exact_inputs); code >= 0) return code;
    const kit::ProblemInfo* problem = step.problem;
    const dev::Properties& props = step.props;
    cudaStream_t stream = step.stream;
    void* fn = step.fn;
    void* reference = nullptr;
    // Through the judge split on a GPU the reference is timed in a process of its own
    // (backend::timing, once the cases have passed); in this process only when the learner's
    // step is here too.
    if (!args.reference.empty() && !step.split) {
        std::string ref_error;
        reference = load_symbol(args.reference, problem->symbol.c_str(), &ref_error);
        if (!reference) {
            std::fprintf(stderr, "cudalings-runner: the reference did not load: %s\n",
                         ref_error.c_str());
            emit_message(Message::Warning,
                         "the reference solution could not be loaded: your step was timed "
                         "without it (no comparison with the reference)");
        }
    }
    runner::Driver driver(*problem, stream, [](Marker e) { emit_event(e); });
    auto cases = driver.cases(args.max_n);
    // Emulation's larger case (--large-n), last: it runs only when every smaller case passed,
    // for its values, with the emulator's race checks off (bounds stay on), as those cost more
    // than a million threads can afford. It catches what only larger sizes reach (a grid, a last
    // pass or a second level sized for the small cases).
    std::size_t large_at = cases.size();
    if (args.large_n)
        if (auto large = driver.large_case(args.max_n, args.large_n)) cases.push_back(*large);
    // Then, under emulation, the sizes above that for their launches only (backend_emu.cu).
    const std::vector<kit::Case> launch_sizes = backend::launch_only_cases(driver, args);
    const int total = static_cast<int>(cases.size() + (launch_sizes.empty() ? 0 : 1));
    emit(event_json(CasesEvent{total, problem->name, problem->advice, problem->sampled_values}));
    bool all_passed = true;
    bool values_passed = true;  // every case passed, or the larger one was too slow to emulate
    // --larger only: the larger sizes alone, as if every smaller case had passed (the checker
    // keeps their results only when all did).
    const std::size_t first =
        args.larger == "only" ? large_at : static_cast<std::size_t>(args.first_case);
    for (std::size_t i = first; i < cases.size(); ++i) {
        const kit::Case& c = cases[i];
        if (i == large_at && args.larger == "defer") break;
        if (i == large_at && !(all_passed && (args.first_case == 0 || args.larger == "only"))) {
            emit_not_run(static_cast<int>(i), c.label(), c);
            break;
        }
        if (i == large_at) backend::large_case_starting();
        emit(event_json(CaseStartEvent{static_cast<int>(i), c.label(), c.n(), c.shape.text()}));
        // One run of the case (run again below, with the race checks on, where its values failed).
        int internal_error = 0;  // the runner's own failure: it ends with exit code 1
        const auto attempt = [&](CaseResult& result, bool& stop) {
            stop = false;
            result.index = static_cast<int>(i);
            result.name = c.label();
            set_size(result, c);
            backend::case_starting(result);
            std::string runner_failed;  // the runner's own call failed (see below)
            try {
                result = driver.run_case(static_cast<int>(i), c, fn, args.seed, args.exact_inputs);
            } catch (const runner::LearnerError& e) {
                result.verdict = Verdict::Crash;
                result.reason = dev::error_name(e.code);
                result.detail = std::string(e.returned ? "returned by your function: "
                                                       : "raised by your kernel: ") +
                                explain(e.code);
                stop = !learner_usable(step);
            } catch (const runner::LearnerGone& e) {
                result.verdict = Verdict::Crash;
                result.reason = e.reason;
                result.detail =
                    e.why +
                    ": your code, in a call of your function (exit(), abort(), a crash in "
                    "host code, a signal)";
                stop = true;
            } catch (const dev::Error& e) {
                // The runner's own call failed after the learner's code ran: a sticky error the
                // learner's kernel left behind is the usual cause.
                result.verdict = Verdict::Crash;
                result.reason = dev::error_name(e.code);
                result.detail = explain(e.code);
                stop = !context_usable();
                // Else the runner's own failure, unless (under emulation) the case's time budget
                // ran out in the runner's own kernels (its guards and checks of the outputs run
                // on the emulated device too): the backend's "too slow" below decides then, as
                // for the learner's kernels.
                if (!stop) runner_failed = e.what();
            }
            backend::attach_findings(result);
            if (!runner_failed.empty() && !backend::too_slow(result)) {
                emit_message(Message::InternalError, runner_failed);
                internal_error = 1;
                return;
            }
            // The larger case may be beyond what the emulator can run in its time: not a verdict.
            if (i == large_at && backend::too_slow(result)) {
                result.verdict = Verdict::Skipped;
                result.reason = "not checked: too slow to emulate at this size (a GPU runs it)";
            }
        };
        CaseResult result;
        bool stop = false;
        attempt(result, stop);
        if (internal_error) return internal_error;
        // The larger case's values are wrong, and it ran without the race checks: run it once
        // more with them, so that a race only this size reaches (a second tile in a chunk, say)
        // is named with its lines instead of "values" alone. Too slow, or nothing found (or no
        // race checks: a GPU): the values' verdict stands.
        CaseResult again;
        bool stop_again = false;
        if (i == large_at && result.verdict == Verdict::Wrong && !stop &&
            backend::rerun_with_race_checks([&] { attempt(again, stop_again); })) {
            if (internal_error) return internal_error;
            if (again.verdict == Verdict::MemoryError) {
                again.detail =
                    "(the values were wrong; this case, run again with the race "
                    "checks on, shows why)\n" +
                    again.detail;
                result = again;
                stop = stop_again;
            }
        }
        all_passed = all_passed && result.verdict == Verdict::Pass;
        values_passed = values_passed && (result.verdict == Verdict::Pass ||
                                          (i == large_at && result.verdict == Verdict::Skipped));
        emit(event_json(result));
        if (stop) {
            emit(event_json(AbortEvent{result.reason}));
            return 0;
        }
    }
    if (!launch_sizes.empty() && args.larger != "defer") {
        const int index = static_cast<int>(cases.size());
        if (values_passed && (args.first_case == 0 || args.larger == "only"))
            backend::launch_only(driver, launch_sizes, index, launch_only_name(launch_sizes), fn,
                                 args, *problem, step.split != nullptr);
        else
            emit_not_run(index, launch_only_name(launch_sizes), launch_sizes.back());
    }
    if (args.time && args.first_case == 0 && all_passed) {
        emit_event(Marker::TimingStart);
        const backend::Timing timing = backend::timing(args, step, reference);
        try {
            for (const kit::Case& c : driver.timed_cases(args.timed_size)) {
                emit(event_json(driver.time_case(
                    c, fn, timing.reference, args.seed ^ 0x7157ull, props.l2_bytes,
                    [] { emit_event(Marker::Tick); }, timing.apart_or_null())));
            }
        } catch (const runner::LearnerError& e) {
            emit(event_json(TimingErrorEvent{dev::error_name(e.code), explain(e.code)}));
            return 0;
        } catch (const runner::LearnerGone& e) {
            emit(event_json(TimingErrorEvent{e.reason, e.why}));
            return 0;
        }
        backend::timing_over(step);
    }
    emit_event(Marker::Done);
    dev::destroy_stream(stream);
    return 0;
}

// Times a library baseline of a problem alone (every timed case), and verifies its output.
int baseline(const CheckArgs& args) {
    const kit::ProblemInfo* problem = find_problem(args);
    if (!problem || !load_plugin(args.baselines)) return 1;
    const kit::Baseline* b = kit::find_baseline(args.problem, args.baseline);
    if (!b) {
        emit_message(Message::InternalError,
                     "problem " + args.problem + " has no baseline " + args.baseline);
        return 1;
    }
    dev::Properties props = dev::probe();
    if (props.count == 0) {
        emit_message(Message::InternalError, "no GPU");
        return 1;
    }
    cudaStream_t stream = dev::create_stream();
    runner::Driver driver(*problem, stream, [](Marker e) { emit_event(e); });
    emit_event(Marker::TimingStart);
    for (const kit::Case& c : driver.timed_cases(args.timed_size))
        emit(event_json(driver.time_case(c, b->fn, nullptr, args.seed, props.l2_bytes,
                                         [] { emit_event(Marker::Tick); })));
    emit_event(Marker::Done);
    dev::destroy_stream(stream);
    return 0;
}

// One timed call of the step on one timed case (the one of `--column`, else the first), after a
// warm-up call, with the profiler on around that call only: every kernel the call launches is
// profiled, the warm-up's, the fresh inputs' and the L2 flush's are not. `begin` and `end`: the
// backend's profiler range (program.h).
int profile(const CheckArgs& args, const std::function<void()>& begin,
            const std::function<void()>& end) {
    LoadedStep step;
    if (int code = load_step(args, step, false); code >= 0) return code;
    const kit::ProblemInfo* problem = step.problem;
    const dev::Properties& props = step.props;
    cudaStream_t stream = step.stream;
    void* fn = step.fn;
    runner::Driver driver(*problem, stream, [](Marker e) { emit_event(e); });
    const auto timed = driver.timed_cases(args.timed_size);
    const kit::Case* chosen = nullptr;
    std::string columns;
    for (const kit::Case& c : timed) {
        if (!chosen && (args.column.empty() || c.column == args.column)) chosen = &c;
        columns += (columns.empty() ? "" : ", ") + (c.column.empty() ? c.label() : c.column);
    }
    if (!chosen) {
        emit_message(Message::UsageError, timed.empty()
                                              ? "problem " + problem->name + " has no timed case"
                                              : "no timed case has the column \"" + args.column +
                                                    "\"; its columns: " + columns);
        return 0;
    }
    emit_event(Marker::TimingStart);
    try {
        emit(event_json(
            driver.profile_case(*chosen, fn, args.seed ^ 0x7157ull, props.l2_bytes, begin, end)));
    } catch (const runner::LearnerError& e) {
        emit(event_json(TimingErrorEvent{dev::error_name(e.code), explain(e.code)}));
        return 0;
    }
    emit_event(Marker::Done);
    dev::destroy_stream(stream);
    return 0;
}

[[noreturn]] void usage(const char* why) {
    std::fprintf(
        stderr,
        "cudalings-runner: %s\n"
        "usage: cudalings-runner probe | copy-bandwidth | fp32-rate | list --checks CHECKS.so\n"
        "       check --checks CHECKS.so --problem NAME --step FILE.so "
        "[--reference FILE.so] --seed HEX [--first-case K] [--time] [--timed-size N] "
        "[--max-n N] [--large-n N [--larger defer|only]] [--exact-inputs]\n"
        "       baseline --checks CHECKS.so --baselines BASELINES.so --problem NAME "
        "--name BASELINE --seed HEX [--timed-size N]\n"
        "       profile --checks CHECKS.so --problem NAME --step FILE.so --seed HEX "
        "[--timed-size N] [--column NAME]\n"
        "(the runner is started by `cudalings check`; results go to fd 3)\n",
        why);
    std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
    elapsed_ms();  // the clock starts here
    if (fcntl(3, F_GETFD) != -1) channel_fd = 3;
    // The judge of the judge split holds its key and checks away from the learner's process:
    // not dumpable, so no process of the same user opens its /proc/<pid>/mem, environ or fds.
    for (int i = 1; i < argc; ++i)
        if (std::strcmp(argv[i], "--learner") == 0) ::prctl(PR_SET_DUMPABLE, 0);
    // A check starts CUDA before it takes its key (on a GPU): the checker may start this process
    // while the step is still being built and hold the key back until the build is done, so the
    // context's creation (a fifth of a second) overlaps the build. The judge split's learner's
    // process is started before that, and makes its context at the same time.
    backend::before_key(argc, argv);
    read_channel_key();
    if (argc < 2) usage("no command");
    std::string command = argv[1];
    try {
        if (command == "probe") return probe();
        if (command == "copy-bandwidth") return copy_bandwidth();
        if (command == "fp32-rate") return fp32_rate();
        if (command != "check" && command != "baseline" && command != "list" &&
            command != "profile")
            usage("unknown command");
        CheckArgs args;
        for (int i = 2; i < argc; ++i) {
            std::string a = argv[i];
            auto value = [&]() -> std::string {
                if (i + 1 >= argc) usage(("missing value after " + a).c_str());
                return argv[++i];
            };
            if (a == "--checks")
                args.checks = value();
            else if (a == "--baselines")
                args.baselines = value();
            else if (a == "--problem")
                args.problem = value();
            else if (a == "--timed-size")
                args.timed_size = std::strtoull(value().c_str(), nullptr, 10);
            else if (a == "--exact-inputs")
                args.exact_inputs = true;
            else if (a == "--step")
                args.step = value();
            else if (a == "--reference")
                args.reference = value();
            else if (a == "--seed")
                args.seed = std::strtoull(value().c_str(), nullptr, 16);
            else if (a == "--first-case")
                args.first_case = std::atoi(value().c_str());
            else if (a == "--time")
                args.time = true;
            else if (a == "--name")
                args.baseline = value();
            else if (a == "--column")
                args.column = value();
            else if (a == "--max-n")
                args.max_n = std::strtoull(value().c_str(), nullptr, 10);
            else if (a == "--large-n")
                args.large_n = std::strtoull(value().c_str(), nullptr, 10);
            else if (a == "--larger")
                args.larger = value();
            else if (a == "--learner")
                args.learner = value();
            else if (a == "--shims")
                args.shims = value();
            else
                usage(("unknown option " + a).c_str());
        }
        if (args.checks.empty()) usage("the lesson's checks are needed: --checks");
        if (!args.larger.empty() && args.larger != "defer" && args.larger != "only")
            usage("--larger is defer or only");
        if (command == "list") return backend::leave(list(args));
        if (command == "baseline") {
            if (args.problem.empty() || args.baseline.empty() || args.baselines.empty())
                usage("baseline needs --problem, --baselines and --name");
            return backend::leave(baseline(args));
        }
        if (args.problem.empty() || args.step.empty())
            usage((command + " needs --problem and --step").c_str());
        if (!args.learner.empty() &&
            (args.shims.empty() || command != "check" || args.exact_inputs))
            usage("--learner needs --shims, and is for check only (not with --exact-inputs)");
        if (command == "profile") {
            std::function<void()> begin, end;
            if (!backend::profiler(&begin, &end)) usage("profile needs the GPU runner");
            // The ordinary exit: the profiler's own tear-down runs (its results are complete)
            return profile(args, begin, end);
        }
        return backend::leave(check(args));
    } catch (const dev::Error& e) {
        emit_message(Message::InternalError, e.what());
        return 1;
    } catch (const std::exception& e) {
        emit_message(Message::InternalError, e.what());
        return 1;
    }
}
