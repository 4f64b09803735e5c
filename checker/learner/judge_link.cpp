#include "judge_link.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <thread>

#include "sandbox.h"
#include "seccomp_filter.h"

namespace cudalings {

pid_t spawn(const std::vector<std::string>& argv, const DescriptorMove* moves, int count) {
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const pid_t judge = ::getpid();
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::setpgid(0, 0);
        if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != judge) ::_exit(122);
        if (!arrange_descriptors(moves, count)) ::_exit(120);
        // Nothing else of the judge's: its key's pipe, its channel, its own sockets.
        close_all_but_targets(moves, count);
        ::execv(args[0], args.data());
        ::_exit(121);
    }
    return pid;
}

JudgeLink::~JudgeLink() { finish(1); }

bool JudgeLink::launch(const LearnerStart& how, std::string* why) {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
        if (why) *why = "socketpair failed";
        return false;
    }
    std::vector<std::string> argv{how.learner, "--step", how.step, "--shims", how.shims};
    if (!how.filter) argv.push_back("--no-filter");
    int bpf = -1;
    if (how.sandbox) {
        // The sandbox's command names its filter's descriptor (Sandbox::kFilterDescriptor, 5,
        // above the learner's 3 and 4): the sandbox's filter goes there.
        argv = how.sandbox->command(argv, runner_view(argv, true), {});
        bpf = seccomp::export_bpf({}, why);
        if (bpf < 0) {
            ::close(sv[0]);
            ::close(sv[1]);
            return false;
        }
    }
    DescriptorMove moves[3];
    int count = 0;
    moves[count++] = {sv[1], 3};
    if (how.shared_memory >= 0) moves[count++] = {how.shared_memory, 4};
    if (bpf >= 0) moves[count++] = {bpf, Sandbox::kFilterDescriptor};
    pid_ = spawn(argv, moves, count);
    ::close(sv[1]);
    if (bpf >= 0) ::close(bpf);
    socket_ = sv[0];
    if (pid_ < 0) {
        ::close(socket_);
        socket_ = -1;
        if (why) *why = "fork failed";
        return false;
    }
    return true;
}

bool JudgeLink::start(const LearnerStart& how, std::string* why) {
    return ready(how, why) && load(how, why);
}

bool JudgeLink::ready(const LearnerStart& how, std::string* why) {
    if (state_.ready) return true;
    if (pid_ <= 0 && !launch(how, why)) return false;
    wire::Message m;
    if (!receive(m) || m.kind != wire::Kind::Ready) {
        if (why) *why = "the learner's process ended before it was ready";
        return false;
    }
    state_.ready = m.status == 0;
    if (!state_.ready) {
        m.text[sizeof m.text - 1] = '\0';
        if (why) *why = std::string("the learner's process could not start: ") + m.text;
        return false;
    }
    state_.filtered = m.flags & wire::kFiltered;
    state_.capabilities_dropped = m.flags & wire::kNoCapabilities;
    state_.context_ms = m.ms;
    // A checker built without libseccomp has no filter to install: its learner's process still
    // drops its capabilities, and the check goes on (the report says so: the runner's
    // start_learner). grade refuses such a build (its sandbox needs the filter).
    if (how.filter && !state_.filtered && seccomp::available()) {
        if (why)
            *why = std::string("the learner's process could not install its filter: ") + m.text;
        return false;
    }
    // A timed check: from here on the judge waits for the learner's replies without sleeping.
    spin_ = how.probes > 0 || how.spin;
    return probe(how, why);
}

bool JudgeLink::load(const LearnerStart& how, std::string* why) {
    wire::Message m;
    wire::Message load;
    load.kind = wire::Kind::Load;
    if (spin_) load.flags |= wire::kSpin;
    wire::set_text(load, how.symbol);
    if (!wire::send(socket_, load) || !receive(m) || m.kind != wire::Kind::Loaded) {
        if (why) *why = "the learner's process ended while its object was loading";
        return false;
    }
    if (m.status != 0) {
        state_.message = m.text;
        if (why) *why = std::string("the learner's object did not load: ") + m.text;
        return false;
    }
    state_.loaded = true;
    return true;
}

