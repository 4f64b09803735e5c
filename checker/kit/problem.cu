#include "problem.h"

#include <deque>

namespace kit {
namespace {

// Deques: a registered entry never moves, so pointers to it stay valid as plugins load.
std::deque<ProblemInfo>& problem_registry() {
    static std::deque<ProblemInfo> problems;
    return problems;
}

std::deque<Baseline>& baseline_registry() {
    static std::deque<Baseline> baselines;
    return baselines;
}

}  // namespace

namespace detail {
u64 next_input_stream(Problem& p) { return p.inputs_++; }
cudaStream_t stream_of(const Problem& p) { return p.stream(); }
u64 seed_of(const Problem& p) { return p.setup().seed; }
bool exact_inputs(const Problem& p) { return p.setup().exact_inputs; }
bool spare_outputs(const Problem& p) { return p.setup().spare; }
}  // namespace detail

namespace remote {
Route*& current_route() {
    static Route* route = nullptr;
    return route;
}
void* learner_entry() {
    static char mark;
    return &mark;
}
Route*& reference_route() {
    static Route* route = nullptr;
    return route;
}
void* reference_entry() {
    static char mark;
    return &mark;
}
}  // namespace remote

void Problem::regenerate(u64 seed) {
    for (Buffer* b : buffers_)
        if (b->is_input()) b->regenerate(seed, setup_.stream);
    expect();
}

void* library_scratch(std::size_t bytes) {
    static void* buffer = nullptr;
    static std::size_t size = 0;
    if (bytes > size) {
        dev::release(buffer);
        buffer = nullptr;
        buffer = dev::allocate(bytes);
        size = bytes;
    }
    return buffer;
}

bool register_problem(ProblemInfo info) {
    problem_registry().push_back(std::move(info));
    return true;
}

bool register_baseline(Baseline b) {
    baseline_registry().push_back(std::move(b));
    return true;
}

const ProblemInfo* find_problem(const std::string& name) {
    for (const auto& p : problem_registry())
        if (p.name == name) return &p;
    return nullptr;
}

const Baseline* find_baseline(const std::string& problem, const std::string& name) {
    for (const auto& b : baseline_registry())
        if (b.problem == problem && b.name == name) return &b;
    return nullptr;
}

std::vector<const ProblemInfo*> all_problems() {
    std::vector<const ProblemInfo*> out;
    for (const auto& p : problem_registry()) out.push_back(&p);
    return out;
}

std::vector<const Baseline*> all_baselines() {
    std::vector<const Baseline*> out;
    for (const auto& b : baseline_registry()) out.push_back(&b);
    return out;
}

}  // namespace kit
