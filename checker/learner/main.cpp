// cudalings-learner: the learner's process of the judge split (docs/architecture.md).
//
//   cudalings-learner --step STEP.so --shims SHIMS.so [--symbol NAME] [--no-filter]
//
// The judge starts it with a socket on descriptor 3 (wire.h). Before any of the learner's code
// is loaded it drops every capability and installs the seccomp filter (no ptrace, no signals to
// other processes...: core/run/seccomp_filter.h), then starts its CUDA context and says Ready. It
// answers the judge's probes of its clock (calls of its own), and when the judge says Load (with
// the entry point's name, else --symbol's) it loads the lesson's call shims and the learner's
// object and says Loaded; from then on it maps the memory the judge lends, makes the calls the
// judge packs, synchronises and says Returned.
//
// It holds nothing that decides a verdict: no key, no checks, no expected values, no reference.
// Whatever it says is a claim the judge does not need: the judge reads the outputs itself.
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "../core/run/seccomp_filter.h"
#ifdef CUDALINGS_EMULATOR
#include "emu_codec.h"
#endif
#include "lend.h"
#include "shim.h"
#include "wire.h"

namespace kit::shim {
namespace {
std::map<std::string, Caller>& table() {
    static std::map<std::string, Caller> t;
    return t;
}
}  // namespace
Caller find(const std::string& symbol) {
    auto it = table().find(symbol);
    return it == table().end() ? nullptr : it->second;
}
bool add(const char* symbol, Caller caller) {
    table()[symbol] = caller;
    return true;
}
}  // namespace kit::shim

namespace {

using namespace cudalings;
constexpr int kSocket = 3;

struct Mapping {
    std::uintptr_t address = 0;
    std::size_t bytes = 0;
};

// The lent mappings' address ranges, for the fault handler (read there without locks: slots
// are written only outside signal handlers, address last on add and first on take).
constexpr int kRangeSlots = 256;
std::atomic<std::uintptr_t> range_start[kRangeSlots];
std::atomic<std::size_t> range_bytes[kRangeSlots];

void remember_range(Mapping m) {
    for (int i = 0; i < kRangeSlots; ++i)
        if (range_start[i].load() == 0) {
            range_bytes[i].store(m.bytes);
            range_start[i].store(m.address);
            return;
        }
}
void forget_range(Mapping m) {
    for (int i = 0; i < kRangeSlots; ++i)
        if (range_start[i].load() == m.address) range_start[i].store(0);
}
// Whether an address lies in memory the judge lent (device memory, on a GPU as under the
// emulator). Async-signal-safe.
bool is_lent(const void* p) {
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    for (int i = 0; i < kRangeSlots; ++i) {
        const std::uintptr_t s = range_start[i].load();
        if (s != 0 && a >= s && a - s < range_bytes[i].load()) return true;
    }
    return false;
}

class Loans : public kit::remote::Borrower {
  public:
    explicit Loans(cudaStream_t s) : stream_(s) {}
    void add(std::uint32_t loan, Mapping m) {
        maps_[loan] = m;
        remember_range(m);
    }
    // The loan's mapping, forgotten here (zero bytes when there is none).
    Mapping take(std::uint32_t loan) {
        auto it = maps_.find(loan);
        if (it == maps_.end()) return {};
        Mapping m = it->second;
        maps_.erase(it);
        forget_range(m);
        return m;
    }
    void* address(std::uint32_t loan, std::uint64_t offset) const override {
        auto it = maps_.find(loan);
        if (it == maps_.end() || offset > it->second.bytes)
            throw kit::remote::RemoteCallError("a pointer into memory that was not lent");
        return reinterpret_cast<void*>(it->second.address + offset);
    }
    cudaStream_t stream() const override { return stream_; }

