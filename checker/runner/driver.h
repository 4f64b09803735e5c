// The one driver: everything around a lesson's problem, the same for every lesson. For a case:
// make the problem's buffers, compute what is expected, then for each call poison every output
// and workspace, call the step, synchronize the whole device, check every guard zone, that the
// inputs are unchanged, and the values (and, for repeated calls, that each call is right and,
// where asked, gives the same bits). For timing: the same problem with spare outputs for the
// reference, fresh inputs before every sample, every timed output verified.
#pragma once

#include <cuda_runtime.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "../core/run/protocol.h"
#include "kit.h"
#include "timing.h"

namespace runner {

// Called around the learner's host function (Marker::CallStart, CallEnd): the supervisor's
// heartbeat, and how the checker tells a hang in host code from one in a kernel.
using MarkerSink = std::function<void(cudalings::Marker)>;

class Driver {
  public:
    Driver(const kit::ProblemInfo& problem, cudaStream_t stream, MarkerSink marker)
        : problem_(problem), stream_(stream), marker_(std::move(marker)) {}

    // The problem's cases; with max_n > 0 (the emulator, the sanitizer) the cases above it are
    // left out, except the first of them, which runs capped to max_n.
    std::vector<kit::Case> cases(kit::u64 max_n) const;
    // With cases(max_n), one more case above max_n and up to large_n (emulation's values-only
    // case): the largest of the problem's cases in (max_n, large_n], else the first case above
    // large_n cut down to it; none when the problem has no case above max_n.
    std::optional<kit::Case> large_case(kit::u64 max_n, kit::u64 large_n) const;
    // The timed cases; timed_size > 0 sets the size of 1-D ones (a step's "timed_size").
    std::vector<kit::Case> timed_cases(kit::u64 timed_size) const;
    // Every case above large_n, and every timed case, at full size, each once (emulation's
    // launch-only pass): the sizes whose launches the emulator checks without running them.
    std::vector<kit::Case> launch_only_cases(kit::u64 large_n, kit::u64 timed_size) const;

    // Runs one case of the step `fn`. Throws LearnerError when the step's call fails.
    cudalings::CaseResult run_case(int index, const kit::Case& c, void* fn, kit::u64 seed,
                                   bool exact_inputs);
    // One call of `fn` on a case whose buffers are made and never filled: under the emulator's
    // dry mode, its launches are checked and not run (or run a sample of their blocks). With
    // `sampled_values` (a problem that declares kSampledValues), its inputs are made where they
    // are read and its outputs' written words recorded, for the caller to judge. `at_call` runs
    // after the buffers are made, right before the call. Returns the problem, after the call.
    // Throws LearnerError when the step's call fails (a launch the GPU would refuse: a grid
    // dimension over its limit; an access out of bounds in a sampled block).
    std::unique_ptr<kit::Problem> launch_only(const kit::Case& c, void* fn, kit::u64 seed,
                                              bool sampled_values,
                                              const std::function<void()>& at_call);
    // Times `fn` (and `reference`, when not null) on a timed case.
    // `apart` (the judge split): the reference's calls in a process of its own (timing.h).
    cudalings::TimingResult time_case(const kit::Case& c, void* fn, void* reference, kit::u64 seed,
                                      std::size_t l2_bytes, const std::function<void()>& tick,
                                      const Apart* apart = nullptr);

    // One call of `fn` on a timed case for a profiler (timing.h, profile_call).
    cudalings::ProfileCallEvent profile_case(const kit::Case& c, void* fn, kit::u64 seed,
                                             std::size_t l2_bytes,
                                             const std::function<void()>& begin,
                                             const std::function<void()>& end);

  private:
    // Runs the learner's host function, then synchronizes the whole device.
    void call(const std::function<cudaError_t()>& f);
    const kit::ProblemInfo& problem_;
    cudaStream_t stream_;
    MarkerSink marker_;
};

// Guards of every buffer, then the inputs, then the problem's own judgement.
kit::Outcome judge_call(kit::Problem& p);

// A case result from a judge's outcome.
void fill(cudalings::CaseResult& r, const kit::Outcome& o);

}  // namespace runner
