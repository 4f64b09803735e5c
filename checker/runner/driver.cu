#include "driver.h"

#include <cstdlib>
#include <memory>

namespace runner {
namespace {

using cudalings::CaseResult;
using cudalings::Verdict;

std::string plural(kit::u64 count, const char* word) {
    return std::to_string(count) + " " + word + (count == 1 ? "" : "s");
}

kit::Outcome guard_outcome(const kit::Buffer& b, const kit::GuardHit& g) {
    kit::Outcome o;
    o.status = kit::Status::MemoryError;
    const std::string side = g.before ? "before" : "after";
    o.reason = "guard zone " + side + " " + b.name() + " hit";
    o.detail = plural(g.bytes, "guard byte") + " " + side + " " + b.name() + " changed, " +
               std::to_string(g.nearest) + " to " + std::to_string(g.farthest) + " bytes " +
               (g.before ? "before its start" : "past its end") +
               (b.is_input() ? ": a write outside an input (inputs are read-only)."
                             : ": a write outside the array (check the bounds test).");
    if (!b.overrun_advice().empty()) o.detail += " " + b.overrun_advice();
    return o;
}

// An order-independent fingerprint of every output of the problem.
std::uint64_t fingerprint(const kit::Problem& p) {
    std::uint64_t f = 0;
    for (const kit::Buffer* b : p.buffers()) f = kit::splitmix64(f ^ b->fingerprint(p.stream()));
    return f;
}

void poison(kit::Problem& p) {
    for (kit::Buffer* b : p.buffers()) b->poison(p.stream());
}

// A problem's case as a timed run: the learner's step (or a library) against the reference.
class TimedProblem : public TimedRun {
  public:
    TimedProblem(std::unique_ptr<kit::Problem> p, void* fn, void* ref)
        : p_(std::move(p)), fn_(fn), ref_(ref) {}
    cudaError_t learner(cudaStream_t) override { return p_->call(fn_, kit::Side::Learner); }
    cudaError_t reference(cudaStream_t) override {
        return ref_ ? p_->call(ref_, kit::Side::Reference) : cudaSuccess;
    }
    kit::Outcome verify_learner(cudaStream_t) override { return judge_call(*p_); }
    bool refresh(cudaStream_t, std::uint64_t seed) override {
        p_->regenerate(seed);
        poison(*p_);
        return true;
    }
    kit::Problem& problem() { return *p_; }

