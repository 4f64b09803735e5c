// expect: PASS
//
// Tries to leave the sandbox's namespaces or make new ones: unshare with each namespace flag,
// setns, clone with each namespace flag, and clone3 (whose flags a filter cannot read). The
// seccomp filter refuses unshare, setns and clone with a namespace flag (EPERM) and answers
// clone3 with ENOSYS, so that the C library falls back to clone: fork and threads still work.
// PASS when all of that holds; anything else computes a - b (WRONG).
//
// It tries only when its PID is tiny (one of the first processes of a fresh PID namespace).
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

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
    constexpr int kFlags[] = {CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNS,    CLONE_NEWNET,
                              CLONE_NEWIPC,  CLONE_NEWUTS, CLONE_NEWCGROUP};
    for (int flag : kFlags) {
        const std::string name = std::to_string(flag);
        refused(("unshare(" + name + ")").c_str(), ::unshare(flag));
        long rc = ::syscall(SYS_clone, flag | SIGCHLD, nullptr, nullptr, nullptr, nullptr);
        if (rc == 0) _exit(0);  // a child in a new namespace: leaves at once
        if (rc > 0) ::waitpid(static_cast<pid_t>(rc), nullptr, 0);
        refused(("clone(" + name + ")").c_str(), rc);
    }
    refused("setns", ::setns(0, 0));
    refused("clone3", ::syscall(SYS_clone3, nullptr, 0), ENOSYS);
    // What must still work: fork (clone without namespace flags) and a thread.
    const pid_t child = ::fork();
    if (child == 0) _exit(0);
    if (child < 0 || ::waitpid(child, nullptr, 0) != child) misses += "fork failed\n";
    bool ran = false;
    std::thread([&] { ran = true; }).join();
    if (!ran) misses += "a thread did not run\n";
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
