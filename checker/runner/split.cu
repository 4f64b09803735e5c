#include "split.h"

#include "supervise.h"
#include "timing.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace runner {

namespace lend = cudalings::lend;

namespace {
// The line of the learner's file that holds the instruction at `offset` in its object (addr2line
// over the object's line table), or 0 where the object has none (a GPU build's host code).
int line_of(const std::string& object, std::uint64_t offset) {
    char hex[32];
    std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(offset));
    cudalings::ChildOptions o;
    o.wall_seconds = 10;
    const cudalings::ChildResult r = cudalings::run_supervised({"addr2line", "-e", object, hex}, o);
    const std::size_t colon = r.out.head.rfind(':');
    return r.exited_ok() && colon != std::string::npos ? std::atoi(r.out.head.c_str() + colon + 1)
                                                       : 0;
}

// The learner's account of its fault, with the line the judge found for it: "host code read
// device memory in f() at line N: ...".
std::string fault_reason(const cudalings::JudgeLink::Returned& r, const std::string& step) {
    if (!r.fault_in_step) return r.fault;
    const int line = line_of(step, r.fault_offset);
    const std::size_t colon = r.fault.find(':');
    if (line <= 0 || colon == std::string::npos) return r.fault;
    return r.fault.substr(0, colon) + " at line " + std::to_string(line) + r.fault.substr(colon);
}
}  // namespace

void* LentMemory::allocate(std::size_t bytes) {
    lend::Loan loan;
    std::string why;
    if (!lend::make(bytes, loan, &why))
        throw dev::Error(cudaErrorMemoryAllocation,
                         "device memory the learner's process can "
                         "map (" +
                             std::to_string(bytes) + " bytes): " + why);
    held_[loan.address] = loan;
    return reinterpret_cast<void*>(loan.address);
}

void LentMemory::release(void* p) noexcept {
    auto it = held_.find(reinterpret_cast<std::uintptr_t>(p));
    if (it == held_.end()) return;
    for (Split* s : callers_) s->taken_back(it->first);
    lend::release(it->second);
    held_.erase(it);
}

lend::Loan* LentMemory::find(const void* p, std::uint64_t& offset) {
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    auto it = held_.upper_bound(a);
    if (it == held_.begin()) return nullptr;
    --it;
    if (a >= it->second.address + it->second.bytes) return nullptr;
    offset = a - it->second.address;
    return &it->second;
}

void LentMemory::watch(Split* s) { callers_.push_back(s); }

void LentMemory::unwatch(Split* s) {
    callers_.erase(std::remove(callers_.begin(), callers_.end(), s), callers_.end());
}

LentMemory& lent_memory() {
    static LentMemory memory;
    return memory;
}

Split::Split(Role role) : role_(role) { lent_memory().watch(this); }

Split::~Split() {
    finish();
    lent_memory().unwatch(this);
}

kit::remote::Route*& Split::global_route() const {
    return role_ == Role::Learner ? kit::remote::current_route() : kit::remote::reference_route();
}

namespace {
cudalings::LearnerStart learner_start(const Split::Start& how) {
    cudalings::LearnerStart s;
    s.learner = how.learner;
    s.step = how.step;
    s.shims = how.shims;
    s.symbol = how.symbol;
    s.filter = true;
    s.probes = how.probes;
    s.before_probe = how.before_probe;
    s.after_probe = how.after_probe;
    s.spin = how.spin;
    return s;
}
}  // namespace

bool Split::launch(const Start& how, std::string* why) {
    launched_ = link_.launch(learner_start(how), why);
    return launched_;
}

bool Split::start(const Start& how, std::string* why, bool* learner_fault) {
    *learner_fault = false;
    return ready(how, why) && load(how, why, learner_fault);
}

bool Split::ready(const Start& how, std::string* why) {
    cudalings::LearnerStart s = learner_start(how);
    // Under the emulator: its device memory, shared (the learner's descriptor 4); on a GPU each
    // loan travels as a descriptor of its own (-1 here). A process launched early has none.
    if (!launched_) {
        s.shared_memory = lend::shared_memory(why);
        if (s.shared_memory < 0 && why && !why->empty()) return false;
    }
    if (!link_.ready(s, why)) return false;
    if (const std::vector<double>& o = link_.state().probe_overheads_us; !o.empty()) {
        const cudalings::Summary overhead = cudalings::summarize(o);
        route_.overhead_us = overhead.median;
        route_.overhead_iqr_us = overhead.p75 - overhead.p25;
    }
    if (const std::vector<double>& c = link_.state().probe_canary_us; !c.empty())
        route_.canary_us = cudalings::summarize(c).median;
    return true;
}

