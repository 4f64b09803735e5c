// Summary statistics for timing samples, and the rule that says when to stop sampling.
#pragma once

#include <cstddef>
#include <vector>

namespace cudalings {

struct Summary {
    std::size_t samples = 0;
    double median = 0;
    double min = 0;
    double max = 0;
    double p25 = 0;
    double p75 = 0;
    // Relative spread: the interquartile range over the median (0.01 = 1%).
    double spread() const { return median > 0 ? (p75 - p25) / median : 0; }
};

// Quantile with linear interpolation between order statistics (q in [0, 1]).
double quantile(std::vector<double> values, double q);
Summary summarize(const std::vector<double>& values);

struct StopRule {
    std::size_t min_samples = 15;
    std::size_t max_samples = 200;
    double target_spread = 0.01;  // stop once the relative spread is below this
    double max_seconds = 2.0;     // or once this much time went into sampling
};

enum class StopReason { Continue, Converged, SampleCap, TimeCap };

StopReason should_stop(const StopRule& rule, const std::vector<double>& samples,
                       double seconds_spent);

const char* describe(StopReason reason);

// Warm-up ends once the last `window` times agree within `tolerance` of their median (clocks
// up, first-launch costs paid): a 1 ms step is warm after a few calls, not after 100 ms.
bool warmed_up(const std::vector<double>& times, std::size_t window = 3, double tolerance = 0.02);

// Did the timed calls leave work running past their stream? Per call, `on_stream` ends at an
// event right after the call on its stream, `whole_device` at one recorded after a device-wide
// synchronize, which also waits for the host to wake up. Decided on the median difference, so
// that one late wake-up of the host is not taken for hidden work: hiding work is done on every
// call.
bool work_outside_stream(const std::vector<double>& on_stream_us,
                         const std::vector<double>& whole_device_us);

// The host clock cross-check. The host measures the same interval as the GPU's events (from
// just before the start event is recorded until the device is idle and the end event is seen),
// plus launch and wake-up latency. Events that report more time than passed on the host, or
// far less (work the GPU's clock did not see), mean the time cannot be trusted.
enum class ClockCheck { Agree, EventsLonger, HostLonger };
ClockCheck cross_check_clocks(double event_us, double host_us);
// The judge split: the events are the learner's process's claims, and the judge knows what a
// round trip costs beyond the events (`overhead_us`, with `overhead_iqr_us` its spread: probes
// of its clock made before the learner's code was loaded). Its clock less that cost is the
// time the call took, within noise: a claim well below it is HostLonger.
ClockCheck cross_check_claim(double claim_us, double host_us, double overhead_us,
                             double overhead_iqr_us);
// The judge's own fixed work on the GPU between the learner's calls (its L2 flush), against the
// same work before the learner's code was loaded (medians, microseconds): much slower means the
// GPU was shared meanwhile (a kernel the learner's process left running, another process).
bool canary_slowed(double during_us, double before_us);

}  // namespace cudalings
