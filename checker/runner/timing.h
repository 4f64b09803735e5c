// Timing the learner's step against the reference, interleaved, the same way for every
// lesson: warm-up, an L2 flush before every sample, device events around the call, a
// device-wide synchronize before the end timestamp is trusted, and a noise-based stop.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <functional>
#include <string>

#include "../core/stats.h"
#include "spec.h"

namespace runner {

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
    harness::CaseOutcome failure;
    // The host clock around each timed learner call (microseconds), for the cross-check.
    cudalings::Summary learner_host;
    // Where the time went (milliseconds): warm-up, the sampling loop, and the untimed work
    // inside it (fresh inputs, L2 flushes, verification).
    double warmup_ms = 0, sampling_ms = 0, untimed_ms = 0;
    int warmup_rounds = 0;
};

// Throws harness::LearnerError when a learner call fails.
// `tick` is called after every sample (a heartbeat for the supervisor).
PairTiming time_pair(TimedRun& run, cudaStream_t s, std::size_t l2_bytes, bool with_reference,
                     const std::function<void()>& tick = {});

// Device-to-device copy bandwidth in GB/s counting bytes read plus written (1 GiB copies).
double measure_copy_bandwidth(cudaStream_t s, std::size_t l2_bytes, double* median_us);

}  // namespace runner