bool JudgeLink::probe(const LearnerStart& how, std::string* why) {
    for (int i = 0; i < how.probes; ++i) {
        if (how.before_probe) state_.probe_canary_us.push_back(how.before_probe());
        wire::Message m;
        m.kind = wire::Kind::Probe;
        m.bytes = how.probe_bytes;
        Returned r;
        const auto start = std::chrono::steady_clock::now();
        if (!exchange(m, r, {})) {
            if (why) *why = "the learner's process ended while it was probed";
            return false;
        }
        if (how.after_probe) how.after_probe();
        const double host_us =
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
                .count();
        if (r.status != 0 || r.sync_status != 0) {
            if (why) *why = "the learner's process failed a probe of the clock";
            return false;
        }
        state_.probe_overheads_us.push_back(host_us - r.on_stream_us);
    }
    return true;
}

bool JudgeLink::lend(lend::Loan& loan, std::string* why, std::uint32_t* id,
                     const std::string& marks) {
    // Replies still awaited are read first when there are many (the two sockets' buffers
    // must never both fill): a call lends a few buffers at most, so this rarely waits.
    if (awaiting_.size() >= kAwaitedMost && !take_mapped(why)) return false;
    wire::Message m;
    m.kind = wire::Kind::Lend;
    m.loan = next_id_++;
    m.bytes = loan.bytes;
    m.address = loan.address;
    if (!wire::send_with(socket_, m, marks, loan.fd >= 0 ? &loan.fd : nullptr,
                         loan.fd >= 0 ? 1 : 0)) {
        if (why) *why = "the learner's process is gone";
        reap(false);
        return false;
    }
    // The descriptor stays the loan's (lend::release closes it): the reference's process, timed
    // apart from the learner's (runner/timing.h), and each learner's process after the first are
    // lent the same allocation.
    awaiting_.push_back(m.loan);
    lent_.push_back({loan.address, loan.bytes, m.loan});
    if (id) *id = m.loan;
    return true;
}

bool JudgeLink::mapped(const wire::Message& r) {
    auto it = std::find(awaiting_.begin(), awaiting_.end(), r.loan);
    if (it == awaiting_.end()) return false;  // no loan of that number awaits its reply
    awaiting_.erase(it);
    if (r.status != 0 && unmapped_.empty()) {
        wire::Message copy = r;
        copy.text[sizeof copy.text - 1] = '\0';
        unmapped_ = std::string("the learner did not map the loan: ") + copy.text;
    }
    return true;
}

bool JudgeLink::take_mapped(std::string* why) {
    while (!awaiting_.empty()) {
        wire::Message r;
        if (!receive(r) || r.kind != wire::Kind::Mapped || !mapped(r)) {
            if (why) *why = "the learner did not map the loan";
            return false;
        }
    }
    if (!unmapped_.empty()) {
        if (why) *why = unmapped_;
        return false;
    }
    return true;
}

void JudgeLink::unlend(std::uint32_t id) {
    lent_.erase(
        std::remove_if(lent_.begin(), lent_.end(), [&](const Lent& l) { return l.id == id; }),
        lent_.end());
    if (socket_ < 0 || state_.ended) return;
    wire::Message m;
    m.kind = wire::Kind::Unlend;
    m.loan = id;
    if (!wire::send(socket_, m)) reap(false);
}

bool JudgeLink::call(const kit::remote::CallMessage& c, Returned& r,
                     const std::function<void()>& returning, const std::string& setup) {
    if (!setup.empty()) {
        wire::Message s;
        s.kind = wire::Kind::Setup;
        if (!wire::send_with(socket_, s, setup)) {
            reap(false);
            return false;
        }
    }
    wire::Message m;
    m.kind = wire::Kind::Call;
    m.call = c;
    return exchange(m, r, returning);
}

