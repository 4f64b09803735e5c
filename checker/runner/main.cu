// cudalings-runner: the child process that runs a learner's step on the GPU.
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
//       (`cudalings profile` runs it under `ncu --profile-from-start off`)
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
#include <memory>
#include <string>
#include <thread>
#include <vector>

#ifndef CUDALINGS_EMULATOR
#include <cuda_profiler_api.h>

#include "gpu_processes.h"
#endif

#include "../core/course/hash.h"
#include "../core/run/protocol.h"
#include "../core/run/seccomp_filter.h"
#include "driver.h"
#include "kit.h"
#include "split.h"
#include "timing.h"
#ifdef CUDALINGS_EMULATOR  // cudalings-runner-emu (emulator/CMakeLists.txt)
#include "emulator_adapter.h"
#endif

using nlohmann::json;
using namespace cudalings;

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

struct CheckArgs {
    std::string checks, baselines, problem, step, reference, baseline;
    std::string column;          // profile: the timed case's column ("": the first)
    std::string learner, shims;  // the judge split: the learner's process and the call shims
    std::uint64_t seed = 0;
    int first_case = 0;
    bool time = false;
    bool exact_inputs = false;  // compute-sanitizer runs: inputs without guard zones
    std::uint64_t max_n = 0;    // > 0: only cases up to this size (sanitizers, emulation)
    std::uint64_t large_n = 0;  // emulation: one values-only case up to this size (see below)
    // Emulation, two processes at once (the checker's CPU cores): "defer" runs the small cases
    // and leaves the larger sizes out (no events), "only" runs the larger sizes alone (the
    // values-only case, then the launches-only sizes); "" runs them all in order.
    std::string larger;
    std::uint64_t timed_size = 0;  // > 0: the size of the timed cases (a step's timed_size)
};

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

// What `check` and `profile` start from: the problem, the GPU, a stream and the learner's
// function. Returns -1 when all is there, else the runner's exit code (after saying why).
struct LoadedStep {
    const kit::ProblemInfo* problem = nullptr;
    dev::Properties props;
    cudaStream_t stream = nullptr;
    void* fn = nullptr;
    std::unique_ptr<runner::Split> split;  // the learner's process, when the step runs there
};
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

// On a GPU the learner's process is started first thing (launch_learner_early, from main), so
// that its CUDA context is made while this process makes its own and the step is still being
// built; start_learner() takes it from here.
std::unique_ptr<runner::Split> early_learner;
// A timed check with a reference: the reference's process (the same program, the solution's
// object), started at the same time, timed apart from the learner's (runner/timing.h, Apart).
std::unique_ptr<runner::Split> early_reference;

void launch_learner_early(int argc, char** argv) {
    runner::Split::Start how;
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
    early_learner = std::make_unique<runner::Split>();
    std::string why;
    if (!early_learner->launch(how, &why)) early_learner.reset();  // start_learner tries again
    if (timed && !reference.empty()) {
        how.step = reference;
        early_reference = std::make_unique<runner::Split>(runner::Split::Role::Reference);
        if (!early_reference->launch(how, &why)) early_reference.reset();
    }
}

