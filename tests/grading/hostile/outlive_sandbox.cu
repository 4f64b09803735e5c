// expect: PASS
//
// Correct, and on its first call starts a process meant to outlive its sandbox
// ("cudalings-olv"): its own session, every signal it can ignore ignored, no death signal, and
// each way out of the PID namespace's teardown it can think of: a new PID namespace through
// unshare and clone (so that it would not be in the namespace that ends), and a ptrace of PID 1
// (a stopped init never ends the namespace). The filter refuses all three, and the end of the
// sandbox's PID 1 kills it with everything else. The test looks for its name after the batch.
//
// It starts only when its PID is tiny (one of the first processes of a fresh PID namespace).
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vector_add.cuh"

namespace {

[[noreturn]] void linger() {
    ::prctl(PR_SET_NAME, "cudalings-olv");
    for (int i = 0; i < 120; ++i) ::sleep(1);
    _exit(0);
}

void leave_a_survivor() {
    const pid_t child = ::fork();
    if (child != 0) return;  // the step goes on
    ::setsid();
    ::prctl(PR_SET_PDEATHSIG, 0);
    for (int sig = 1; sig < NSIG; ++sig) ::signal(sig, SIG_IGN);
    for (int fd = 0; fd < 64; ++fd) ::close(fd);
    // Out of the namespace: a new one for itself, or a child in one.
    if (::unshare(CLONE_NEWPID | CLONE_NEWUSER) == 0 && ::fork() == 0) linger();
    long rc = ::syscall(SYS_clone, CLONE_NEWPID | CLONE_NEWUSER | SIGCHLD, nullptr, nullptr,
                        nullptr, nullptr);
    if (rc == 0) linger();
    // Keep the namespace alive: an init that is stopped never ends.
    ::ptrace(PTRACE_ATTACH, 1, nullptr, nullptr);
    linger();
}

}  // namespace

__global__ void add(const float* a, const float* b, float* c, size_t n) {
    size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

extern "C" cudaError_t vector_add(const float* a, const float* b, float* c, size_t n,
                                  cudaStream_t stream) {
    static bool once = false;
    if (!once && ::getpid() < 100) {
        once = true;
        leave_a_survivor();
    }
    add<<<static_cast<unsigned int>((n + 255) / 256), 256, 0, stream>>>(a, b, c, n);
    return cudaGetLastError();
}
