// cudalings-runner: the child process that runs a learner's step on the GPU.
//
// It is started by the checker, never by the learner. It loads the learner's shared object,
// runs the lesson's cases and (when asked) the timing, and reports each result as one JSON
// line on file descriptor 3. The checker decides verdicts; this process only measures.
//
//   cudalings-runner probe
//   cudalings-runner copy-bandwidth
//   cudalings-runner check --spec NAME --step FILE.so [--reference FILE.so] --seed HEX
//                          [--first-case K] [--time]
//   cudalings-runner baseline --spec NAME --name BASELINE --seed HEX
#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../core/hash.h"
#include "device.h"
#include "harness.h"
#include "spec.h"
#include "timing.h"
#ifdef CUDALINGS_EMULATOR  // cudalings-runner-emu (emulator/CMakeLists.txt)
#include "cudalings_emu/runner_support.h"
#endif

using nlohmann::json;

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

void emit_event(const char* name) { emit(json{{"event", name}}); }

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
                   "grid of 0 blocks, or too much shared memory";
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

json outcome_json(const harness::CaseOutcome& o) {
    json j{{"status", o.status},         {"reason", o.reason},       {"checked", o.cmp.checked},
           {"detail", o.detail},         {"wrong", o.cmp.wrong},     {"unwritten", o.cmp.unwritten},
           {"first_wrong", o.cmp.first}, {"last_wrong", o.cmp.last}, {"tolerance", o.tolerance}};
    j["first"] = json::array();
    for (const auto& m : o.cmp.samples)
        j["first"].push_back({{"index", m.index}, {"got", m.got}, {"expected", m.expected}});
    return j;
}

json summary_json(const runner::SideTiming& t) {
    return {{"median_us", t.summary.median}, {"p25_us", t.summary.p25},
            {"p75_us", t.summary.p75},       {"min_us", t.summary.min},
            {"samples", t.summary.samples},  {"stop", t.stop}};
}

// What every timing event says: the problem, the measured side, and whether each timed output
// was verified.
json timing_json(const runner::TimedRun& run, const runner::PairTiming& t) {
    return {{"event", "timing"},
            {"n", run.n},
            {"bytes", run.bytes},
            {"learner", summary_json(t.learner)},
            {"note", t.note},
            {"verified", t.verified},
            {"verify", outcome_json(t.failure)}};
}

int probe() {
    dev::Properties p = dev::probe();
    if (p.count == 0) {
        emit({{"event", "probe"},
              {"gpus", 0},
              {"error", p.error == cudaSuccess ? "none" : dev::error_name(p.error)},
              {"message", p.error == cudaSuccess ? "no CUDA device found"
                                                 : std::string(dev::error_name(p.error)) + ": " +
                                                       dev::error_text(p.error)}});
        return 0;
    }
    emit({{"event", "probe"},
          {"gpus", p.count},
          {"name", p.name},
          {"arch", "sm_" + std::to_string(p.major) + std::to_string(p.minor)},
          {"sms", p.sms},
          {"l2_bytes", p.l2_bytes},
          {"memory_bytes", p.global_bytes},
          {"uuid", p.uuid},
          {"driver", p.driver_version},
          {"runtime", p.runtime_version}});
    return 0;
}

int copy_bandwidth() {
    dev::Properties p = dev::probe();
    if (p.count == 0) {
        emit({{"event", "internal_error"}, {"message", "no GPU"}});
        return 1;
    }
    cudaStream_t s = dev::create_stream();
    double median_us = 0;
    double gbps = runner::measure_copy_bandwidth(s, p.l2_bytes, &median_us);
    emit({{"event", "copy_bandwidth"},
          {"gbps", gbps},
          {"median_us", median_us},
          {"bytes", 2.0 * double(std::size_t{1} << 30)},
          {"uuid", p.uuid},
          {"name", p.name}});
    dev::destroy_stream(s);
    return 0;
}