bool Split::load(const Start& how, std::string* why, bool* learner_fault) {
    *learner_fault = false;
    if (!link_.load(learner_start(how), why)) {
        const cudalings::LearnerState& st = link_.state();
        // Ready was said and Loaded was not: the learner's code (a constructor) ended it.
        *learner_fault = st.ready && !st.loaded && st.ended && st.message.empty();
        if (*learner_fault && why) *why = ended();
        return false;
    }
    step_ = how.step;
    route_.symbol = how.symbol;
    route_.lender = this;
    route_.send = [this](const kit::remote::CallMessage& m) { return send(m); };
    global_route() = &route_;
    dev::set_lendable_memory(&lent_memory());
    started_ = true;
    return true;
}

void Split::finish(double grace_seconds) {
    if (started_ && global_route() == &route_) global_route() = nullptr;
    started_ = false;
    link_.finish(grace_seconds);
}

void Split::taken_back(std::uintptr_t address) {
    auto it = lent_.find(address);
    if (it == lent_.end()) return;
    link_.unlend(it->second);
    lent_.erase(it);
}

bool Split::locate(const void* p, std::uint32_t& loan, std::uint64_t& offset) const {
    lend::Loan* held = lent_memory().find(p, offset);
    if (!held) return false;
    auto it = lent_.find(held->address);
    if (it == lent_.end()) {
        std::string why;
        const std::string marks =
            emulated_.marks ? emulated_.marks(reinterpret_cast<const void*>(held->address)) : "";
        std::uint32_t id = 0;
        if (!link_.lend(*held, &why, &id, marks))
            throw LearnerGone{
                link_.state().ended ? ended() : "it did not map a buffer it was lent: " + why,
                end_reason()};
        it = lent_.emplace(held->address, id).first;
    }
    loan = it->second;
    return true;
}

cudaError_t Split::send(const kit::remote::CallMessage& m) {
    cudalings::JudgeLink::Returned r;
    const auto start = std::chrono::steady_clock::now();
    const bool answered =
        link_.call(m, r, route_.returning, emulated_.setup ? emulated_.setup() : std::string());
    if (answered && !r.stuck.empty() && emulated_.stuck) emulated_.stuck(r.stuck);
    if (!answered || !r.stuck.empty())
        throw LearnerGone{ended(), r.fault.empty() ? end_reason() : fault_reason(r, step_)};
    if (!r.unmapped.empty())
        throw LearnerGone{"it did not map a buffer it was lent: " + r.unmapped, end_reason()};
    if (emulated_.written) emulated_.written(r.written);
    if (emulated_.reports && !r.reports.empty())
        emulated_.reports(
            r.reports,
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (r.status == -1 || r.status == -2)  // no shim, or a message it could not unpack: ours
        throw dev::Error(cudaErrorUnknown,
                         "the learner's process could not make the call: " + r.text);
    route_.on_stream_us = r.on_stream_us;
    route_.whole_device_us = r.whole_device_us;
    context_ok_ = r.context_ok;
    if (r.status != cudaSuccess) return static_cast<cudaError_t>(r.status);
    if (r.sync_status != cudaSuccess)
        throw LearnerError{static_cast<cudaError_t>(r.sync_status), false};
    if (r.last_status != cudaSuccess)
        throw LearnerError{static_cast<cudaError_t>(r.last_status), false};
    return cudaSuccess;
}

std::string Split::end_reason() const {
    const cudalings::LearnerState& st = link_.state();
    if (st.garbled) return "it wrote what is not one of its messages on the checker's socket";
    if (st.out_of_turn)
        return "it answered a call on the checker's socket out of turn (a second answer, or one "
               "before the call was made)";
    if (!st.ended) return "stopped answering";
    return cudalings::describe_exit(st.signal, st.exit_code);
}

std::string Split::ended() const {
    const cudalings::LearnerState& st = link_.state();
    if (st.garbled)
        return "the process running your code wrote what is not one of its messages on the "
               "checker's socket, and the checker ended it";
    if (st.out_of_turn)
        return "the process running your code answered a call out of turn on the checker's "
               "socket, and the checker ended it";
    if (!st.ended) return "the process running your code stopped answering";
    return "the process running your code ended (" + end_reason() + ") instead of returning";
}

}  // namespace runner
