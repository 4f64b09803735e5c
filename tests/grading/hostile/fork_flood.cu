// expect: PASS
//
// Correct, and on its first call starts 200 children (named "cudalings-frk") that wait for a
// signal that never comes, for two minutes. They must all be gone when the step is: the test
// looks for the name after the batch. (Bounded on purpose: an unbounded fork bomb is limited by
// the step's memory limit and its case timeout, and ends with the PID namespace.)
#include <sys/prctl.h>
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
        for (int k = 0; k < 200; ++k) {
            if (fork() == 0) {
                prctl(PR_SET_NAME, "cudalings-frk");
                alarm(120);
                for (;;) pause();
            }
        }
    }
    add<<<static_cast<unsigned int>((n + 255) / 256), 256, 0, stream>>>(a, b, c, n);
    return cudaGetLastError();
}