struct CheckArgs {
    std::string spec, step, reference, baseline;
    std::uint64_t seed = 0;
    int first_case = 0;
    bool time = false;
    std::uint64_t max_n = 0;  // > 0: only cases up to this size (sanitizers, emulation)
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

int check(const CheckArgs& args) {
    runner::Spec* spec = runner::find_spec(args.spec);
    if (!spec) {
#ifdef CUDALINGS_EMULATOR  // a gpu-only spec: the checker reports the step SKIPPED
        emit({{"event", "unsupported"},
              {"message", cudalings_emu_runner::unsupported_message(args.spec)}});
#endif
        emit({{"event", "internal_error"}, {"message", "the runner has no spec " + args.spec}});
        return 1;
    }
    dev::Properties props = dev::probe();
    if (props.count == 0) {
        emit({{"event", "internal_error"}, {"message", "no GPU"}});
        return 1;
    }
    cudaStream_t stream = dev::create_stream();
    std::string error;
    void* fn = load_symbol(args.step, spec->symbol(), &error);
    if (!fn) {
        emit({{"event", "load_error"}, {"message", error}});
        return 0;
    }
    void* reference = nullptr;
    if (!args.reference.empty()) {
        std::string ref_error;
        reference = load_symbol(args.reference, spec->symbol(), &ref_error);
        if (!reference) emit({{"event", "warning"}, {"message", "reference: " + ref_error}});
    }
    harness::Ctx ctx(stream, [](const char* e) { emit_event(e); });
    auto cases = spec->cases();
#ifdef CUDALINGS_EMULATOR  // small cases under emulation (--max-n), edge cases kept
    if (args.max_n > 0) cudalings_emu_runner::max_n() = args.max_n;
    cudalings_emu_runner::cap(cases);
#else
    if (args.max_n > 0) {  // compute-sanitizer runs: only the small cases
        std::vector<harness::CaseDef> small;
        for (const auto& c : cases)
            if (c.n <= args.max_n) small.push_back(c);
        cases = small;
    }
#endif
    emit({{"event", "cases"}, {"total", cases.size()}});
    bool all_passed = true;
    for (std::size_t i = static_cast<std::size_t>(args.first_case); i < cases.size(); ++i) {
        const auto& c = cases[i];
        emit({{"event", "case_start"}, {"index", i}, {"n", c.n}, {"name", c.name}});
        json result{{"event", "case"}, {"index", i}, {"n", c.n}, {"name", c.name}};
        bool stop = false;
        try {
            result.update(outcome_json(spec->run_case(ctx, fn, c, args.seed)));
        } catch (const harness::LearnerError& e) {
            result.update({{"status", "cuda_error"},
                           {"reason", dev::error_name(e.code)},
                           {"detail", std::string(e.returned ? "returned by your function: "
                                                             : "raised by your kernel: ") +
                                          explain(e.code)}});
            stop = !context_usable();
        } catch (const dev::Error& e) {
            // The runner's own call failed after the learner's code ran: a sticky error
            // the learner's kernel left behind is the usual cause.
            bool sticky = !context_usable();
            result.update({{"status", sticky ? "cuda_error" : "internal"},
                           {"reason", dev::error_name(e.code)},
                           {"detail", sticky ? explain(e.code) : e.what()}});
            stop = sticky;
            if (!sticky) {
                emit({{"event", "internal_error"}, {"message", e.what()}});
                return 1;
            }
        }
#ifdef CUDALINGS_EMULATOR  // the emulator's findings (races, bounds, deadlocks) with file:line
        cudalings_emu_runner::attach(result);
#endif
        all_passed = all_passed && result.value("status", "") == "pass";
        emit(result);
        if (stop) {
            emit({{"event", "abort"}, {"reason", result.value("reason", "")}});
            return 0;
        }
    }
    if (args.time && args.first_case == 0 && all_passed) {
        emit_event("timing_start");
        try {
            auto run = spec->prepare_timing(stream, fn, reference, args.seed ^ 0x7157ull);
            dev::sync_device();
            auto t = runner::time_pair(*run, stream, props.l2_bytes, reference != nullptr,
                                       [] { emit_event("tick"); });
            json timing = timing_json(*run, t);
            timing.update({{"outside_stream", t.outside_stream},
                           {"refreshed", t.refreshed},
                           {"failed_sample", t.failed_sample},
                           {"host_median_us", t.learner_host.median},
                           {"warmup_ms", t.warmup_ms},
                           {"warmup_rounds", t.warmup_rounds},
                           {"sampling_ms", t.sampling_ms},
                           {"untimed_ms", t.untimed_ms}});
            if (t.has_reference) timing["reference"] = summary_json(t.reference);
            emit(timing);
        } catch (const harness::LearnerError& e) {
            emit({{"event", "timing_error"},
                  {"reason", dev::error_name(e.code)},
                  {"detail", explain(e.code)}});
            return 0;
        }
    }
    emit_event("done");
    dev::destroy_stream(stream);
    return 0;
}

// Times a library baseline of a spec alone, and verifies its output.
int baseline(const CheckArgs& args) {
    runner::Spec* spec = runner::find_spec(args.spec);
    if (!spec) {
        emit({{"event", "internal_error"}, {"message", "the runner has no spec " + args.spec}});
        return 1;
    }
    for (const auto& b : spec->baselines()) {
        if (b.name != args.baseline) continue;
        dev::Properties props = dev::probe();
        if (props.count == 0) {
            emit({{"event", "internal_error"}, {"message", "no GPU"}});
            return 1;
        }
        cudaStream_t stream = dev::create_stream();
        emit_event("timing_start");
        auto run = b.make(stream, args.seed);
        dev::sync_device();
        auto t = runner::time_pair(*run, stream, props.l2_bytes, false, [] { emit_event("tick"); });
        emit(timing_json(*run, t));
        emit_event("done");
        dev::destroy_stream(stream);
        return 0;
    }
    emit({{"event", "internal_error"},
          {"message", "spec " + args.spec + " has no baseline " + args.baseline}});
    return 1;
}

// After a check has said everything on the channel, leave without the CUDA runtime's orderly
// tear-down of the context: the driver releases the same resources when the process ends, and
// the checker waits for this process before it reports, so the exit is part of every check's
// time to verdict.
int leave(int code) {
#ifdef CUDALINGS_EMULATOR
    return code;  // no GPU context to tear down: the ordinary exit
#else
    std::fflush(nullptr);
    std::_Exit(code);
#endif
}

[[noreturn]] void usage(const char* why) {
    std::fprintf(stderr,
                 "cudalings-runner: %s\n"
                 "usage: cudalings-runner probe | copy-bandwidth | list-specs |\n"
                 "       check --spec NAME --step FILE.so [--reference FILE.so] --seed HEX "
                 "[--first-case K] [--time]\n"
                 "       baseline --spec NAME --name BASELINE --seed HEX\n"
                 "(the runner is started by `cudalings check`; results go to fd 3)\n",
                 why);
    std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
    elapsed_ms();  // the clock starts here
    if (fcntl(3, F_GETFD) != -1) channel_fd = 3;
#ifndef CUDALINGS_EMULATOR
    // A check starts CUDA before it takes its key: the checker may start this process while
    // the step is still being built and hold the key back until the build is done, so the
    // context's creation (a fifth of a second) overlaps the build.
    if (argc >= 2 && std::string(argv[1]) == "check") dev::start_runtime();
#endif
    read_channel_key();
    if (argc < 2) usage("no command");
    std::string command = argv[1];
    try {
        if (command == "probe") return probe();
        if (command == "copy-bandwidth") return copy_bandwidth();
        if (command == "list-specs") {
            for (const auto& n : runner::spec_names()) std::printf("%s\n", n.c_str());
            return 0;
        }
        if (command != "check" && command != "baseline") usage("unknown command");
        CheckArgs args;
        for (int i = 2; i < argc; ++i) {
            std::string a = argv[i];
            auto value = [&]() -> std::string {
                if (i + 1 >= argc) usage(("missing value after " + a).c_str());
                return argv[++i];
            };
            if (a == "--spec")
                args.spec = value();
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
            else if (a == "--max-n")
                args.max_n = std::strtoull(value().c_str(), nullptr, 10);
            else
                usage(("unknown option " + a).c_str());
        }
        if (command == "baseline") {
            if (args.spec.empty() || args.baseline.empty())
                usage("baseline needs --spec and --name");
            return leave(baseline(args));
        }
        if (args.spec.empty() || args.step.empty()) usage("check needs --spec and --step");
        return leave(check(args));
    } catch (const dev::Error& e) {
        emit({{"event", "internal_error"}, {"message", e.what()}});
        return 1;
    } catch (const std::exception& e) {
        emit({{"event", "internal_error"}, {"message", e.what()}});
        return 1;
    }
}
