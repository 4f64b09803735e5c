// The judge's end of the judge split: starts the learner's process (directly, or inside the
// grading sandbox with its seccomp filter), lends it device memory, sends it packed calls and
// reads its replies. Nothing of what the learner says decides anything by itself: a Returned
// says the call returned, and the judge then reads the outputs from its own mappings.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "lend.h"
#include "remote_call.h"
#include "supervise.h"
#include "wire.h"

namespace cudalings {

class Sandbox;

struct LearnerStart {
    std::string learner;  // the cudalings-learner executable
    std::string step;     // the learner's object
    std::string shims;    // the lesson's call shims
    std::string symbol;   // the entry point the learner's object must define ("": not looked up)
    bool filter = true;
    const Sandbox* sandbox = nullptr;  // inside bwrap (with the sandbox's filter too) when set
    int shared_memory = -1;            // lend::shared_memory(): the learner's descriptor 4
    // Probes of the judge's clock before the learner's object is loaded (a timed check on a
    // GPU): this many calls of the learner process's own, each after `before_probe` (the
    // judge's cold L2, as before a timed call), which returns the time of that work of the
    // judge's own (its canary). LearnerState::probe_overheads_us and probe_canary_us have them.
    int probes = 0;
    std::uint64_t probe_bytes = 16u << 20;
    std::function<double()> before_probe;
    // Inside the judge's clock, after each probe's Returned (as after a call's: the judge's turn
    // on the GPU, runner/timing.h gpu_turn).
    std::function<void()> after_probe;
    // Replies are waited for without sleeping (as in a timed check with probes) even without
    // probes: a process started for timing alone (runner/timing.h, Apart).
    bool spin = false;
};

// How a learner's process ended or stands, as the judge saw it.
struct LearnerState {
    bool ready = false, loaded = false;
    bool filtered = false, capabilities_dropped = false;
    double context_ms = 0;
    bool ended = false;  // the process is gone
    int exit_code = -1, signal = 0;
    // It wrote something on its socket that is not a whole message, and was killed for it.
    bool garbled = false;
    // It answered another exchange than the one asked (a second Returned, or one before its call
    // was made), and was killed for it.
    bool out_of_turn = false;
    std::string message;  // the learner's own text with a refusal (a failed load)
    // Each probe's round trip on the judge's clock less the time its events saw (microseconds):
    // what a call costs beyond its events, measured where nothing of the learner's was loaded.
    std::vector<double> probe_overheads_us;
    std::vector<double> probe_canary_us;
};

// Starts `argv` in a process group of its own with `moves` in place (supervise.h); the child is
// killed when the judge ends (PR_SET_PDEATHSIG: a learner blocked in a kernel never outlives
// the judge the supervisor stopped). The argument array is built before the fork: the judge has
// CUDA's threads, so the child may not allocate.
// The child's pid, or -1.
pid_t spawn(const std::vector<std::string>& argv, const DescriptorMove* moves, int count);

class JudgeLink : public kit::remote::Lender {
  public:
    JudgeLink() = default;
    ~JudgeLink() override;
    JudgeLink(const JudgeLink&) = delete;
    JudgeLink& operator=(const JudgeLink&) = delete;

