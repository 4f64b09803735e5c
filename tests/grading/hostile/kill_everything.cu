// expect: PASS
//
// Correct, and on its first call sends SIGKILL to every process it may signal: kill(-1). Run as
// the grader's user without a sandbox, that is every process of that user (as root: of the
// machine). In the sandbox it is alone in its PID namespace, and kill(-1) spares the caller
// and init: nothing dies, the step passes.
//
// So that this file can never do harm outside a sandbox, it fires only when its own PID is
// tiny, which is the case only as one of the first processes of a fresh PID namespace.
#include <signal.h>
#include <unistd.h>

#include "vector_add.cuh"

__global__ void add(const float* a, const float* b, float* c, size_t n) {
    size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

extern "C" cudaError_t vector_add(const float* a, const float* b, float* c, size_t n,
                                  cudaStream_t stream) {
    static bool once = false;
    if (!once) {
        once = true;
        if (getpid() <= 10) kill(-1, SIGKILL);
    }
    add<<<static_cast<unsigned int>((n + 255) / 256), 256, 0, stream>>>(a, b, c, n);
    return cudaGetLastError();
}
