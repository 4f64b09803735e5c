#include "timing.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "device.h"

namespace runner {
namespace {

using Clock = std::chrono::steady_clock;

__global__ void flush_kernel(float4* buffer, std::size_t n) {
    // A read and a write of every line: evicts what the timed call left in L2, and leaves
    // lines whose write-back happens now, before the clock starts, not during the sample.
    for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
         i += std::size_t{gridDim.x} * blockDim.x) {
        float4 v = buffer[i];
        v.x += 1.0f;
        buffer[i] = v;
    }
}

class L2Flush {
  public:
    explicit L2Flush(std::size_t l2_bytes)
        // at least twice the L2, and never less than 128 MiB
        : n_(std::max<std::size_t>(2 * l2_bytes, std::size_t{128} << 20) / sizeof(float4)),
          buffer_(n_) {
        DEV_CHECK(cudaMemset(buffer_.get(), 0, n_ * sizeof(float4)));
    }
    void run(cudaStream_t s) {
        flush_kernel<<<1024, 256, 0, s>>>(buffer_.get(), n_);
        DEV_CHECK(cudaGetLastError());
        dev::sync_device();
    }

  private:
    std::size_t n_;
    dev::Array<float4> buffer_;
};

// One timed call. The end event is recorded right after the call on the stream; a second
// one after a device-wide synchronize catches work left running elsewhere (another stream):
// when it lands much later, that later time is the honest one. The host clock measures the
// same interval (from before the start event until the last event is seen) for the
// cross-check of the two clocks.
struct Sample {
    double us = 0;       // the GPU's events
    double host_us = 0;  // the host's clock
};

Sample time_one(const std::function<cudaError_t(cudaStream_t)>& call, cudaStream_t s,
                bool* outside_stream) {
    dev::Event start, end, after_sync;
    auto host_start = Clock::now();
    start.record(s);
    cudaError_t returned = call(s);
    end.record(s);
    cudaError_t synced = dev::sync_device_status();
    if (returned != cudaSuccess) throw harness::LearnerError{returned, true};
    if (synced != cudaSuccess) throw harness::LearnerError{synced, false};
    after_sync.record(s);
    after_sync.wait();
    Sample sample;
    sample.host_us = std::chrono::duration<double, std::micro>(Clock::now() - host_start).count();
    double on_stream = 1000.0 * end.ms_since(start);
    double whole_device = 1000.0 * after_sync.ms_since(start);
    sample.us = on_stream;
    if (whole_device > on_stream + std::max(50.0, 0.05 * on_stream)) {
        *outside_stream = true;
        sample.us = whole_device;
    }
    return sample;
}

double ms_since(Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

}  // namespace

PairTiming time_pair(TimedRun& run, cudaStream_t s, std::size_t l2_bytes, bool with_reference,
                     const std::function<void()>& tick) {
    L2Flush flush(l2_bytes);
    auto learner = [&](cudaStream_t st) { return run.learner(st); };
    auto reference = [&](cudaStream_t st) { return run.reference(st); };

    // Warm-up: until the last three times of each side agree within 2% (clocks are up, the
    // first launch's costs are paid), or 100 ms and at least 3 rounds. The correctness cases
    // just kept the GPU busy, so a fast step is usually warm after a few calls.
    PairTiming t;
    auto warm_start = Clock::now();
    std::vector<double> warm_mine, warm_theirs;
    while (true) {
        bool ignored = false;
        warm_mine.push_back(time_one(learner, s, &ignored).us);
        if (with_reference) warm_theirs.push_back(time_one(reference, s, &ignored).us);
        if (tick) tick();
        bool stable = cudalings::warmed_up(warm_mine) &&
                      (!with_reference || cudalings::warmed_up(warm_theirs));
        if (stable) break;
        // Otherwise as long as 100 ms and 3 rounds take; a very slow step (seconds per call)
        // stops after 2 s.
        auto spent = Clock::now() - warm_start;
        if (spent > std::chrono::milliseconds(100) &&
            (warm_mine.size() >= 3 || spent > std::chrono::seconds(2)))
            break;
    }
    t.warmup_ms = ms_since(warm_start);
    t.warmup_rounds = static_cast<int>(warm_mine.size());

    cudalings::StopRule rule;
    rule.min_samples = 15;
    rule.max_samples = 200;
    rule.target_spread = 0.01;
    rule.max_seconds = 3.0;
    std::vector<double> mine, theirs, mine_host;
    bool outside = false, ref_outside = false;
    auto start = Clock::now();
    cudalings::StopReason mine_stop = cudalings::StopReason::Continue;
    cudalings::StopReason their_stop =
        with_reference ? cudalings::StopReason::Continue : cudalings::StopReason::Converged;
    while (true) {
        double spent = std::chrono::duration<double>(Clock::now() - start).count();
        mine_stop = cudalings::should_stop(rule, mine, spent);
        if (with_reference) their_stop = cudalings::should_stop(rule, theirs, spent);
        if (mine_stop != cudalings::StopReason::Continue &&
            their_stop != cudalings::StopReason::Continue)
            break;
        // A step so slow that 15 samples would take long: a hard cap, with at least 3 samples.
        if (spent > 4 * rule.max_seconds && mine.size() >= 3) {
            mine_stop = their_stop = cudalings::StopReason::TimeCap;
            break;
        }
        // Fresh inputs for every timed call (untimed), so a replayed result cannot pass.
        auto untimed = Clock::now();
        t.refreshed = run.refresh(s, 0x5eed0000ull + mine.size()) || t.refreshed;
        // Interleaved: both sides see the same clocks and the same thermal state.
        flush.run(s);
        t.untimed_ms += ms_since(untimed);
        Sample sample = time_one(learner, s, &outside);
        mine.push_back(sample.us);
        mine_host.push_back(sample.host_us);
        // Every timed output is verified (untimed).
        untimed = Clock::now();
        harness::CaseOutcome check = run.verify_learner(s);
        t.untimed_ms += ms_since(untimed);
        if (check.status != "pass") {
            t.verified = false;
            t.failed_sample = static_cast<int>(mine.size()) - 1;
            t.failure = check;
            break;
        }
        if (with_reference) {
            untimed = Clock::now();
            flush.run(s);
            t.untimed_ms += ms_since(untimed);
            theirs.push_back(time_one(reference, s, &ref_outside).us);
        }
        if (tick) tick();
    }
    t.sampling_ms = ms_since(start);
    t.learner.summary = cudalings::summarize(mine);
    t.learner_host = cudalings::summarize(mine_host);
    t.outside_stream = outside;
    t.learner.stop = cudalings::describe(mine_stop);
    t.has_reference = with_reference;
    if (with_reference) {
        t.reference.summary = cudalings::summarize(theirs);
        t.reference.stop = cudalings::describe(their_stop);
    }
    if (outside)
        t.note =
            "work was still running after your stream finished (another stream?): the time "
            "counts until the whole device was idle";
    return t;
}

double measure_copy_bandwidth(cudaStream_t s, std::size_t l2_bytes, double* median_us) {
    const std::size_t bytes = std::size_t{1} << 30;
    dev::Array<unsigned char> src(bytes), dst(bytes);
    DEV_CHECK(cudaMemset(src.get(), 1, bytes));
    L2Flush flush(l2_bytes);
    auto copy = [&](cudaStream_t st) {
        dev::copy_device_to_device_async(dst.get(), src.get(), bytes, st);
        return cudaSuccess;
    };
    bool ignored = false;
    auto warm_start = Clock::now();
    while (Clock::now() - warm_start < std::chrono::milliseconds(100)) time_one(copy, s, &ignored);
    std::vector<double> samples;
    for (int i = 0; i < 25; ++i) {
        flush.run(s);
        samples.push_back(time_one(copy, s, &ignored).us);
    }
    double median = cudalings::summarize(samples).median;
    if (median_us) *median_us = median;
    return 2.0 * static_cast<double>(bytes) / median / 1e3;  // GB/s
}

}  // namespace runner
