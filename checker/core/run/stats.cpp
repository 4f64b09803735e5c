#include "stats.h"

#include <algorithm>
#include <cmath>

namespace cudalings {

double quantile(std::vector<double> values, double q) {
    if (values.empty()) return 0;
    std::sort(values.begin(), values.end());
    double pos = q * static_cast<double>(values.size() - 1);
    auto lo = static_cast<std::size_t>(std::floor(pos));
    auto hi = static_cast<std::size_t>(std::ceil(pos));
    double frac = pos - static_cast<double>(lo);
    return values[lo] + (values[hi] - values[lo]) * frac;
}

Summary summarize(const std::vector<double>& values) {
    Summary s;
    s.samples = values.size();
    if (values.empty()) return s;
    s.median = quantile(values, 0.5);
    s.p25 = quantile(values, 0.25);
    s.p75 = quantile(values, 0.75);
    auto [lo, hi] = std::minmax_element(values.begin(), values.end());
    s.min = *lo;
    s.max = *hi;
    return s;
}

StopReason should_stop(const StopRule& rule, const std::vector<double>& samples,
                       double seconds_spent) {
    if (samples.size() >= rule.max_samples) return StopReason::SampleCap;
    if (samples.size() >= rule.min_samples && summarize(samples).spread() < rule.target_spread)
        return StopReason::Converged;
    // The time cap only ends sampling once the minimum count is there.
    if (samples.size() >= rule.min_samples && seconds_spent >= rule.max_seconds)
        return StopReason::TimeCap;
    return StopReason::Continue;
}

bool warmed_up(const std::vector<double>& times, std::size_t window, double tolerance) {
    if (times.size() < window || window == 0) return false;
    std::vector<double> last(times.end() - static_cast<std::ptrdiff_t>(window), times.end());
    auto [lo, hi] = std::minmax_element(last.begin(), last.end());
    double median = quantile(last, 0.5);
    return median > 0 && (*hi - *lo) <= tolerance * median;
}

bool work_outside_stream(const std::vector<double>& on_stream_us,
                         const std::vector<double>& whole_device_us) {
    const std::size_t n = std::min(on_stream_us.size(), whole_device_us.size());
    if (n == 0) return false;
    std::vector<double> late(n);
    for (std::size_t i = 0; i < n; ++i) late[i] = whole_device_us[i] - on_stream_us[i];
    const double typical = quantile(on_stream_us, 0.5);
    return quantile(late, 0.5) > std::max(50.0, 0.05 * typical);
}

ClockCheck cross_check_clocks(double event_us, double host_us) {
    if (event_us <= 0 || host_us <= 0) return ClockCheck::Agree;
    // The host's interval contains the GPU's: events may exceed it only by timer granularity.
    if (event_us > 1.02 * host_us + 20.0) return ClockCheck::EventsLonger;
    // Launch and wake-up latency are tens of microseconds; allow them twice over and then some.
    if (host_us > 2.0 * event_us + 200.0) return ClockCheck::HostLonger;
    return ClockCheck::Agree;
}

ClockCheck cross_check_claim(double claim_us, double host_us, double overhead_us,
                             double overhead_iqr_us) {
    const ClockCheck plain = cross_check_clocks(claim_us, host_us);
    if (plain != ClockCheck::Agree || claim_us <= 0 || host_us <= 0) return plain;
    // 10% of the claim, the probes' spread twice, and 150 us: an honest call's round trip is the
    // probes' within that. Measured on the H100 (2026-12-07, docs/methodology.md), a call of 1
    // to 12 ms cost 60 to 125 us more than the probes' round trip (short memsets): its waits
    // are long enough for the processors to sleep deeper.
    const double seen = host_us - overhead_us;
    if (seen > 1.10 * claim_us + 2.0 * overhead_iqr_us + 150.0) return ClockCheck::HostLonger;
    return ClockCheck::Agree;
}

bool canary_slowed(double during_us, double before_us) {
    if (during_us <= 0 || before_us <= 0) return false;
    // The flush writes back what the call before it left dirty in the L2 (up to one L2: tens
    // of microseconds); another context's kernels hold the GPU for a time slice (milliseconds).
    return during_us > 1.25 * before_us + 50.0;
}

const char* describe(StopReason reason) {
    switch (reason) {
        case StopReason::Continue:
            return "running";
        case StopReason::Converged:
            return "spread below target";
        case StopReason::SampleCap:
            return "sample cap";
        case StopReason::TimeCap:
            return "time cap";
    }
    return "?";
}

}  // namespace cudalings
