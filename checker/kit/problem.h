// The lesson kit: problems. A problem is one entry point of a lesson (one signature) with its
// cases: it owns the inputs, outputs and workspace of one case (buffers register themselves),
// calls the step, computes what it should have produced and judges it. The runner's one driver
// does everything around that — poison, call, guards, inputs unchanged, repeated calls, timing
// with fresh inputs — the same way for every lesson.
//
// A lesson's checks (checks/NN_topic/checks.cu) define one class per problem:
//
//   class Saxpy : public kit::Problem {
//     public:
//       static constexpr const char* kName = "saxpy";      // what lesson.json names
//       static constexpr const char* kSymbol = "saxpy";    // the extern "C" entry point
//       static std::vector<kit::Case> cases();             // the correctness cases
//       static std::vector<kit::Case> timed();             // the timed cases (one column each)
//       Saxpy(const kit::Case& c, const kit::Setup& s);    // buffers as members
//       cudaError_t call(void* fn, kit::Side side) override;
//       kit::Outcome judge() override;
//       kit::Traffic traffic() const override;
//   };
//   CUDALINGS_PROBLEM(Saxpy);
//
// and library baselines, in checks/NN_topic/baselines.cu (built for GPUs only), as functions
// with the entry point's signature:  CUDALINGS_BASELINE("saxpy", "cublas", cublas_saxpy);
#pragma once

#include <cuda_runtime.h>

#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "case.h"
#include "data.h"
#include "judge.h"
#include "remote_call.h"

namespace kit {


// How the buffers of one problem are made.
struct Setup {
    cudaStream_t stream = nullptr;
    u64 seed = 0;
    bool spare = false;         // outputs get a spare copy for the reference's calls
    bool exact_inputs = false;  // inputs without guard zones (for compute-sanitizer's memcheck)
};

// Verdict names (as the report spells them: "TIMEOUT", "CRASH") and what to tell the learner
// when a step gets that verdict in this problem, next to the checker's own words. A name may
// carry the words its reason must contain, "MEMORY_ERROR/out of bounds|Invalid __global__ read",
// so that advice about one kind of memory error is not given for another (core/run/conclude.h).
using Advice = std::vector<std::pair<std::string, std::string>>;

class Problem {
  public:
    Problem(const Case& c, const Setup& s) : case_(c), setup_(s) {}
    virtual ~Problem() = default;
    Problem(const Problem&) = delete;
    Problem& operator=(const Problem&) = delete;

    const Case& test() const { return case_; }
    u64 n() const { return case_.n(); }
    const Shape& shape() const { return case_.shape; }
    const Params& params() const { return case_.params; }
    cudaStream_t stream() const { return setup_.stream; }
    const Setup& setup() const { return setup_; }

    // Calls the entry point `fn` with this case's buffers (the spare outputs for the reference,
    // where the problem has them).
    virtual cudaError_t call(void* fn, Side side) = 0;
    // Computes what the outputs should be for the current inputs: after the buffers are made and
    // after every regeneration (fresh inputs for a timed sample). Optional.
    virtual void expect() {}
    // Judges the values of the outputs. The driver has already checked the guard zones of every
    // buffer and that the inputs are unchanged.
    virtual Outcome judge() = 0;
    // The minimal bytes one call must move (reads plus writes), for GB/s and the floor.
    virtual Traffic traffic() const = 0;
    static Advice advice() { return {}; }

    // The driver's side.
    const std::vector<Buffer*>& buffers() const { return buffers_; }
    void regenerate(u64 seed);  // every input from `seed`, then expect()

  protected:
    // The entry point `fn`, called like a function of type Fn (here or in the learner's process).
    template <typename Fn>
    remote::Invoker<Fn> entry(void* fn) const {
        return remote::Invoker<Fn>(fn, host_);
    }
    // A small host array (at most 4 KiB in all) that calls of this problem pass by pointer: a
    // call made in the learner's process gets a copy of its bytes.
    void share_host(const void* p, std::size_t bytes) { host_.emplace_back(p, bytes); }

  private:
    friend class Buffer;
    friend u64 detail::next_input_stream(Problem& p);
    Case case_;
    Setup setup_;
    std::vector<Buffer*> buffers_;
    remote::HostBlocks host_;
    u64 inputs_ = 0;
};

// `static constexpr bool kSampledValues = true;` in a problem: every output element is judged
// from the inputs alone (its compare reads no expect()ed array and no other output), so under
// emulation the outputs a sampled block writes at the sizes too large to emulate whole can be
// judged, with the inputs made where they are read (docs/emulator.md).
template <typename P, typename = void>
struct declares_sampled_values : std::false_type {};
template <typename P>
struct declares_sampled_values<P, std::void_t<decltype(P::kSampledValues)>>
    : std::bool_constant<P::kSampledValues> {};

struct ProblemInfo {
    std::string name, symbol;
    std::vector<Case> (*cases)() = nullptr;
    std::vector<Case> (*timed)() = nullptr;
    Advice advice;
    bool sampled_values = false;  // declares_sampled_values
    std::function<std::unique_ptr<Problem>(const Case&, const Setup&)> make;
};

template <typename P>
ProblemInfo describe() {
    ProblemInfo info;
    info.name = P::kName;
    info.symbol = P::kSymbol;
    info.cases = &P::cases;
    info.timed = &P::timed;
    info.advice = P::advice();
    info.sampled_values = declares_sampled_values<P>::value;
    info.make = [](const Case& c, const Setup& s) -> std::unique_ptr<Problem> {
        return std::make_unique<P>(c, s);
    };
    return info;
}

struct Baseline {
    std::string problem, name;
    void* fn = nullptr;  // the entry point's signature
};

// Scratch memory for a library baseline (CUB's temporary storage, say): one buffer per process,
// grown when a call needs more (that happens in the untimed warm-up), never freed.
void* library_scratch(std::size_t bytes);

bool register_problem(ProblemInfo info);
bool register_baseline(Baseline b);
const ProblemInfo* find_problem(const std::string& name);
const Baseline* find_baseline(const std::string& problem, const std::string& name);
std::vector<const ProblemInfo*> all_problems();
std::vector<const Baseline*> all_baselines();

}  // namespace kit

#define KIT_CONCAT_INNER(a, b) a##b
#define KIT_CONCAT(a, b) KIT_CONCAT_INNER(a, b)
#define CUDALINGS_PROBLEM(Type)                                         \
    [[maybe_unused]] static const bool KIT_CONCAT(kit_problem_, Type) = \
        ::kit::register_problem(::kit::describe<Type>())
#define CUDALINGS_BASELINE(problem, name, fn)                                \
    [[maybe_unused]] static const bool KIT_CONCAT(kit_baseline_, __LINE__) = \
        ::kit::register_baseline(::kit::Baseline{problem, name, reinterpret_cast<void*>(fn)})