  private:
    cudaStream_t stream_;
    std::map<std::uint32_t, Mapping> maps_;
};

bool say(const wire::Message& m) { return wire::send(kSocket, m); }

#ifdef CUDALINGS_EMULATOR
// The emulator's watchdog found a CUDA thread that never ends (this process's main thread is
// stuck in it): the judge hears it from here, and the process ends.
void report_stuck(const cudalings_emu::Diagnostic& d) {
    wire::Message m;
    m.kind = wire::Kind::Stuck;
    (void)wire::send_with(kSocket, m, emu_codec::pack(std::vector<cudalings_emu::Diagnostic>{d}));
    std::_Exit(0);
}

#endif

// Host code that reads or writes device memory outside a kernel faults here: on a GPU because
// a device address is not host memory, under the emulator because it keeps that memory closed
// to host code. The judge hears what it was, then the fault happens again with the default
// action and the process ends with SIGSEGV. Only async-signal-safe calls, and dladdr for the
// function's name (the process is ending anyway).
char step_path[4096];  // the learner's object as dlopen was given it

bool is_device(const void* p) {
#ifdef CUDALINGS_EMULATOR
    if (cudalings_emu::is_device_address(p)) return true;
#endif
    return is_lent(p);
}

void on_fault(int, siginfo_t* info, void* context) {
    if (!info || !is_device(info->si_addr)) return;
    static wire::Message m;
    m = wire::Message{};
    m.kind = wire::Kind::Fault;
    bool write = false;
    const void* pc = nullptr;
#if defined(__x86_64__)
    const auto* uc = static_cast<const ucontext_t*>(context);
    write = (uc->uc_mcontext.gregs[REG_ERR] & 2) != 0;
    pc = reinterpret_cast<const void*>(uc->uc_mcontext.gregs[REG_RIP]);
#else
    (void)context;
#endif
    Dl_info where{};
    const bool known = pc && dladdr(pc, &where);
    const char* function = known && where.dli_sname ? where.dli_sname : nullptr;
    // In the learner's object: the judge turns the offset into a line of the learner's file.
    if (known && where.dli_fname && std::strcmp(where.dli_fname, step_path) == 0) {
        m.flags |= wire::kFaultInStep;
        m.address = reinterpret_cast<std::uintptr_t>(pc) -
                    reinterpret_cast<std::uintptr_t>(where.dli_fbase);
    }
    auto add = [](const char* text) {
        std::strncat(m.text, text, sizeof m.text - std::strlen(m.text) - 1);
    };
    add(write ? "host code wrote device memory" : "host code read device memory");
    if (function) {
        add(" in ");
        add(function);
        add("()");
    }
#ifdef CUDALINGS_EMULATOR
    add(": on a GPU this is a segmentation fault (only a kernel reads and writes device memory; "
        "host code passes device pointers on)");
#else
    add(": a segmentation fault (only a kernel reads and writes device memory; host code passes "
        "device pointers on)");
#endif
    (void)wire::send(kSocket, m);
}

#ifdef CUDALINGS_EMULATOR
// The judge's options for the next call; a new case starts its time budget.
void apply_setup(const std::string& bytes) {
    static std::uint64_t epoch = 0;
    emu_codec::CallSetup s;
    if (!emu_codec::unpack(bytes, s)) return;
    cudalings_emu::set_options(s.options);
    cudalings_emu::cudalings_emu_set_poison(s.poison);
    if (s.epoch != epoch) cudalings_emu::start_time_budget();
    epoch = s.epoch;
}

// The sampled sizes' values (emulator.h, fill_on_demand): the judge makes a page of inputs in
// the memory both processes map; this process's emulator asks for it where a kernel reads it.
void ask_judge_to_make(void* dst, std::size_t bytes) {
    wire::Message m;
    m.kind = wire::Kind::Make;
    m.address = reinterpret_cast<std::uintptr_t>(dst);
    m.bytes = bytes;
    if (!wire::send(kSocket, m)) std::_Exit(3);
    wire::Message made;
    if (!wire::receive(kSocket, made) || made.kind != wire::Kind::Made) std::_Exit(3);
}

// The tracked outputs of the loans (their address), for Written after each call.
std::map<std::uint32_t, std::uintptr_t>& tracked_outputs() {
    static std::map<std::uint32_t, std::uintptr_t> t;
    return t;
}

void register_sampled(std::uint32_t loan, std::uintptr_t p, const cudalings_emu::Marks& marks) {
    if (marks.on_demand_bytes)
        cudalings_emu::fill_on_demand(
            reinterpret_cast<void*>(p + marks.on_demand_offset), marks.on_demand_bytes,
            [](std::size_t, std::size_t count, void* dst) { ask_judge_to_make(dst, count); });
    if (marks.tracked_bytes &&
        cudalings_emu::track_writes(reinterpret_cast<void*>(p + marks.tracked_offset),
                                    marks.tracked_bytes))
        tracked_outputs()[loan] = p + marks.tracked_offset;
}

// Written: what the call's kernels wrote in the tracked outputs (none tracked: nothing sent).
bool say_written() {
    if (tracked_outputs().empty()) return true;
    emu_codec::Written written;
    written.skips = cudalings_emu::sample_skips();
    for (const auto& [loan, p] : tracked_outputs())
        written.outputs.emplace_back(p, cudalings_emu::written_words(reinterpret_cast<void*>(p)));
    wire::Message m;
    m.kind = wire::Kind::Written;
    return wire::send_with(kSocket, m, emu_codec::pack(written));
}
#endif

wire::Message reply(wire::Kind kind, int status = 0, const std::string& text = {}) {
    wire::Message m;
    m.kind = kind;
    m.status = status;
    wire::set_text(m, text);
    return m;
}

// The largest memset a Probe asks for.
constexpr std::size_t kProbeMost = std::size_t{64} << 20;

struct Events {
    cudaEvent_t start = nullptr, end = nullptr, after_sync = nullptr;
    bool make() {
        for (cudaEvent_t* e : {&start, &end, &after_sync})
            if (cudaEventCreate(e) != cudaSuccess) return false;
        return true;
    }
};

// A call timed as the runner times one in its own process (runner/timing.cu): events around it
// on its stream and after the whole device's synchronisation (work left on another stream),
// Returning said between the two. The call's status, the synchronisation's and the times go in
// `r` (a Returned): `call` returns a cudaError_t, or -2 for a call it could not unpack. The
// learner's calls and the judge's probes alike. False when the judge is
// gone.
template <typename Call>
bool timed_call(Call call, cudaStream_t stream, const Events& e, wire::Message& r) {
    const auto t = std::chrono::steady_clock::now();
    (void)cudaEventRecord(e.start, stream);
    r.status = call();
    (void)cudaEventRecord(e.end, stream);
    wire::Message returning = reply(wire::Kind::Returning);
    returning.loan = r.loan;  // the exchange's number, as in its Returned
    if (!say(returning)) return false;
    r.sync_status = cudaDeviceSynchronize();
    r.last_status = cudaGetLastError();
    (void)cudaEventRecord(e.after_sync, stream);
    float on_stream = 0, whole = 0;
    if (cudaEventSynchronize(e.after_sync) == cudaSuccess &&
        cudaEventElapsedTime(&on_stream, e.start, e.end) == cudaSuccess &&
        cudaEventElapsedTime(&whole, e.start, e.after_sync) == cudaSuccess) {
        r.on_stream_us = 1000.0 * on_stream;
        r.whole_device_us = 1000.0 * whole;
    }
    (void)cudaGetLastError();
    // After an error: does this context still work (a sticky error ends it)?
    if (r.sync_status != cudaSuccess || r.last_status != cudaSuccess) {
        void* probe = nullptr;
        r.context_ok = cudaMalloc(&probe, 256) == cudaSuccess && cudaFree(probe) == cudaSuccess &&
                       cudaDeviceSynchronize() == cudaSuccess;
        (void)cudaGetLastError();
    }
    r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    std::string step, shims, symbol;
    bool filter = true;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--step" && i + 1 < argc)
            step = argv[++i];
        else if (a == "--shims" && i + 1 < argc)
            shims = argv[++i];
        else if (a == "--symbol" && i + 1 < argc)
            symbol = argv[++i];
        else if (a == "--no-filter")
            filter = false;
        else {
            std::fprintf(stderr, "cudalings-learner: unknown argument %s\n", a.c_str());
            return 2;
        }
    }

