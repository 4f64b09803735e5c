// Timing the learner's step against the reference, interleaved, the same way for every
// lesson: warm-up, an L2 flush before every sample, device events around the call, a
// device-wide synchronize before the end timestamp is trusted, and a noise-based stop.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <functional>
#include <string>

#include "../core/run/stats.h"
#include "kit.h"

namespace runner {

// One prepared timed call: the step (or a library baseline) and the reference, on the same
// buffers (the learner's output is verified before the reference's call overwrites it).
struct TimedRun {
    virtual ~TimedRun() = default;
    virtual cudaError_t learner(cudaStream_t s) = 0;
    virtual cudaError_t reference(cudaStream_t s) = 0;
    // Checks the output of the most recent learner call.
    virtual kit::Outcome verify_learner(cudaStream_t s) = 0;
    // New inputs (and expected results) for the next timed call, and the outputs poisoned
    // again, so a step that replays a cached result fails. False when it cannot.
    virtual bool refresh(cudaStream_t s, std::uint64_t seed) = 0;
};

// A CUDA error raised by a learner's call (returned, or found at the device sync after it).
struct LearnerError {
    cudaError_t code;
    bool returned;  // returned by the host function rather than found by the sync
};

struct SideTiming {
    cudalings::Summary summary;  // microseconds
    std::string stop;
};

struct PairTiming {
    SideTiming learner, reference;
    bool has_reference = false;
    bool outside_stream = false;  // the learner's work ran on past its stream
    std::string note;
    // Every timed learner output is verified (with fresh inputs when the spec can refresh).
    bool verified = true;
    bool refreshed = false;
    int failed_sample = -1;
    kit::Outcome failure;
    // The host clock around each timed learner call (microseconds), for the cross-check.
    cudalings::Summary learner_host;
    // The judge split: a round trip's cost beyond the events (kit::remote::Route); 0 otherwise.
    double host_overhead_us = 0, host_overhead_iqr_us = 0;
    // The judge split: the median time of the judge's own L2 flush between the calls, and before
    // the learner's code was loaded (the probes'), on the host's clock from its launch to the end
    // of its wait. Always the same work: slower between the calls means other work on the GPU
    // (a kernel the learner's process left running).
    double flush_us = 0, flush_before_us = 0;
    // Apart: the judge's host clock around the reference's calls (its process's events are the
    // reference's times); the two reference phases' medians and how far apart they were; how
    // many learner phases were made (2: the references disagreed the first time); the most
    // processes beyond the judge's own seen on the GPU around a reference phase (-1: unknown).
    cudalings::Summary reference_host;
    double reference_before_us = 0, reference_after_us = 0, reference_drift = 0;
    int learner_phases = 0, others_on_gpu = -1;
    // Where the time went (milliseconds): warm-up, the sampling loop, and the untimed work
    // inside it (fresh inputs, L2 flushes, verification).
    double warmup_ms = 0, sampling_ms = 0, untimed_ms = 0;
    int warmup_rounds = 0;
};

// Throws LearnerError when a learner call fails.
// `tick` is called after every sample (a heartbeat for the supervisor).
// `apart` (the judge split, with a reference): the reference's calls are made in a process of its
// own and timed in phases of their own, never while a process holding the learner's code exists:
// reference, learner, reference (Apart below). Otherwise the two sides are interleaved.
struct Apart;
PairTiming time_pair(TimedRun& run, cudaStream_t s, std::size_t l2_bytes, bool with_reference,
                     const std::function<void()>& tick = {}, const Apart* apart = nullptr);

// The judge split's reference timing (docs/methodology.md): reference, learner, reference, each
// side alone on the GPU. The reference's process (the solution's object, loaded by the same
// program as the learner's) is timed the same way as the learner's: its events, the judge's
// clock around each round trip. Before each reference phase no process with the learner's code
// exists; the two reference medians must agree within 1%, or the learner's phase and a reference
// phase are made once more.
struct Apart {
    // Ends the learner's process and has the next one ready (its CUDA context made, the learner's
    // object not loaded): nothing of the learner's runs from then until learner_back.
    std::function<void()> learner_away;
    // Loads the learner's object in the process that learner_away made ready.
    std::function<void()> learner_back;
    // Processes on the GPU beyond the judge's own (NVML), -1 when it cannot tell.
    std::function<int()> others_on_gpu;
};

// One timed call for a profiler (`cudalings profile`): a warm-up call, fresh inputs, a cold L2
// (as before every timed sample), then the call alone between `begin` and `end` (the runner
// turns the profiler on and off there, so every kernel the call launches is profiled and nothing
// else), then its output verified. Throws LearnerError when a learner call fails.
struct ProfiledCall {
    bool verified = true;
    kit::Outcome failure;
    double on_stream_us = 0;  // the call's time on the stream (under the profiler: not a timing)
};
ProfiledCall profile_call(TimedRun& run, cudaStream_t s, std::size_t l2_bytes,
                          const std::function<void()>& begin, const std::function<void()>& end);

// A cold L2 as before every timed call (a read+write pass over twice the L2, then a read-only
// pass), for the judge split's probes of its clock: the returned function runs it, waits, and
// returns its time on the host's clock (microseconds), the canary of PairTiming::flush_us.
std::function<double()> cold_l2(cudaStream_t s, std::size_t l2_bytes);

// This process's turn on the GPU: an empty kernel, launched and waited for. Another process's
// context with work still running makes it wait (the GPU takes turns between contexts): the
// judge split ends its clock around a learner's call, and around each probe, with it.
void gpu_turn(cudaStream_t s);

// Device-to-device copy bandwidth in GB/s counting bytes read plus written (1 GiB copies).
double measure_copy_bandwidth(cudaStream_t s, std::size_t l2_bytes, double* median_us);

// The FP32 rate in GFLOP/s (an FMA counts 2): independent FMA chains in every lane of every SM,
// the yardstick of compute-bound steps as the copy rate is of memory-bound ones.
double measure_fp32_rate(cudaStream_t s, int sms, double* median_us, double* operations);

}  // namespace runner
