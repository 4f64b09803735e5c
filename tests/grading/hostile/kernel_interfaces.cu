// expect: PASS
//
// Reaches for kernel interfaces a step never needs, each a way to widen what it can see or to
// attack the kernel itself: perf_event_open, bpf, io_uring_setup, userfaultfd, keyctl, add_key,
// request_key, init_module, finit_module, and TIOCSTI (typing into a terminal). The seccomp
// filter refuses each (EPERM): PASS; one that works computes a - b (WRONG).
//
// It tries only when its PID is tiny (one of the first processes of a fresh PID namespace).
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <termios.h>
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
    perf_event_attr attr{};
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_CPU_CLOCK;
    refused("perf_event_open", ::syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0));
    refused("bpf", ::syscall(SYS_bpf, 0, nullptr, 0));
    refused("io_uring_setup", ::syscall(SYS_io_uring_setup, 4, nullptr));
    refused("userfaultfd", ::syscall(SYS_userfaultfd, O_CLOEXEC));
    refused("keyctl", ::syscall(SYS_keyctl, 0, -3, 0));
    refused("add_key", ::syscall(SYS_add_key, "user", "cudalings", "x", 1, -3));
    refused("request_key", ::syscall(SYS_request_key, "user", "cudalings", nullptr, -3));
    refused("init_module", ::syscall(SYS_init_module, nullptr, 0, ""));
    refused("finit_module", ::syscall(SYS_finit_module, 0, "", 0));
    refused("ioctl(TIOCSTI)", ::ioctl(0, TIOCSTI, "x"));
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