    // 1. Confined before anything of the learner's exists in this process.
    wire::Message ready = reply(wire::Kind::Ready);
    if (filter) {
        const seccomp::Confinement c = seccomp::confine_self();
        if (c.no_capabilities) ready.flags |= wire::kNoCapabilities;
        if (c.filtered)
            ready.flags |= wire::kFiltered;
        else
            wire::set_text(ready, c.why);
    }
    // The judge's shared device memory, where there is one (the emulator's: descriptor 4).
    {
        std::string why;
        const int shared = ::fcntl(4, F_GETFD) != -1 ? 4 : -1;
        if (!lend::join(shared, &why)) {
            ready.status = 1;
            wire::set_text(ready, why);
            say(ready);
            return 3;
        }
    }
#ifdef CUDALINGS_EMULATOR
    cudalings_emu::set_stuck_handler(report_stuck);
#endif
    {
        static char fault_stack[64 * 1024];
        stack_t alternate{};
        alternate.ss_sp = fault_stack;
        alternate.ss_size = sizeof fault_stack;
        ::sigaltstack(&alternate, nullptr);
        struct sigaction fault {};
        fault.sa_sigaction = on_fault;
        fault.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
        sigemptyset(&fault.sa_mask);
        ::sigaction(SIGSEGV, &fault, nullptr);
    }
    const auto t0 = std::chrono::steady_clock::now();
    cudaError_t started = cudaFree(nullptr);
    ready.ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    ready.status = started;
    if (!say(ready) || started != cudaSuccess) return 3;

