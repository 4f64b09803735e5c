// What the runner (the child process that runs a step) tells the checker, one JSON line per
// event on its result channel. One struct per event, with one to/from JSON each, used by both
// processes: a field added here reaches the runner, the checker, the report and its JSON at once.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "verdict.h"

namespace cudalings {

void to_json(nlohmann::json& j, const Verdict& v);
void from_json(const nlohmann::json& j, Verdict& v);

struct Mismatch {
    std::uint64_t index = 0;
    std::string got, expected;
};

// A finding of the CPU emulator (a race, an out-of-bounds access, a deadlock...).
struct EmulatorFinding {
    std::string kind, severity, file;
    int line = 0;
    std::string message, detail;
    std::uint64_t count = 1;
};

// Which of several emulator findings names the bug (lower first): a wait that never ends, then
// a race (a read of garbage after a missing barrier is also an uninitialised read: the race is
// the cause), a warp mask, a barrier, an access out of bounds, an uninitialised read.
inline int emulator_finding_rank(const std::string& kind) {
    static const char* const order[] = {"deadlock",      "cross-block-wait",    "race",
                                        "warp-mask",     "divergent-barrier",   "skipped-barrier",
                                        "out-of-bounds", "misaligned",          "use-after-free",
                                        "host-pointer",  "uninitialised-shared"};
    int rank = 0;
    for (const char* k : order) {
        if (kind == k) return rank;
        ++rank;
    }
    return rank;
}

// A likely cause that one failing case's mismatches fit (kit::Clue, judge.h). The conclusion
// (conclude.h) states it for the step only when every failing case fits the same one and at
// least one of them shows it alone.
struct CaseClue {
    std::string key;     // what fits, with its parameters: "tile-end:256"; empty: no clue
    std::string fact;    // the fact in a few words, for the step's reason
    std::string advice;  // the fact and the likely cause, in a sentence or two
    bool alone = false;  // this case's mismatches fit nothing else the judge knows of
};

// The outcome of one case (event "case").
struct CaseResult {
    static constexpr const char* kEvent = "case";
    int index = 0;
    std::string name;  // "n=33, uniform in [-1, 1)"
    std::uint64_t n = 0;
    std::string size;                  // how the case's size reads: "n=2^20+3", "31×33"
    std::uint64_t rows = 0, cols = 0;  // a 2-D case's shape (0 for 1-D cases)
    Verdict verdict = Verdict::Skipped;
    std::string reason;  // sub-reason: "values", "unwritten output", the CUDA error
    std::string detail;  // one sentence or more for the learner
    std::string tolerance;
    std::uint64_t checked = 0;  // output elements compared (n for a map, 1 for a sum)
    std::uint64_t wrong = 0, unwritten = 0, first_wrong = 0, last_wrong = 0;
    std::vector<Mismatch> first;  // the first mismatches
    std::vector<EmulatorFinding> emulator;
    CaseClue clue;  // a failing case's likely cause, where its mismatches fit one
};

// The case that blames the learner's code for ending its process before the first case: while
// its file was being loaded (`loaded` false: a constructor, an initialiser) or right after (a
// thread such code started). `how`: describe_exit's words.
CaseResult ended_around_loading(bool loaded, const std::string& how);

struct TimingSide {
    bool present = false;
    double median_us = 0, p25_us = 0, p75_us = 0, min_us = 0;
    int samples = 0;
    std::string stop;  // why sampling stopped
    double spread() const { return median_us > 0 ? (p75_us - p25_us) / median_us : 0; }
};

// One timed problem of a step (event "timing"): the step and the reference, interleaved.
struct TimingResult {
    static constexpr const char* kEvent = "timing";
    std::string column;  // the problem's column ("uniform", "p = 0.5"); empty when one
    std::string name;    // the case: "n=2^28, uniform in [-1, 1)"
    std::string problem;
    std::uint64_t n = 0;
    std::string size;
    double bytes = 0;     // minimal bytes moved per call (reads + writes)
    double fp32_ops = 0;  // least FP32 operations per call (kit::Traffic::fp32); 0: memory-bound
    TimingSide learner, reference;
    std::string note;      // e.g. work found outside the given stream
    bool verified = true;  // every timed output was checked, and was right
    int failed_sample = -1;
    CaseResult failure;  // why a timed output was wrong
    bool outside_stream = false, refreshed = false;
    double host_median_us = 0;  // the host clock around the learner's timed calls
    // The judge split: what a round trip to the learner's process costs beyond its events, on
    // the judge's clock (the median of the probes made before the learner's code was loaded, and
    // their interquartile range); 0 when the learner's calls were made in the judge's process.
    double host_overhead_us = 0, host_overhead_iqr_us = 0;
    // The judge split: the judge's own L2 flush between the calls, and before the learner's code
    // was loaded (medians, microseconds; runner/timing.h). 0 when not measured.
    double flush_us = 0, flush_before_us = 0;
    // The judge split with a reference (runner/timing.h, Apart): the reference timed in a
    // process of its own before and after the learner, never beside a process of the learner's.
    // The judge's host clock around its calls; its two phases' medians and how far apart they
    // were (a fraction); the learner phases made (2 when the first two references disagreed);
    // the most processes beyond the checker's own on the GPU around a reference phase (NVML; -1
    // unknown or not measured).
    double reference_host_median_us = 0, reference_before_us = 0, reference_after_us = 0,
           reference_drift = 0;
    int learner_phases = 0, others_on_gpu = -1;
    // Where the time went (milliseconds): warm-up, sampling, and the untimed work inside it.
    double warmup_ms = 0, sampling_ms = 0, untimed_ms = 0;
    int warmup_rounds = 0;
    double copy_gbps = 0;  // this GPU's measured copy rate (r + w): set by the checker
    double fp32_gflops =
        0;  // this GPU's measured FP32 rate, where fp32_ops > 0: set by the checker

