#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>

#include "stats.h"

using namespace cudalings;
using Catch::Approx;

TEST_CASE("quantiles interpolate between order statistics", "[stats]") {
    std::vector<double> v{5, 1, 4, 2, 3};
    CHECK(quantile(v, 0.5) == 3);
    CHECK(quantile(v, 0.0) == 1);
    CHECK(quantile(v, 1.0) == 5);
    CHECK(quantile(v, 0.25) == 2);
    CHECK(quantile({1, 2, 3, 4}, 0.5) == Approx(2.5));
    CHECK(quantile({}, 0.5) == 0);
}

TEST_CASE("summary: median, quartiles and relative spread", "[stats]") {
    auto s = summarize({100, 101, 99, 100, 100, 150});  // one outlier
    CHECK(s.samples == 6);
    CHECK(s.median == Approx(100));
    CHECK(s.min == 99);
    CHECK(s.max == 150);
    CHECK(s.spread() == Approx((s.p75 - s.p25) / 100));
    CHECK(s.spread() < 0.02);  // the median and IQR ignore one outlier
}

TEST_CASE("stop rule: minimum count, noise target, sample and time caps", "[stats]") {
    StopRule rule;
    rule.min_samples = 15;
    rule.max_samples = 40;
    rule.target_spread = 0.01;
    rule.max_seconds = 2;
    std::vector<double> steady(10, 100.0);
    CHECK(should_stop(rule, steady, 0.1) == StopReason::Continue);  // too few
    steady.resize(15, 100.0);
    CHECK(should_stop(rule, steady, 0.1) == StopReason::Converged);
    std::vector<double> noisy;
    for (int i = 0; i < 20; ++i) noisy.push_back(i % 2 ? 100 : 130);
    CHECK(should_stop(rule, noisy, 0.1) == StopReason::Continue);
    CHECK(should_stop(rule, noisy, 2.5) == StopReason::TimeCap);
    noisy.resize(40, 130);
    for (int i = 20; i < 40; ++i) noisy[i] = i % 2 ? 100 : 130;
    CHECK(should_stop(rule, noisy, 0.1) == StopReason::SampleCap);
}

TEST_CASE("warm-up ends when the last times agree", "[stats]") {
    CHECK_FALSE(warmed_up({}));
    CHECK_FALSE(warmed_up({100, 100}));                   // fewer than the window
    CHECK_FALSE(warmed_up({900, 120, 101, 100}, 4));      // first launch still in the window
    CHECK(warmed_up({900, 120, 101, 100, 100.5}));        // the last three agree within 2%
    CHECK_FALSE(warmed_up({200, 150, 125, 110, 100}));    // still ramping
    CHECK(warmed_up({200, 150, 125, 110, 100}, 3, 0.5));  // a looser tolerance accepts it
}

TEST_CASE("host clock cross-check", "[stats]") {
    // A 780 us kernel: the host sees launch and wake-up latency on top.
    CHECK(cross_check_clocks(780, 815) == ClockCheck::Agree);
    // A 3 us kernel: the host's latency dominates, and that is fine.
    CHECK(cross_check_clocks(3, 60) == ClockCheck::Agree);
    // Events longer than the host's interval around them: impossible.
    CHECK(cross_check_clocks(900, 800) == ClockCheck::EventsLonger);
    // The host waited 5 ms for a call the events say took 0.25 ms.
    CHECK(cross_check_clocks(250, 5000) == ClockCheck::HostLonger);
    // Nothing measured: nothing to say.
    CHECK(cross_check_clocks(0, 100) == ClockCheck::Agree);
}

TEST_CASE("a claimed time against the judge's clock less its round trip", "[stats]") {
    // An honest 1.1 ms call: the judge's clock saw it plus the 60 us a probe's round trip costs.
    CHECK(cross_check_claim(1100, 1165, 60, 8) == ClockCheck::Agree);
    // The same call claimed at half its time: the plain rule lets it through, this one does not.
    CHECK(cross_check_clocks(550, 1165) == ClockCheck::Agree);
    CHECK(cross_check_claim(550, 1165, 60, 8) == ClockCheck::HostLonger);
    // A small call: the absolute allowance covers scheduling noise.
    CHECK(cross_check_claim(12, 100, 60, 8) == ClockCheck::Agree);
    // A round trip that cost more than the probes' (a loaded machine) within their spread twice.
    CHECK(cross_check_claim(1000, 1200, 60, 50) == ClockCheck::Agree);
    // Events longer than the judge's whole interval are still impossible.
    CHECK(cross_check_claim(900, 800, 60, 8) == ClockCheck::EventsLonger);
    CHECK(cross_check_claim(0, 800, 60, 8) == ClockCheck::Agree);
}

TEST_CASE("the judge's own flush as a canary of a shared GPU", "[stats]") {
    // A 130 us flush that writes back a full L2 of the call's dirty lines (tens of us more).
    CHECK_FALSE(canary_slowed(170, 130));
    // Another context's kernel held the GPU for part of a time slice.
    CHECK(canary_slowed(900, 130));
    CHECK_FALSE(canary_slowed(0, 130));
    CHECK_FALSE(canary_slowed(900, 0));
}

TEST_CASE("work outside the stream: decided on the median, not on one late sample", "[stats]") {
    std::vector<double> stream(10, 250.0), device(10, 262.0);
    CHECK_FALSE(work_outside_stream(stream, device));
    device[3] = 900;  // the host woke up late once
    CHECK_FALSE(work_outside_stream(stream, device));
    // Every call leaves 400 us of work on another stream.
    std::vector<double> hidden(10, 650.0);
    CHECK(work_outside_stream(stream, hidden));
    // A long kernel: 5% of it is allowed for the host's wake-up.
    CHECK_FALSE(
        work_outside_stream(std::vector<double>(10, 10000), std::vector<double>(10, 10300)));
    CHECK(work_outside_stream(std::vector<double>(10, 10000), std::vector<double>(10, 11000)));
    CHECK_FALSE(work_outside_stream({}, {}));
}
