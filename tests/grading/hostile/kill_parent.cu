// expect: PASS
//
// Correct, and on its first call SIGKILLs its parent process: outside a sandbox that is the
// grader itself (the batch died with exit code 137). In the sandbox the parent is the PID
// namespace's init, which a signal from inside cannot kill: the step goes on and passes, and the
// batch finishes with a result for every submission.
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
        kill(getppid(), SIGKILL);
    }
    add<<<static_cast<unsigned int>((n + 255) / 256), 256, 0, stream>>>(a, b, c, n);
    return cudaGetLastError();
}
