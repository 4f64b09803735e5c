// A lesson spec: everything the runner knows about one lesson's exercise signature — its
// cases, how to build inputs and the expected result, how many bytes a call must move, and
// how to time it. The runner's core is the same for every lesson; a lesson plugs in here.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "harness.h"

namespace runner {

// One prepared timed call: inputs generated once, output reused.
struct TimedRun {
    virtual ~TimedRun() = default;
    std::uint64_t n = 0;
    double bytes = 0;  // minimal bytes a call must move (reads + writes)
    virtual cudaError_t learner(cudaStream_t s) = 0;
    virtual cudaError_t reference(cudaStream_t s) = 0;
    // Checks the output of the most recent learner call.
    virtual harness::CaseOutcome verify_learner(cudaStream_t s) = 0;
    // New inputs (and expected results) for the next timed call, and the output poisoned
    // again: a step that replays a cached result then fails. Returns false when the spec
    // cannot refresh (then only the last timed output is verified).
    virtual bool refresh(cudaStream_t s, std::uint64_t seed) {
        (void)s;
        (void)seed;
        return false;
    }
};

// A library routine timed beside the lesson's steps (e.g. cub::DeviceReduce::Sum). Its
// TimedRun's learner() calls the library; reference() is not used.
struct Baseline {
    std::string name;
    std::unique_ptr<TimedRun> (*make)(cudaStream_t s, std::uint64_t seed);
};

class Spec {
  public:
    virtual ~Spec() = default;
    virtual const char* name() const = 0;    // the "spec" of a lesson in course.json
    virtual const char* symbol() const = 0;  // the extern "C" function every step defines
    virtual std::vector<harness::CaseDef> cases() const = 0;
    // Build the inputs, call `fn` through ctx.call, and judge the output.
    virtual harness::CaseOutcome run_case(harness::Ctx& ctx, void* fn, const harness::CaseDef& c,
                                          std::uint64_t seed) = 0;
    // `reference` may be null (no prebuilt reference): then only the learner is timed.
    virtual std::unique_ptr<TimedRun> prepare_timing(cudaStream_t s, void* fn, void* reference,
                                                     std::uint64_t seed) = 0;
    virtual std::vector<Baseline> baselines() const { return {}; }
};

bool register_spec(Spec* (*make)());
Spec* find_spec(const std::string& name);
std::vector<std::string> spec_names();

}  // namespace runner

#define CUDALINGS_REGISTER_SPEC(Type)                     \
    static const bool cudalings_spec_registered_##Type =  \
        ::runner::register_spec([]() -> ::runner::Spec* { \
            static Type instance;                         \
            return &instance;                             \
        })