    // Non-blocking, as the runner's own (kit/device.cu): work a step puts on the legacy default
    // stream is not waited for by this stream's events (the runner calls that SUSPECT).
    cudaStream_t stream;
    if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) {
        say(reply(wire::Kind::Loaded, 3, "cudaStreamCreate failed"));
        return 3;
    }
    Events events;
    if (!events.make()) {
        say(reply(wire::Kind::Loaded, 3, "cudaEventCreate failed"));
        return 3;
    }

    // 2. Probes of the judge's clock, while nothing of the learner's is here: calls of this
    // process's own (a memset), timed as the learner's calls will be, until the judge says Load.
    bool spin = false;
    {
        void* probe_memory = nullptr;
        std::size_t probe_bytes = 0;
        for (;;) {
            wire::Message m;
            if (spin) wire::wait_readable(kSocket, wire::kSpinSeconds);
            if (!wire::receive(kSocket, m)) return 3;
            spin = spin || m.kind == wire::Kind::Probe;  // a timed check (wire.h, wait_readable)
            if (m.kind == wire::Kind::Load) {            // with the entry point's name, when named
                spin = spin || (m.flags & wire::kSpin) != 0;  // a timed phase's process: no probes
                m.text[sizeof m.text - 1] = '\0';
                if (m.text[0] != '\0') symbol = m.text;
                break;
            }
            if (m.kind != wire::Kind::Probe) return 3;
            const std::size_t bytes = std::min<std::uint64_t>(m.bytes, kProbeMost);
            if (bytes > probe_bytes) {
                if (probe_memory) (void)cudaFree(probe_memory);
                probe_memory = nullptr;
                probe_bytes = cudaMalloc(&probe_memory, bytes) == cudaSuccess ? bytes : 0;
            }
            wire::Message r = reply(wire::Kind::Returned);
            r.loan = m.loan;  // the probe's number: the judge takes no answer out of turn
            if (!timed_call(
                    [&] {
                        return static_cast<int>(
                            probe_bytes ? cudaMemsetAsync(probe_memory, 0, bytes, stream)
                                        : cudaErrorMemoryAllocation);
                    },
                    stream, events, r))
                return 3;
            if (!say(r)) return 3;
        }
        if (probe_memory) (void)cudaFree(probe_memory);
    }

    // 3. The shims, then the learner's object (its constructors run here: an exit from one is
    // the learner's, since Ready was said and Loaded was not).
    void* shim_handle = dlopen(shims.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!shim_handle) {
        const char* e = dlerror();
        say(reply(wire::Kind::Loaded, 1, std::string("the call shims: ") + (e ? e : "?")));
        return 3;
    }
    std::strncpy(step_path, step.c_str(), sizeof step_path - 1);
    void* step_handle = dlopen(step.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!step_handle) {
        const char* e = dlerror();
        say(reply(wire::Kind::Loaded, 2, e ? e : "dlopen failed"));
        return 3;
    }
    if (!symbol.empty() && !dlsym(step_handle, symbol.c_str())) {
        say(reply(wire::Kind::Loaded, 4, "the file does not define extern \"C\" " + symbol));
        return 3;
    }
    if (!say(reply(wire::Kind::Loaded))) return 3;

    // 4. Loans and calls, until the judge says Quit or goes away.
    Loans loans(stream);
    for (;;) {
        wire::Message m;
        std::vector<int> fds;
        std::string payload;
        if (spin) wire::wait_readable(kSocket, wire::kSpinSeconds);
        if (!wire::receive_with(kSocket, m, payload, &fds)) break;
        if (m.kind == wire::Kind::Lend) {
            std::string why;
            std::uintptr_t p = 0;
            if (fds.size() <= 1)
                p = lend::import(fds.empty() ? -1 : fds[0], m.bytes, m.address, &why);
            else
                for (int fd : fds) ::close(fd);
            wire::Message r = reply(wire::Kind::Mapped, p ? 0 : 1, p ? "" : why);
            r.loan = m.loan;
            if (p) loans.add(m.loan, {p, m.bytes});
#ifdef CUDALINGS_EMULATOR
            cudalings_emu::Marks marks;
            if (p && !payload.empty() && emu_codec::unpack(payload, marks)) {
                cudalings_emu::mark_allocation(reinterpret_cast<void*>(p), marks);
                register_sampled(m.loan, p, marks);
            }
#endif
            if (!say(r)) break;
        } else if (m.kind == wire::Kind::Unlend) {
            for (int fd : fds) ::close(fd);
            const Mapping gone = loans.take(m.loan);
            if (gone.bytes) lend::unmap(gone.address, gone.bytes);
#ifdef CUDALINGS_EMULATOR
            tracked_outputs().erase(m.loan);
#endif
#ifdef CUDALINGS_EMULATOR
        } else if (m.kind == wire::Kind::Setup) {
            apply_setup(payload);
#endif
        } else if (m.kind == wire::Kind::Call) {
            m.call.symbol[sizeof m.call.symbol - 1] = '\0';
            wire::Message r = reply(wire::Kind::Returned);
            r.loan = m.loan;  // the call's number: the judge takes no answer out of turn
            kit::shim::Caller caller = kit::shim::find(m.call.symbol);
            void* fn = dlsym(step_handle, m.call.symbol);
            if (!caller || !fn) {
                r.status = -1;
                wire::set_text(r, std::string(!fn ? "the file does not define extern \"C\" "
                                                  : "no call shim for ") +
                                      m.call.symbol);
            } else if (!timed_call(
                           [&] {
                               try {
                                   return static_cast<int>(caller(fn, m.call, loans));
                               } catch (const kit::remote::RemoteCallError& e) {
                                   wire::set_text(r, e.what());
                                   return -2;
                               }
                           },
                           stream, events, r)) {
                break;
            }
#ifdef CUDALINGS_EMULATOR
            // What the emulator found during the call (races, bounds, launches), for the judge.
            if (std::vector<cudalings_emu::Diagnostic> found = cudalings_emu::take_diagnostics();
                !found.empty()) {
                wire::Message report;
                report.kind = wire::Kind::Report;
                if (!wire::send_with(kSocket, report, emu_codec::pack(found))) break;
            }
            if (!say_written()) break;
#endif
            if (!say(r)) break;
        } else {
            break;
        }
    }
    // Not exit(): the learner's atexit handlers and destructors have nothing left to say.
    std::_Exit(0);
}
