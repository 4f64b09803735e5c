// The watchdog: a kernel that never ends must be told from one that is merely slow under
// emulation, and both need a line.
//
//   - Slow: the scheduler (schedule.cpp) checks the clock between time slices; a launch still
//     running after Options::time_limit_seconds is stopped and reported as "slow", with how
//     many blocks finished and where the threads are.
//   - Stuck: a CUDA thread that loops without a memory access never returns to the scheduler.
//     This thread notices that no fiber was resumed for the time limit (a third of it, at least
//     a second), samples the stuck thread's instruction pointer with a signal, and hands a
//     "stuck" diagnostic with its line to the host's handler (the emulated runner reports the
//     case as a TIMEOUT and ends the process). Without a handler, nothing is done.
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "internal.h"

namespace cudalings_emu {
namespace {

std::atomic<void (*)(const Diagnostic&)> g_stuck_handler{nullptr};
std::atomic<std::uintptr_t> g_sampled_pc{0};
std::atomic<bool> g_sampled{false};
pthread_t g_kernel_thread;
std::once_flag g_started;

// The signal that asks the kernel thread where it is (a real-time one: no program uses it).
int sample_signal() { return SIGRTMIN + 5; }

extern "C" void on_sample(int, siginfo_t*, void* context) {
#if defined(__x86_64__)
    auto* uc = static_cast<ucontext_t*>(context);
    g_sampled_pc.store(static_cast<std::uintptr_t>(uc->uc_mcontext.gregs[REG_RIP]));
#elif defined(__aarch64__)
    auto* uc = static_cast<ucontext_t*>(context);
    g_sampled_pc.store(static_cast<std::uintptr_t>(uc->uc_mcontext.pc));
#else
    (void)context;
#endif
    g_sampled.store(true);
}

// The CPU time of the thread that runs kernels: a thread that loops without a memory access
// burns it; one the machine is too busy to run does not.
double kernel_thread_seconds() {
    clockid_t clock;
    timespec t{};
    if (pthread_getcpuclockid(g_kernel_thread, &clock) != 0 || clock_gettime(clock, &t) != 0)
        return 0;
    return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

void watch() {
    Runtime& r = rt();
    std::uint64_t last = r.heartbeat.load(std::memory_order_relaxed);
    double last_change = kernel_thread_seconds();
    while (true) {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        const double limit = r.options.time_limit_seconds;
        const std::uint64_t now_beat = r.heartbeat.load(std::memory_order_relaxed);
        const double now = kernel_thread_seconds();
        if (now_beat != last || !r.kernel_running.load()) {
            last = now_beat;
            last_change = now;
            continue;
        }
        const double quiet = now - last_change;
        if (limit <= 0 || quiet < std::max(1.0, limit / 3)) continue;
        auto handler = g_stuck_handler.load();
        if (!handler) continue;
        // Where is it? The signal's handler reads the interrupted instruction pointer.
        g_sampled.store(false);
        pthread_kill(g_kernel_thread, sample_signal());
        for (int i = 0; i < 100 && !g_sampled.load(); ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        Diagnostic d;
        d.kind = "stuck";
        d.severity = "error";
        const std::uintptr_t pc = g_sampled_pc.load();
        std::string where = pc ? where_pc(reinterpret_cast<const void*>(pc + 1)) : "?";
        auto colon = where.rfind(':');
        if (colon != std::string::npos) {
            d.file = where.substr(0, colon);
            d.line = std::atoi(where.c_str() + colon + 1);
        }
        std::ostringstream m;
        m << "a CUDA thread has run for " << int(quiet)
          << " s without one memory access: a loop that never reads or writes memory"
          << (d.line > 0 ? " (here)" : "")
          << " never ends (its condition never changes: check the loop's variable and its step)";
        d.message = m.str();
        handler(d);
        std::_Exit(1);  // a handler must not return
    }
}

}  // namespace

void set_stuck_handler(void (*handler)(const Diagnostic& stuck)) { g_stuck_handler = handler; }

void watch_for_stuck_threads() {
    if (opts().time_limit_seconds <= 0) return;
    std::call_once(g_started, [] {
        g_kernel_thread = pthread_self();
        struct sigaction action {};
        action.sa_sigaction = on_sample;
        action.sa_flags = SA_SIGINFO | SA_RESTART;
        sigemptyset(&action.sa_mask);
        sigaction(sample_signal(), &action, nullptr);
        std::thread(watch).detach();
    });
}

std::string where_threads_are(const Block& b, std::string* file, int* line) {
    std::map<const void*, unsigned> at;
    for (const Thread& t : b.threads)
        if (t.state != State::Done && t.state != State::NotStarted && t.last_pc) ++at[t.last_pc];
    std::vector<std::pair<unsigned, const void*>> most;
    for (const auto& [pc, n] : at) most.push_back({n, pc});
    std::sort(most.begin(), most.end(), [](auto& a, auto& b) { return a.first > b.first; });
    std::ostringstream s;
    for (std::size_t i = 0; i < most.size() && i < 3; ++i) {
        std::string w = where_pc(most[i].second);
        if (i == 0 && file && line) {
            auto colon = w.rfind(':');
            if (colon != std::string::npos) {
                *file = w.substr(0, colon);
                *line = std::atoi(w.c_str() + colon + 1);
            }
        }
        s << (i ? ", " : "") << most[i].first << (most[i].first == 1 ? " thread" : " threads")
          << " last at " << w;
    }
    return s.str();
}

}  // namespace cudalings_emu