  private:
    std::unique_ptr<kit::Problem> p_;
    void* fn_;
    void* ref_;
};

bool separate_timing_buffers() {
    const char* v = std::getenv("CUDALINGS_TIMING_BUFFERS");
    return v && std::string(v) == "separate";
}

cudalings::TimingSide side_of(const SideTiming& t) {
    cudalings::TimingSide s;
    s.present = true;
    s.median_us = t.summary.median;
    s.p25_us = t.summary.p25;
    s.p75_us = t.summary.p75;
    s.min_us = t.summary.min;
    s.samples = t.summary.samples;
    s.stop = t.stop;
    return s;
}

}  // namespace

void fill(CaseResult& r, const kit::Outcome& o) {
    r.verdict = o.status == kit::Status::Pass    ? Verdict::Pass
                : o.status == kit::Status::Wrong ? Verdict::Wrong
                                                 : Verdict::MemoryError;
    r.reason = o.reason;
    r.detail = o.detail;
    r.tolerance = o.tolerance;
    r.checked = o.cmp.checked;
    r.wrong = o.cmp.wrong;
    r.unwritten = o.cmp.unwritten;
    r.first_wrong = o.cmp.first;
    r.last_wrong = o.cmp.last;
    r.first.clear();
    for (const auto& m : o.cmp.samples) r.first.push_back({m.index, m.got, m.expected});
    r.clue = {};
    if (!o.pass()) r.clue = {o.clue.key, o.clue.fact, o.clue.advice, o.clue.alone};
}

kit::Outcome judge_call(kit::Problem& p) {
    // Outputs and workspaces first (a write outside them), then writes past an input.
    for (bool inputs : {false, true})
        for (const kit::Buffer* b : p.buffers())
            if (b->is_input() == inputs)
                if (kit::GuardHit g = b->check_guards(p.stream()); g.hit)
                    return guard_outcome(*b, g);
    kit::u64 changed = 0;
    for (const kit::Buffer* b : p.buffers()) changed += b->changed(p.stream());
    if (changed) {
        kit::Outcome o;
        o.status = kit::Status::Wrong;
        o.reason = "input modified";
        o.detail = plural(changed, "input element") +
                   " changed: the inputs are read-only (const) for a reason.";
        return o;
    }
    return p.judge();
}

std::vector<kit::Case> Driver::cases(kit::u64 max_n) const {
    std::vector<kit::Case> all = problem_.cases();
    if (!max_n) return all;
    std::vector<kit::Case> kept;
    bool capped = false;
    for (const auto& c : all) {
        if (c.n() <= max_n) {
            kept.push_back(c);
        } else if (!capped) {
            capped = true;
            kept.push_back(c.capped(max_n));
        }
    }
    return kept;
}

std::optional<kit::Case> Driver::large_case(kit::u64 max_n, kit::u64 large_n) const {
    if (!max_n || large_n <= max_n) return std::nullopt;
    std::optional<kit::Case> within, above;
    for (const auto& c : problem_.cases()) {
        if (c.n() <= max_n) continue;
        if (c.n() <= large_n) {
            if (!within || c.n() > within->n()) within = c;
        } else if (!above) {
            above = c.capped(large_n);
        }
    }
    if (within) return within;
    if (above && above->n() > max_n) return above;
    return std::nullopt;
}

std::vector<kit::Case> Driver::timed_cases(kit::u64 timed_size) const {
    std::vector<kit::Case> timed = problem_.timed ? problem_.timed() : std::vector<kit::Case>{};
    if (timed_size)
        for (auto& c : timed)
            if (!c.shape.two_d) c.shape = kit::Shape::line(timed_size);
    return timed;
}

std::vector<kit::Case> Driver::launch_only_cases(kit::u64 large_n, kit::u64 timed_size) const {
    std::vector<kit::Case> out;
    auto add = [&](const kit::Case& c) {
        if (c.n() <= large_n) return;
        for (const auto& o : out)  // the distribution does not change a launch
            if (o.shape.text() == c.shape.text() && o.params.label() == c.params.label()) return;
        out.push_back(c);
    };
    for (const auto& c : problem_.cases()) add(c);
    for (const auto& c : timed_cases(timed_size)) add(c);
    return out;
}

std::unique_ptr<kit::Problem> Driver::launch_only(const kit::Case& c, void* fn, kit::u64 seed,
                                                  bool sampled_values,
                                                  const std::function<void()>& at_call) {
    kit::Setup setup;
    setup.stream = stream_;
    setup.seed = seed;
    std::unique_ptr<kit::Problem> p = problem_.make(c, setup);
    if (sampled_values)
        for (kit::Buffer* b : p->buffers()) b->sample_values();
    if (at_call) at_call();
    call([&] { return p->call(fn, kit::Side::Learner); });
    return p;
}

void Driver::call(const std::function<cudaError_t()>& f) {
    marker_(cudalings::Marker::CallStart);
    const cudaError_t returned = f();
    marker_(cudalings::Marker::CallEnd);
    // The whole device, not only the stream: work hidden on another stream must finish too.
    const cudaError_t synced = dev::sync_device_status();
    const cudaError_t last = dev::take_last_error();
    if (returned != cudaSuccess) throw LearnerError{returned, true};
    if (synced != cudaSuccess) throw LearnerError{synced, false};
    if (last != cudaSuccess) throw LearnerError{last, false};
}

CaseResult Driver::run_case(int index, const kit::Case& c, void* fn, kit::u64 seed,
                            bool exact_inputs) {
    CaseResult r;
    r.index = index;
    r.name = c.label();
    r.n = c.n();
    r.size = c.shape.text();
    r.rows = c.shape.two_d ? c.shape.rows : 0;
    r.cols = c.shape.two_d ? c.shape.cols : 0;
    kit::Setup setup;
    setup.stream = stream_;
    setup.seed = seed;
    setup.exact_inputs = exact_inputs;
    std::unique_ptr<kit::Problem> p = problem_.make(c, setup);
    p->expect();
    std::uint64_t first_bits = 0;
    for (int k = 0; k < c.calls; ++k) {
        poison(*p);
        dev::sync_device();
        call([&] { return p->call(fn, kit::Side::Learner); });
        kit::Outcome o = judge_call(*p);
        const std::string which =
            "call " + std::to_string(k + 1) + " of " + std::to_string(c.calls);
        if (o.pass() && c.same_bits) {
            const std::uint64_t bits = fingerprint(*p);
            if (k == 0) first_bits = bits;
            if (bits != first_bits) {
                o.status = kit::Status::Wrong;
                o.reason = "non-deterministic";
                o.detail = which +
                           " on the same input left different bits than call 1, each within "
                           "the tolerance, but this step must give the same bits on every call. "
                           "A float sum's last bits depend on the order of its additions, so "
                           "something adds in an order that changes from call to call: one "
                           "atomicAdd per block, for example, adds in the order the blocks "
                           "happen to finish. Add the partials in a fixed order (a second pass).";
            }
        }
        if (!o.pass()) {
            if (k > 0 && o.reason != "non-deterministic") {
                o.reason = which + ": " + o.reason;
                o.detail = "The first " + plural(k, "call") + " on the same input were right; " +
                           which + " was not (a race that shows only sometimes?). " + o.detail;
            }
            fill(r, o);
            return r;
        }
        if (k + 1 == c.calls) fill(r, o);
    }
    return r;
}

cudalings::TimingResult Driver::time_case(const kit::Case& c, void* fn, void* reference,
                                          kit::u64 seed, std::size_t l2_bytes,
                                          const std::function<void()>& tick, const Apart* apart) {
    kit::Setup setup;
    setup.stream = stream_;
    setup.seed = seed;
    // The learner and the reference are timed on the same buffers (each learner output is
    // verified before the reference overwrites it; every sample starts from fresh inputs and
    // poisoned outputs). Separate output buffers for the reference made identical code differ
    // by up to 2x where the time depends on where the outputs live: global atomics to a few
    // hundred bins on the H100 (docs/methodology.md). CUDALINGS_TIMING_BUFFERS=separate brings
    // back the reference's own outputs, for that experiment.
    setup.spare = reference != nullptr && separate_timing_buffers();
    TimedProblem run(problem_.make(c, setup), fn, reference);
    run.problem().expect();
    poison(run.problem());
    dev::sync_device();
    // The reference in a process of its own (Apart) is timed on the learner's buffers only.
    PairTiming t = time_pair(run, stream_, l2_bytes, reference != nullptr, tick,
                             setup.spare ? nullptr : apart);
    cudalings::TimingResult out;
    out.column = c.column;
    out.name = c.label();
    out.problem = problem_.name;
    out.n = c.n();
    out.size = c.shape.text();
    const kit::Traffic traffic = run.problem().traffic();  // after the last refresh
    out.bytes = traffic.bytes;
    out.fp32_ops = traffic.fp32_ops;
    out.learner = side_of(t.learner);
    if (t.has_reference) out.reference = side_of(t.reference);
    out.note = t.note;
    out.verified = t.verified;
    out.failed_sample = t.failed_sample;
    fill(out.failure, t.failure);
    out.outside_stream = t.outside_stream;
    out.refreshed = t.refreshed;
    out.host_median_us = t.learner_host.median;
    out.host_overhead_us = t.host_overhead_us;
    out.host_overhead_iqr_us = t.host_overhead_iqr_us;
    out.flush_us = t.flush_us;
    out.flush_before_us = t.flush_before_us;
    out.reference_host_median_us = t.reference_host.median;
    out.reference_before_us = t.reference_before_us;
    out.reference_after_us = t.reference_after_us;
    out.reference_drift = t.reference_drift;
    out.learner_phases = t.learner_phases;
    out.others_on_gpu = t.others_on_gpu;
    out.warmup_ms = t.warmup_ms;
    out.sampling_ms = t.sampling_ms;
    out.untimed_ms = t.untimed_ms;
    out.warmup_rounds = t.warmup_rounds;
    return out;
}

cudalings::ProfileCallEvent Driver::profile_case(const kit::Case& c, void* fn, kit::u64 seed,
                                                 std::size_t l2_bytes,
                                                 const std::function<void()>& begin,
                                                 const std::function<void()>& end) {
    kit::Setup setup;
    setup.stream = stream_;
    setup.seed = seed;
    TimedProblem run(problem_.make(c, setup), fn, nullptr);
    run.problem().expect();
    poison(run.problem());
    dev::sync_device();
    const ProfiledCall call = profile_call(run, stream_, l2_bytes, begin, end);
    cudalings::ProfileCallEvent out;
    out.column = c.column;
    out.name = c.label();
    out.problem = problem_.name;
    out.n = c.n();
    out.size = c.shape.text();
    out.bytes = run.problem().traffic().bytes;
    out.verified = call.verified;
    fill(out.failure, call.failure);
    return out;
}

}  // namespace runner