int start_learner(const CheckArgs& args, LoadedStep& out) {
    out.split = early_learner ? std::move(early_learner) : std::make_unique<runner::Split>();
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
#ifdef CUDALINGS_EMULATOR
        runner::connect_learner(*out.split);
#endif
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

// The case a result speaks of: its size, and its shape when 2-D.
void set_size(CaseResult& result, const kit::Case& c) {
    result.n = c.n();
    result.size = c.shape.text();
    result.rows = c.shape.two_d ? c.shape.rows : 0;
    result.cols = c.shape.two_d ? c.shape.cols : 0;
}

// Emulation's last case: the step called once at each size too large to emulate, in the
// emulator's dry mode (every launch checked against a GPU's limits, buffers never filled). A
// grid laid out for the small sizes that a GPU refuses at the large ones (gridDim.y above 65535
// on a 2^22 x 4 matrix, say) fails here as it does on a GPU. Each launch also runs a sample of
// its blocks at the real geometry, bounds checks on (Options::sample_blocks: the first block, the
// last, two picked by the case's seed, a tenth of a second in all): an index that goes out of
// bounds only at these sizes (a 32-bit product past 2^31) is a MEMORY_ERROR. Nothing else a
// partial run on memory never filled does is a verdict, and the values are a GPU's to check.
#ifdef CUDALINGS_EMULATOR
// How the emulator's watchdog sends a case's result from its own thread, the process's last.
void send_last_result(const CaseResult& r) {
    emit(event_json(r));
    emit_event(Marker::Done);
}

constexpr unsigned kSampleBlocks = 4;
constexpr double kSampleSeconds = 0.1;

std::string launch_only_name(const std::vector<kit::Case>& sizes) {
    std::vector<std::string> shapes;
    for (const auto& c : sizes)
        if (std::find(shapes.begin(), shapes.end(), c.shape.text()) == shapes.end())
            shapes.push_back(c.shape.text());
    std::string name = "launches only:";
    for (const auto& shape : shapes) name += (name.back() == ':' ? " " : ", ") + shape;
    return name;
}

// At most `cap` of the elements in `ranges`, spread over all of them: whole ranges when they fit,
// else the two ends of each (a block's first and last elements), else every k-th range's first
// two. A judge that reads its inputs all over (a scatter's inverse) makes a page of them per
// element: the cap keeps that to a few MiB.
kit::detail::ElementRanges spread(const std::vector<std::pair<std::size_t, std::size_t>>& ranges,
                                  kit::u64 cap) {
    kit::detail::ElementRanges out;
    kit::u64 total = 0;
    for (const auto& [lo, hi] : ranges) total += hi - lo;
    if (total <= cap) {
        for (const auto& [lo, hi] : ranges) out.emplace_back(lo, hi);
        return out;
    }
    const kit::u64 count = ranges.size();
    if (count * 4 <= cap) {
        const kit::u64 half = cap / (2 * count);
        for (const auto& [lo, hi] : ranges) {
            if (hi - lo <= 2 * half) {
                out.emplace_back(lo, hi);
                continue;
            }
            out.emplace_back(lo, lo + half);
            out.emplace_back(hi - half, hi);
        }
        return out;
    }
    const kit::u64 step = (count + cap / 2 - 1) / (cap / 2);
    for (kit::u64 k = 0; k < count; k += step) {
        const auto& [lo, hi] = ranges[k];
        out.emplace_back(lo, std::min<kit::u64>(hi, lo + 2));
    }
    if ((count - 1) % step) out.emplace_back(ranges.back().first, ranges.back().second);
    return out;
}
constexpr kit::u64 kSampleJudged = 16384;  // elements judged per output, at most

// A sampled_values problem's outputs after its sampled call: the elements the sampled blocks
// wrote, judged as at every other size (the inputs they need made where they are read). Only
// when every launch of the call ran its sample (a later launch, memset or copy skipped because
// the sample had changed memory leaves the outputs half made: nothing is judged then). Returns
// the number of elements judged; a WRONG outcome fills `result`.
kit::u64 judge_sample(kit::Problem& p, const kit::Case& c, const cudalings_emu::Options& before,
                      bool split, CaseResult& result) {
    if (runner::sample_skips(split) != 0) return 0;
    cudalings_emu::Options judging = before;
    judging.dry = false;
    judging.check = judging.explain = false;
    judging.sample_blocks = 0;
    // The judge's own kernels: no time limit (they fault in the pages of inputs they read, one
    // at a time, where a gather reads them all over).
    judging.time_limit_seconds = 0;
    cudalings_emu::set_options(judging);
    kit::u64 judged = 0;
    kit::detail::set_sampled_ranges([&](const void* got, kit::detail::ElementRanges* out) {
        *out = spread(runner::written_words(got, split), kSampleJudged);
        for (const auto& [lo, hi] : *out) judged += hi - lo;
        return true;
    });
    kit::Outcome o;
    try {
        o = p.judge();
    } catch (...) {
        kit::detail::set_sampled_ranges(nullptr);
        throw;
    }
    kit::detail::set_sampled_ranges(nullptr);
    if (o.pass()) return judged;
    runner::fill(result, o);
    set_size(result, c);
    result.detail = "at " + c.shape.text() +
                    (c.params.label().empty() ? "" : ", " + c.params.label()) +
                    " only (every smaller case passed): a size too large to emulate whole, where "
                    "a few blocks of each launch ran; the elements they wrote were judged (" +
                    std::to_string(result.checked) + " of " + std::to_string(c.n()) +
                    "), with the inputs they read made as at every other size. Right at the "
                    "smaller sizes and wrong here: look for what changes with the size (an index "
                    "or a count in 32 bits, a test against a fixed size, a grid or loop bound "
                    "sized for the small cases)" +
                    (result.detail.empty() ? "" : "\n" + result.detail);
    return judged;
}

void launch_only(runner::Driver& driver, const std::vector<kit::Case>& sizes, int index, void* fn,
                 kit::u64 seed, bool sampled_values, bool split) {
    CaseResult result;
    result.index = index;
    result.name = launch_only_name(sizes);
    result.n = sizes.back().n();
    result.size = sizes.back().shape.text();
    emit(event_json(CaseStartEvent{index, result.name, result.n, result.size}));
    runner::begin_case(result, send_last_result);
    runner::on_stuck(runner::report_stuck_in_sample);
    const cudalings_emu::Options before = cudalings_emu::get_options();
    cudalings_emu::Options dry = before;
    dry.dry = true;
    dry.check = dry.explain = false;
    dry.sample_blocks = 0;  // the lesson kit's own launches (inputs) are not run
    cudalings_emu::Options sampled = dry;
    sampled.sample_blocks = kSampleBlocks;
    sampled.sample_seed = seed;
    sampled.sample_seconds = kSampleSeconds;
    result.verdict = Verdict::Pass;
    result.detail =
        "each launch of your step at these sizes was checked against a GPU's limits (grid and "
        "block dimensions, shared memory), and a few of its blocks ran with bounds checks on "
        "(the values at these sizes are a GPU's to check)";
    std::vector<cudalings_emu::Diagnostic> found;
    const kit::Case* out_of_bounds_at = nullptr;
    kit::u64 judged = 0;
    bool wrong = false;
    for (const auto& c : sizes) {
        bool stop = false;
        cudalings_emu::set_options(dry);
        std::unique_ptr<kit::Problem> p;
        try {
            p = driver.launch_only(c, fn, seed, sampled_values,
                                   [&] { cudalings_emu::set_options(sampled); });
        } catch (const runner::LearnerError& e) {
            result.verdict = Verdict::Crash;
            result.reason = dev::error_name(e.code);
            result.detail =
                std::string(e.returned ? "returned by your function" : "left by a launch") +
                " at " + c.shape.text() +
                (c.params.label().empty() ? "" : ", " + c.params.label()) +
                ", a size checked for its launches only (a GPU " +
                "refuses this launch too): " + explain(e.code);
            stop = true;
        } catch (const dev::Error& e) {  // the emulator's own memory, say: no verdict
            result.verdict = Verdict::Skipped;
            result.reason = std::string("not checked: ") + e.what();
            stop = true;
        }
        auto now = runner::take_findings();
        const bool out_of_bounds = std::any_of(
            now.begin(), now.end(), [](const auto& d) { return d.kind == "out-of-bounds"; });
        found.insert(found.end(), now.begin(), now.end());
        if (p && sampled_values && !stop && !out_of_bounds) {
            try {
                judged += judge_sample(*p, c, before, split, result);
                wrong = result.verdict == Verdict::Wrong;
            } catch (const dev::Error& e) {  // the emulator's own memory, say: no verdict
                result.verdict = Verdict::Skipped;
                result.reason = std::string("not checked: ") + e.what();
                stop = true;
            }
            runner::take_findings();  // the judge's own kernels' (none: checks are off)
        }
        cudalings_emu::set_options(dry);
        p.reset();
        if (wrong) break;
        if (out_of_bounds) {
            out_of_bounds_at = &c;
            result.verdict = Verdict::Pass;  // the finding decides (MEMORY_ERROR)
            result.reason.clear();
            result.detail.clear();
        }
        if (stop || out_of_bounds) {
            set_size(result, c);
            break;
        }
    }
    runner::attach_emulator_findings(result, found);
    if (result.verdict == Verdict::Pass && !out_of_bounds_at && sampled_values && judged)
        result.detail =
            "each launch of your step at these sizes was checked against a GPU's limits (grid and "
            "block dimensions, shared memory), and a few of its blocks ran with bounds checks on; "
            "the elements they wrote have the right values (" +
            std::to_string(judged) + " judged)";
    if (out_of_bounds_at) {
        const kit::Case& c = *out_of_bounds_at;
        result.detail =
            "at " + c.shape.text() + (c.params.label().empty() ? "" : ", " + c.params.label()) +
            " only (every smaller case passed): a size too large to emulate whole, where a few "
            "blocks of each launch ran. An index that is right at the smaller sizes and lands "
            "outside the array here is most likely computed in 32 bits and overflows (an int "
            "product such as n * t passes 2^31 and turns negative): compute it in 64 bits "
            "(size_t, or cast one factor first)\n" +
            result.detail;
    }
    cudalings_emu::set_options(before);  // the checks too, not only dry mode
    emit(event_json(result));
}
#endif

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

#ifndef CUDALINGS_EMULATOR
// A process of a timed check's Apart (the reference's, or a learner's for a timed phase): the
// learner's program with `object`, no probes (the first learner's process made them), replies
// polled.
runner::Split::Start timing_process(const CheckArgs& args, const LoadedStep& step,
                                    const std::string& object) {
    runner::Split::Start how;
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
std::unique_ptr<runner::Split> start_reference(const CheckArgs& args, const LoadedStep& step) {
    std::unique_ptr<runner::Split> r =
        early_reference ? std::move(early_reference)
                        : std::make_unique<runner::Split>(runner::Split::Role::Reference);
    const runner::Split::Start how = timing_process(args, step, args.reference);
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
    const int n = runner::compute_processes_on_gpu();
    if (n < 2) return -1;  // a list missing some of ours cannot be trusted
    return std::max(0, n - 2 - (idle_learner(step) ? 1 : 0));
}

// The learner's side of Apart: each learner phase in a fresh process, started (making its CUDA
// context) while the reference is timed, its object loaded only once that phase is over.
runner::Apart apart_from(const CheckArgs& args, LoadedStep& step) {
    runner::Apart a;
    const runner::Split::Start how = timing_process(args, step, args.step);
    a.learner_away = [how, &step] {
        if (idle_learner(step)) return;
        const kit::remote::Route figures = step.split->route();
        step.split->finish();
        // The ended process's context goes with it, in the driver, soon after: wait for that (at
        // most a second) before the next one starts, so that the count tells them apart.
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
        while (runner::compute_processes_on_gpu() > 2 && std::chrono::steady_clock::now() < until)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        auto next = std::make_unique<runner::Split>();
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
            throw runner::LearnerGone{
                fault ? why
                      : "the process running your code for its timing did not load it: " + why,
                cudalings::describe_exit(st.signal, st.exit_code)};
        }
        step.split->on_returning([] { emit_event(Marker::CallEnd); });
    };
    a.others_on_gpu = [&step] { return others_on_gpu(step); };
    return a;
}
#endif

int check(const CheckArgs& args) {
    LoadedStep step;
    if (int code = load_step(args, step, !args.exact_inputs); code >= 0) return code;
    const kit::ProblemInfo* problem = step.problem;
    const dev::Properties& props = step.props;
    cudaStream_t stream = step.stream;
    void* fn = step.fn;
    void* reference = nullptr;
    // Through the judge split the reference is timed in a process of its own (start_reference,
    // once the cases have passed); in this process only when the learner's step is here too.
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
    // Then, under emulation, the sizes above that for their launches only (see launch_only).
    std::vector<kit::Case> launch_sizes;
#ifdef CUDALINGS_EMULATOR
    if (args.large_n) launch_sizes = driver.launch_only_cases(args.large_n, args.timed_size);
#endif
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
#ifdef CUDALINGS_EMULATOR
        if (i == large_at) {
            cudalings_emu::Options values_only = cudalings_emu::get_options();
            values_only.check = values_only.explain = false;
            cudalings_emu::set_options(values_only);
        }
#endif
        emit(event_json(CaseStartEvent{static_cast<int>(i), c.label(), c.n(), c.shape.text()}));
        // One run of the case (run again below, with the race checks on, where its values failed).
        int internal_error = 0;  // the runner's own failure: it ends with exit code 1
        const auto attempt = [&](CaseResult& result, bool& stop) {
            stop = false;
            result.index = static_cast<int>(i);
            result.name = c.label();
            set_size(result, c);
#ifdef CUDALINGS_EMULATOR  // a CUDA thread that never ends is reported from the watchdog's thread
            runner::begin_case(result, send_last_result);
#endif
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
                if (!stop) {
#ifdef CUDALINGS_EMULATOR
                    // Or, under emulation, the case's time budget ran out in the runner's own
                    // kernels (its guards and checks of the outputs run on the emulated device
                    // too): the emulator's "slow" finding below decides then, as for the learner's
                    // kernels.
                    runner_failed = e.what();
#else
                    emit_message(Message::InternalError, e.what());
                    internal_error = 1;
                    return;
#endif
                }
            }
#ifdef CUDALINGS_EMULATOR  // the emulator's findings (races, bounds, deadlocks) with file:line
            runner::attach_emulator_findings(result);
            if (!runner_failed.empty() && !runner::too_slow_to_emulate(result)) {
                emit_message(Message::InternalError, runner_failed);
                internal_error = 1;
                return;
            }
            // The larger case may be beyond what the emulator can run in its time: not a verdict.
            if (i == large_at && runner::too_slow_to_emulate(result)) {
                result.verdict = Verdict::Skipped;
                result.reason = "not checked: too slow to emulate at this size (a GPU runs it)";
            }
#endif
        };
        CaseResult result;
        bool stop = false;
        attempt(result, stop);
        if (internal_error) return internal_error;
#ifdef CUDALINGS_EMULATOR
        // The larger case's values are wrong, and it ran without the race checks: run it once
        // more with them, so that a race only this size reaches (a second tile in a chunk, say)
        // is named with its lines instead of "values" alone. Too slow, or nothing found: the
        // values' verdict stands.
        if (i == large_at && result.verdict == Verdict::Wrong && !stop) {
            const cudalings_emu::Options values_only = cudalings_emu::get_options();
            cudalings_emu::Options checked = values_only;
            checked.check = true;
            cudalings_emu::set_options(checked);
            CaseResult again;
            bool stop_again = false;
            attempt(again, stop_again);
            cudalings_emu::set_options(values_only);
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
#endif
        all_passed = all_passed && result.verdict == Verdict::Pass;
        values_passed = values_passed && (result.verdict == Verdict::Pass ||
                                          (i == large_at && result.verdict == Verdict::Skipped));
        emit(event_json(result));
        if (stop) {
            emit(event_json(AbortEvent{result.reason}));
            return 0;
        }
    }
#ifdef CUDALINGS_EMULATOR
    if (!launch_sizes.empty() && args.larger != "defer") {
        const int index = static_cast<int>(cases.size());
        if (values_passed && (args.first_case == 0 || args.larger == "only"))
            launch_only(driver, launch_sizes, index, fn, args.seed, problem->sampled_values,
                        step.split != nullptr);
        else
            emit_not_run(index, launch_only_name(launch_sizes), launch_sizes.back());
    }
#endif
    if (args.time && args.first_case == 0 && all_passed) {
        emit_event(Marker::TimingStart);
#ifndef CUDALINGS_EMULATOR
        std::unique_ptr<runner::Split> reference_process;
        runner::Apart apart;
        if (step.split && !args.reference.empty()) {
            reference_process = start_reference(args, step);
            if (reference_process) {
                reference = kit::remote::reference_entry();
                apart = apart_from(args, step);
            }
        }
        const runner::Apart* timed_apart = reference_process ? &apart : nullptr;
#else
        const runner::Apart* timed_apart = nullptr;
#endif
        try {
            for (const kit::Case& c : driver.timed_cases(args.timed_size)) {
                emit(event_json(driver.time_case(
                    c, fn, reference, args.seed ^ 0x7157ull, props.l2_bytes,
                    [] { emit_event(Marker::Tick); }, timed_apart)));
            }
        } catch (const runner::LearnerError& e) {
            emit(event_json(TimingErrorEvent{dev::error_name(e.code), explain(e.code)}));
            return 0;
        } catch (const runner::LearnerGone& e) {
            emit(event_json(TimingErrorEvent{e.reason, e.why}));
            return 0;
        }
#ifndef CUDALINGS_EMULATOR
        // The process Apart started for a phase that did not come holds nothing of the
        // learner's: killed, not waited for.
        if (idle_learner(step)) step.split->finish(0);
#endif
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

#ifndef CUDALINGS_EMULATOR
// One timed call of the step on one timed case (the one of `--column`, else the first), after a
// warm-up call, with the profiler on around that call only: every kernel the call launches is
// profiled, the warm-up's, the fresh inputs' and the L2 flush's are not.
int profile(const CheckArgs& args) {
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
        emit(event_json(driver.profile_case(
            *chosen, fn, args.seed ^ 0x7157ull, props.l2_bytes,
            [] { DEV_CHECK(cudaProfilerStart()); }, [] { DEV_CHECK(cudaProfilerStop()); })));
    } catch (const runner::LearnerError& e) {
        emit(event_json(TimingErrorEvent{dev::error_name(e.code), explain(e.code)}));
        return 0;
    }
    emit_event(Marker::Done);
    dev::destroy_stream(stream);
    return 0;
}
#endif

// After a check has said everything on the channel, leave without the CUDA runtime's orderly
// tear-down of the context: the driver releases the same resources when the process ends. (A
// check without a sandbox reports once it has read "done" and does not wait for this exit; a
// sandboxed one, grading's, waits for it, so there the exit is part of the time to verdict.)
int leave(int code) {
#ifdef CUDALINGS_EMULATOR
    return code;  // no GPU context to tear down: the ordinary exit
#else
    std::fflush(nullptr);
    std::_Exit(code);
#endif
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
#ifndef CUDALINGS_EMULATOR
    // A check starts CUDA before it takes its key: the checker may start this process while
    // the step is still being built and hold the key back until the build is done, so the
    // context's creation (a fifth of a second) overlaps the build. The judge split's learner's
    // process is started before that, and makes its context at the same time.
    if (argc >= 2 && std::string(argv[1]) == "check") {
        launch_learner_early(argc, argv);
        dev::start_runtime();
    }
#endif
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
        if (command == "list") return leave(list(args));
        if (command == "baseline") {
            if (args.problem.empty() || args.baseline.empty() || args.baselines.empty())
                usage("baseline needs --problem, --baselines and --name");
            return leave(baseline(args));
        }
        if (args.problem.empty() || args.step.empty())
            usage((command + " needs --problem and --step").c_str());
        if (!args.learner.empty() &&
            (args.shims.empty() || command != "check" || args.exact_inputs))
            usage("--learner needs --shims, and is for check only (not with --exact-inputs)");
#ifndef CUDALINGS_EMULATOR
        // The ordinary exit: the profiler's own tear-down runs (its results are complete)
        if (command == "profile") return profile(args);
#else
        if (command == "profile") usage("profile needs the GPU runner");
#endif
        return leave(check(args));
    } catch (const dev::Error& e) {
        emit_message(Message::InternalError, e.what());
        return 1;
    } catch (const std::exception& e) {
        emit_message(Message::InternalError, e.what());
        return 1;
    }
}