bool JudgeLink::exchange(const wire::Message& asked, Returned& r,
                         const std::function<void()>& returning) {
    wire::Message m = asked;
    m.loan = ++exchanges_;  // repeated by its Returning and Returned
    if (!wire::send(socket_, m)) {
        reap(false);
        return false;
    }
    wire::Message back;
    for (;;) {
        if (!receive(back)) return false;
        if ((back.kind == wire::Kind::Returning || back.kind == wire::Kind::Returned) &&
            back.loan != m.loan) {
            // An answer to another exchange than this one: said twice, or before the call was
            // made. Its word for this call cannot be taken: ended here, as a garbled one is.
            state_.out_of_turn = true;
            end_now();
            return false;
        }
        if (back.kind == wire::Kind::Returning) {
            if (returning) returning();
        } else if (back.kind == wire::Kind::Report) {
            r.reports.push_back(payload_);
        } else if (back.kind == wire::Kind::Written) {
            r.written = payload_;
        } else if (back.kind == wire::Kind::Make) {
            if (make_) make_(back.address, back.bytes);
            wire::Message made;
            made.kind = wire::Kind::Made;
            if (!wire::send(socket_, made)) {
                reap(false);
                return false;
            }
        } else if (back.kind == wire::Kind::Mapped && mapped(back)) {
            // A loan of this call's, mapped (or not: the call then fails, below).
        } else if (back.kind == wire::Kind::Stuck) {
            r.stuck = payload_;
            return true;
        } else if (back.kind == wire::Kind::Fault) {
            back.text[sizeof back.text - 1] = '\0';
            r.fault = back.text;
            r.fault_in_step = (back.flags & wire::kFaultInStep) != 0;
            r.fault_offset = back.address;
        } else {
            break;
        }
    }
    if (back.kind != wire::Kind::Returned) return false;
    r.unmapped = unmapped_;
    r.status = back.status;
    r.sync_status = back.sync_status;
    r.last_status = back.last_status;
    r.context_ok = back.context_ok != 0;
    r.ms = back.ms;
    r.on_stream_us = back.on_stream_us;
    r.whole_device_us = back.whole_device_us;
    back.text[sizeof back.text - 1] = '\0';
    r.text = back.text;
    return true;
}

bool JudgeLink::receive(wire::Message& m) {
    if (spin_) wire::wait_readable(socket_, wire::kSpinSeconds);
    if (wire::receive_with(socket_, m, payload_)) return true;
    // Not a message. Either the socket closed (the process ended, or is ending), or the process
    // is still there and wrote something else on it: then it is ended here, for that, before it
    // is waited for (waiting for a process that waits for the judge would never end).
    char next;
    const ssize_t peeked = ::recv(socket_, &next, 1, MSG_PEEK | MSG_DONTWAIT);
    if (pid_ > 0 && !state_.ended &&
        (peeked > 0 || (peeked < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)))) {
        state_.garbled = true;
        end_now();
        return false;
    }
    reap(true);
    return false;
}

void JudgeLink::end_now() {
    if (pid_ > 0 && !state_.ended) {
        ::kill(-pid_, SIGKILL);  // its process group: whatever it started too
        ::kill(pid_, SIGKILL);
    }
    reap(true);
}

void JudgeLink::reap(bool wait) {
    if (pid_ <= 0 || state_.ended) return;
    int status = 0;
    pid_t got = ::waitpid(pid_, &status, wait ? 0 : WNOHANG);
    if (got != pid_) return;
    state_.ended = true;
    if (WIFEXITED(status)) state_.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) state_.signal = WTERMSIG(status);
}

void JudgeLink::finish(double grace_seconds) {
    if (socket_ >= 0) {
        wire::Message q;
        q.kind = wire::Kind::Quit;
        (void)wire::send(socket_, q);
        ::close(socket_);
        socket_ = -1;
    }
    if (pid_ <= 0 || group_ended_) return;
    const auto until =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(grace_seconds);
    while (!state_.ended && std::chrono::steady_clock::now() < until) {
        reap(false);
        if (!state_.ended) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    if (!state_.ended) {
        ::kill(-pid_, SIGKILL);
        ::kill(pid_, SIGKILL);
        reap(true);
    }
    // Whatever it started in its group (a child that forked off) ends with it: no process of
    // the learner's outlives it, on the GPU (the reference is timed with none there) or off.
    ::kill(-pid_, SIGKILL);
    group_ended_ = true;
}

bool JudgeLink::locate(const void* p, std::uint32_t& loan, std::uint64_t& offset) const {
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    for (const Lent& l : lent_)
        if (a >= l.address && a < l.address + l.bytes) {
            loan = l.id;
            offset = a - l.address;
            return true;
        }
    return false;
}

}  // namespace cudalings
