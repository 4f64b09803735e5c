// expect: PASS
//
// Correct, and on its first call leaves a daemon behind: fork, setsid, fork again, and the
// grandchild (named "cudalings-dmn") lives on in its own session, out of the runner's process
// group, for two minutes. Killing a process group does not reach it; the end of the sandbox's
// PID namespace does. The test looks for the name after the batch.
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vector_add.cuh"

namespace {

void leave_a_daemon() {
    pid_t child = fork();
    if (child == 0) {
        setsid();
        if (fork() == 0) {
            prctl(PR_SET_NAME, "cudalings-dmn");
            for (int fd = 0; fd < 64; ++fd) close(fd);
            for (int i = 0; i < 120; ++i) sleep(1);
        }
        _exit(0);
    }
    if (child > 0) waitpid(child, nullptr, 0);
}

}  // namespace

__global__ void add(const float* a, const float* b, float* c, size_t n) {
    size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

extern "C" cudaError_t vector_add(const float* a, const float* b, float* c, size_t n,
                                  cudaStream_t stream) {
    static bool once = false;
    if (!once) {
        once = true;
        leave_a_daemon();
    }
    add<<<static_cast<unsigned int>((n + 255) / 256), 256, 0, stream>>>(a, b, c, n);
    return cudaGetLastError();
}
