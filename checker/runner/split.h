// The runner as the judge of the judge split (docs/architecture.md): the learner's object is
// never loaded here. A learner's process (cudalings-learner) loads it with the lesson's call
// shims; this process makes every buffer, in device memory it can lend (learner/lend.h), sends
// each call packed (kit/remote_call.h), and reads the outputs from its own mappings. What the
// learner's process says is a claim at most: that a call returned, with which cudaError_t, and
// its own events' times, which the judge's clock checks.
//
// A buffer is lent the first time a call names it, and taken back when the judge frees it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "device.h"
#include "judge_link.h"
#include "lend.h"
#include "remote_call.h"

namespace runner {

// The learner's process ended (by its own hand: a crash, an exit in a call) during a call.
struct LearnerGone {
    std::string why;
    std::string reason;  // as an ended runner's is worded: "exit code 1", "SIGSEGV"
};

class Split;

// The judge's device memory, made so that the processes its calls are made in can map it
// (learner/lend.h): every buffer of the checks while a step runs in another process. A buffer is
// lent to each process the first time one of its calls names it, and taken back from every
// process when the judge frees it.
class LentMemory : public dev::LendableMemory {
  public:
    void* allocate(std::size_t bytes) override;
    void release(void* p) noexcept override;
    // The allocation holding `p` (null when none) and p's offset in it.
    cudalings::lend::Loan* find(const void* p, std::uint64_t& offset);
    // The processes told when a loan goes (Split registers itself).
    void watch(Split* s);
    void unwatch(Split* s);

  private:
    std::map<std::uintptr_t, cudalings::lend::Loan> held_;  // by address
    std::vector<Split*> callers_;
};
// This process's one LentMemory.
LentMemory& lent_memory();

// One process the judge's calls are made in: the learner's (its object), or the reference's
// (the solution's object, timed in a process of its own: runner/timing.h).
class Split : public kit::remote::Lender {
  public:
    enum class Role { Learner, Reference };
    explicit Split(Role role = Role::Learner);
    ~Split() override;
    Split(const Split&) = delete;
    Split& operator=(const Split&) = delete;

    struct Start {
        std::string learner, step, shims, symbol;
        // A timed check: probes of the judge's clock before the learner's object is loaded
        // (cudalings::LearnerStart), each after `before_probe` (a cold L2, as before a call).
        int probes = 0;
        std::function<double()> before_probe;
        std::function<void()> after_probe;  // inside the judge's clock (timing.h, gpu_turn)
        bool spin = false;  // no sleeping for replies without probes too (a timing's process)
    };
    // Starts the learner's process early (on a GPU: before this process creates its own CUDA
    // context, so both contexts are made at once, and while the step is still being built). Its
    // Ready waits on the socket until start(). False with `why` when no process was started.
    bool launch(const Start& how, std::string* why);
    // start() in two: ready() waits for the process's Ready (its CUDA context made) and its
    // probes; load() has it load the object and makes this process the route of its calls.
    bool ready(const Start& how, std::string* why);
    bool load(const Start& how, std::string* why, bool* learner_fault);
    // Starts the learner's process (unless launched) and makes this process the route of every
    // call of the learner's entry point. False with `why` when the learner's process did not get as
    // far as Loaded; `learner_fault` then says whether the learner's code ended it (after Ready).
    bool start(const Start& how, std::string* why, bool* learner_fault);
    // Says Quit and waits for the learner's process (at most `grace_seconds`, then kills its
    // group).
    void finish(double grace_seconds = 5);

    // LentMemory: the loan at `address` goes (the process unmaps it).
    void taken_back(std::uintptr_t address);
    // kit::remote::Lender: lends the allocation holding `p` now if it is not lent yet.
    bool locate(const void* p, std::uint32_t& loan, std::uint64_t& offset) const override;

    // Called when the learner's function has returned (its device is being synchronised).
    void on_returning(std::function<void()> f) { route_.returning = std::move(f); }

    // Under the emulator (runner/emulator_adapter.h): the options that go before each call, the
    // marks that go with each loan, what the learner's emulator reported during a call (with
    // this process's clock around the call, seconds), and a thread that never ended (the
    // handler does not return).
    struct Emulated {
        std::function<std::string()> setup;
        std::function<std::string(const void* allocation)> marks;
        std::function<void(const std::vector<std::string>& reports, double seconds)> reports;
        std::function<void(const std::string& stuck)> stuck;
        // The sampled sizes' values (emulator.h, fill_on_demand): pages the learner's process
        // asks to be made, and the words its kernels wrote in the tracked outputs.
        std::function<void(std::uint64_t address, std::uint64_t bytes)> make;
        std::function<void(const std::string& written)> written;
    };
    void emulated(Emulated e) {
        emulated_ = std::move(e);
        link_.on_make(emulated_.make);
    }
    // Whether the learner's context still works after the last call (no sticky error).
    bool learner_context_ok() const { return context_ok_; }
    const cudalings::LearnerState& state() const { return link_.state(); }
    bool loaded() const { return started_; }
    // The round trip's figures (the probes before load), for a process started without probes.
    const kit::remote::Route& route() const { return route_; }
    void take_clock_figures(const kit::remote::Route& from) {
        route_.overhead_us = from.overhead_us;
        route_.overhead_iqr_us = from.overhead_iqr_us;
        route_.canary_us = from.canary_us;
    }

  private:
    cudaError_t send(const kit::remote::CallMessage& m);
    std::string ended() const;
    std::string end_reason() const;
    kit::remote::Route*& global_route() const;
    Role role_;
    mutable cudalings::JudgeLink link_;
    mutable std::map<std::uintptr_t, std::uint32_t> lent_;  // loans lent to it: their numbers
    kit::remote::Route route_;
    Emulated emulated_;
    bool started_ = false, context_ok_ = true;
    bool launched_ = false;  // launch() started the process
    std::string step_;       // the learner's object
};

}  // namespace runner