    // Starts the learner's process and returns at once: it creates its CUDA context and says
    // Ready while the judge does other work (its own context, the build of the step). start()
    // does this itself when it was not done. False with `why` when no process was started.
    bool launch(const LearnerStart& how, std::string* why);
    // Starts the learner (unless launched) and waits for Ready and Loaded; the entry point's
    // name goes with Load. False when it did not get there: state() says whether it ended (the
    // learner's code, once Ready was said) or refused.
    bool start(const LearnerStart& how, std::string* why);
    // start() in two: ready() launches it (unless launched), waits for Ready (its CUDA context
    // made) and makes the probes; load() has it load the object. Between the two it runs nothing
    // but the checker's own code.
    bool ready(const LearnerStart& how, std::string* why);
    bool load(const LearnerStart& how, std::string* why);
    // Lends `loan` (made with lend::make): a copy of its descriptor travels (the loan keeps its
    // own, for other processes; lend::release closes it). `id`
    // (when given) gets the loan's number; `marks` (the emulator's, emu_codec.h) go with it.
    // The learner's reply (Mapped) is not waited for here: it comes before the next call's
    // (no round trip a loan), and a loan it could not map fails that call (Returned::unmapped).
    bool lend(lend::Loan& loan, std::string* why, std::uint32_t* id = nullptr,
              const std::string& marks = {});
    // Takes a loan back before the judge frees it: the learner unmaps it (no reply; the memory
    // lives until both sides let it go).
    void unlend(std::uint32_t id);
    // Makes the call; false when the learner's process went away (state() says how).
    struct Returned {
        int status = 0, sync_status = 0, last_status = 0;
        bool context_ok = true;
        double ms = 0, on_stream_us = 0, whole_device_us = 0;
        std::string text;
        // Under the emulator: what its emulator found during the call (emu_codec.h), and, when
        // a CUDA thread never ended, that finding (then nothing else came: the process ends).
        std::vector<std::string> reports;
        std::string stuck;
        // Host code touched device memory (the learner's words for it; the process ended with
        // SIGSEGV and the call was not answered), and where in the learner's object the
        // instruction was (its offset, a claim; `fault_in_step` false when it was elsewhere).
        std::string fault;
        std::uint64_t fault_offset = 0;
        bool fault_in_step = false;
        // Under the emulator, at a sampled size: the words its kernels wrote (emu_codec.h).
        std::string written;
        // A loan the learner's process said it could not map (why), since it started.
        std::string unmapped;
    };
    // Under the emulator: makes the pages of values made on demand that the learner's process
    // asks for during a call (Make), before it says Made.
    void on_make(std::function<void(std::uint64_t address, std::uint64_t bytes)> make) {
        make_ = std::move(make);
    }
    // `returning` (when set) is called when the learner says its function returned and the
    // device's synchronisation begins. `setup` (the emulator's options, emu_codec.h) goes first.
    bool call(const kit::remote::CallMessage& m, Returned& r,
              const std::function<void()>& returning = {}, const std::string& setup = {});
    // Says Quit and waits for the process (killed after `grace_seconds`).
    void finish(double grace_seconds = 5);

    pid_t pid() const { return pid_; }
    const LearnerState& state() const { return state_; }

    bool locate(const void* p, std::uint32_t& loan, std::uint64_t& offset) const override;

  private:
    bool receive(wire::Message& m);
    // Kills the learner's process (its group) and waits for it.
    void end_now();
    std::uint32_t exchanges_ = 0;  // Probes and Calls sent: each one's number
    // The probes of LearnerStart (before Load): false when the process went away or refused.
    bool probe(const LearnerStart& how, std::string* why);
    // Sends `m` (a Call or a Probe) and reads the replies until its Returned: what call()
    // says of its result.
    bool exchange(const wire::Message& m, Returned& r, const std::function<void()>& returning);
    // A Mapped reply to a loan that awaits one: noted (a failure in unmapped_); false when no
    // loan of its number awaits.
    bool mapped(const wire::Message& r);
    // Reads every awaited Mapped reply; false (with `why`) when one did not come or said no.
    bool take_mapped(std::string* why);
    static constexpr std::size_t kAwaitedMost = 16;
    std::vector<std::uint32_t> awaiting_;  // loans whose Mapped has not come yet
    std::string unmapped_;                 // the first loan the learner could not map

    std::string payload_;  // of the last message received
    std::function<void(std::uint64_t, std::uint64_t)> make_;
    void reap(bool wait);
    int socket_ = -1;
    pid_t pid_ = -1;
    bool group_ended_ = false;  // finish() has killed what was left of its process group
    // A timed check (LearnerStart::probes): replies are waited for without sleeping, for up to
    // wire::kSpinSeconds each (wire::wait_readable), then in recv.
    bool spin_ = false;
    LearnerState state_;
    struct Lent {
        std::uintptr_t address;
        std::size_t bytes;
        std::uint32_t id;
    };
    std::vector<Lent> lent_;
    std::uint32_t next_id_ = 0;
};

}  // namespace cudalings
