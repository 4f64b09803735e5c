// expect: PASS
//
// Signals the sandbox's PID 1, which reaps every process and whose end ends the sandbox:
// SIGSTOP and SIGKILL through kill, tgkill, rt_sigqueueinfo and a pidfd. The seccomp filter
// refuses every signal to PID 1 (EPERM; pidfd_open is refused outright): the step computes
// correctly (PASS); a signal that was sent computes a - b (WRONG).
//
// It signals only when its PID is tiny (one of the first processes of a fresh PID namespace).
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "vector_add.cuh"

namespace {

std::string misses;  // "call: returned r, errno e (expected E)" for each call that was not refused

// A call the sandbox's seccomp filter refuses: it must fail with `expected`.
void refused(const char* call, long rc, int expected = EPERM) {
    const int error = rc < 0 ? errno : 0;
    if (rc >= 0 || error != expected)
        misses += std::string(call) + ": returned " + std::to_string(rc) + ", errno " +
                  std::to_string(error) + " (expected " + std::to_string(expected) + ")\n";
}

// The filter is in force in this process (seccomp mode 2).
bool filtered() {
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);)
        if (line.rfind("Seccomp:", 0) == 0) return line.find('2') != std::string::npos;
    return false;
}

void probe() {
    refused("kill(1, SIGSTOP)", ::kill(1, SIGSTOP));
    refused("kill(1, SIGKILL)", ::kill(1, SIGKILL));
    refused("tgkill(1, 1, SIGSTOP)", ::syscall(SYS_tgkill, 1, 1, SIGSTOP));
    refused("tkill(1, SIGSTOP)", ::syscall(SYS_tkill, 1, SIGSTOP));
    siginfo_t info{};
    info.si_code = SI_QUEUE;
    refused("rt_sigqueueinfo(1, SIGKILL)", ::syscall(SYS_rt_sigqueueinfo, 1, SIGKILL, &info));
    refused("pidfd_open(1)", ::syscall(SYS_pidfd_open, 1, 0));
    refused("pidfd_send_signal", ::syscall(SYS_pidfd_send_signal, 0, SIGKILL, nullptr, 0));
}

// True when every call was refused as it should be (what is not is said on stderr).
bool all_refused() {
    if (!filtered()) misses += "no seccomp filter in force\n";
    probe();
    if (!misses.empty()) (void)!::write(2, misses.data(), misses.size());
    return misses.empty();
}

}  // namespace

__global__ void add(const float* a, const float* b, float* c, size_t n, float sign) {
    size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + sign * b[i];
}

extern "C" cudaError_t vector_add(const float* a, const float* b, float* c, size_t n,
                                  cudaStream_t stream) {
    static bool once = false, ok = true;
    if (!once && ::getpid() < 100) {  // only as one of the first processes of a PID namespace
        once = true;
        ok = all_refused();
    }
    add<<<static_cast<unsigned int>((n + 255) / 256), 256, 0, stream>>>(a, b, c, n,
                                                                        ok ? 1.0f : -1.0f);
    return cudaGetLastError();
}