    double gbps(const TimingSide& s) const {
        return s.median_us > 0 ? bytes / s.median_us / 1e3 : 0;
    }
    double percent_of_copy(const TimingSide& s) const {
        return copy_gbps > 0 ? 100 * gbps(s) / copy_gbps : 0;
    }
    double floor_us() const { return copy_gbps > 0 ? bytes / copy_gbps / 1e3 : 0; }
    // FP32 operations per second (GFLOP/s) and their share of the measured FP32 rate.
    double gflops(const TimingSide& s) const {
        return s.median_us > 0 ? fp32_ops / s.median_us / 1e3 : 0;
    }
    double percent_of_fp32(const TimingSide& s) const {
        return fp32_gflops > 0 ? 100 * gflops(s) / fp32_gflops : 0;
    }
    // Operations per minimal byte: where the problem sits on the roofline.
    double intensity() const { return bytes > 0 ? fp32_ops / bytes : 0; }
    // the learner's speed relative to the reference: 1.10 means 10% faster
    double speed_vs_reference() const {
        return learner.median_us > 0 && reference.present ? reference.median_us / learner.median_us
                                                          : 0;
    }
};

// ---------------------------------------------------------------- the other events
struct ProbeEvent {
    static constexpr const char* kEvent = "probe";
    int gpus = 0;
    std::string name, arch, uuid, error, message;
    int sms = 0;
    std::uint64_t l2_bytes = 0, memory_bytes = 0;
    int driver = 0, runtime = 0;
};

struct CopyBandwidthEvent {
    static constexpr const char* kEvent = "copy_bandwidth";
    double gbps = 0, median_us = 0, bytes = 0;
    std::string uuid, name;
};

// The GPU's FP32 rate as `cudalings-runner fp32-rate` measures it: independent FMA chains in
// every lane of every SM (an FMA counts 2 operations).
struct Fp32RateEvent {
    static constexpr const char* kEvent = "fp32_rate";
    double gflops = 0, median_us = 0, operations = 0;
    std::string uuid, name;
};

// The cases a runner is about to run, and the problem's advice per verdict.
struct CasesEvent {
    static constexpr const char* kEvent = "cases";
    int total = 0;
    std::string problem;
    std::vector<std::pair<std::string, std::string>> advice;  // verdict name, words
    // Under emulation, the outputs the sampled blocks write at the launch-only sizes are judged
    // (kit/problem.h, kSampledValues).
    bool sampled_values = false;
};

struct CaseStartEvent {
    static constexpr const char* kEvent = "case_start";
    int index = 0;
    std::string name;
    std::uint64_t n = 0;
    std::string size;
};

struct TimingErrorEvent {
    static constexpr const char* kEvent = "timing_error";
    std::string reason, detail;
};

// The process cannot go on (a sticky CUDA error): the next case starts in a fresh one.
struct AbortEvent {
    static constexpr const char* kEvent = "abort";
    std::string reason;
};

// The runner's messages (MessageEvent::event): one text each.
//   load_error      the learner's built file could not be used (a COMPILE_ERROR)
//   internal_error  the runner's own failure
//   usage_error     the runner was asked for what does not exist (a profile's column)
//   warning         what it could not do and went on without (a note of the report)
//   note            what it says of itself (no seccomp filter here)
enum class Message { LoadError, InternalError, UsageError, Warning, Note };
const char* name(Message m);
inline bool is(const std::string& event, Message m) { return event == name(m); }

struct MessageEvent {
    std::string event;  // name(Message)
    std::string message;
};

// The runner's markers: events that carry their name and the time alone. One list, for the
// runner that says them and the checker that reads them.
//   step_loading, step_loaded  around loading the learner's object (a process that ends between
//                              the two was ended by the learner's code)
//   call_start, call_end       around the learner's host function (call_end: it returned, the
//                              device's synchronisation follows)
//   timing_start, tick         the timing began; a heartbeat during it
//   done                       the runner has said everything
enum class Marker { StepLoading, StepLoaded, CallStart, CallEnd, TimingStart, Tick, Done };
const char* name(Marker m);
inline bool is(const std::string& event, Marker m) { return event == name(m); }

// The one call `cudalings-runner profile` ran for a profiler (event "profile_call"): which
// timed case, and whether its output was right (a profile of a wrong answer says so).
struct ProfileCallEvent {
    static constexpr const char* kEvent = "profile_call";
    std::string column;  // the timed case's column ("" when the problem has one)
    std::string name;    // the case: "n=2^28, uniform in [-1, 1)"
    std::string problem;
    std::string size;
    std::uint64_t n = 0;
    double bytes = 0;  // minimal bytes moved per call (reads + writes)
    bool verified = true;
    CaseResult failure;  // why the output was wrong
};

// A problem of a lesson's checks as `cudalings-runner list` describes it (for `dev check`).
struct ProblemListing {
    std::string name, symbol;
    int cases = 0, timed = 0;
    std::vector<std::string> timed_columns;
};
struct ChecksListing {
    static constexpr const char* kEvent = "list";
    std::vector<ProblemListing> problems;
    std::vector<std::pair<std::string, std::string>> baselines;  // problem, name
};

#define CUDALINGS_JSON(Type, ...) NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Type, __VA_ARGS__)
CUDALINGS_JSON(Mismatch, index, got, expected)
CUDALINGS_JSON(EmulatorFinding, kind, severity, file, line, message, detail, count)
CUDALINGS_JSON(CaseClue, key, fact, advice, alone)
CUDALINGS_JSON(CaseResult, index, name, n, size, rows, cols, verdict, reason, detail, tolerance,
               checked, wrong, unwritten, first_wrong, last_wrong, first, emulator, clue)
CUDALINGS_JSON(TimingSide, present, median_us, p25_us, p75_us, min_us, samples, stop)
CUDALINGS_JSON(TimingResult, column, name, problem, n, size, bytes, fp32_ops, learner, reference,
               note, verified, failed_sample, failure, outside_stream, refreshed, host_median_us,
               host_overhead_us, host_overhead_iqr_us, flush_us, flush_before_us,
               reference_host_median_us, reference_before_us, reference_after_us, reference_drift,
               learner_phases, others_on_gpu, warmup_ms, sampling_ms, untimed_ms, warmup_rounds,
               copy_gbps, fp32_gflops)
CUDALINGS_JSON(ProbeEvent, gpus, name, arch, uuid, error, message, sms, l2_bytes, memory_bytes,
               driver, runtime)
CUDALINGS_JSON(CopyBandwidthEvent, gbps, median_us, bytes, uuid, name)
CUDALINGS_JSON(Fp32RateEvent, gflops, median_us, operations, uuid, name)
CUDALINGS_JSON(CasesEvent, total, problem, advice, sampled_values)
CUDALINGS_JSON(CaseStartEvent, index, name, n, size)
CUDALINGS_JSON(TimingErrorEvent, reason, detail)
CUDALINGS_JSON(AbortEvent, reason)
CUDALINGS_JSON(MessageEvent, event, message)
CUDALINGS_JSON(ProfileCallEvent, column, name, problem, size, n, bytes, verified, failure)
CUDALINGS_JSON(ProblemListing, name, symbol, cases, timed, timed_columns)
CUDALINGS_JSON(ChecksListing, problems, baselines)
#undef CUDALINGS_JSON

// An event as a JSON line's object: {"event": kind, ...fields}.
template <typename E>
nlohmann::json event_json(const E& e) {
    nlohmann::json j = e;
    j["event"] = E::kEvent;
    return j;
}
inline nlohmann::json event_json(const MessageEvent& e) { return nlohmann::json(e); }
inline nlohmann::json marker(Marker m) { return nlohmann::json{{"event", name(m)}}; }

}  // namespace cudalings
