// expect: COMPILE_ERROR
// reason: memory
//
// A macro whose argument is expanded before it is copied 16 times, nine deep: 16^9 tokens, which
// the preprocessor builds in memory (cc1plus asks for 13 GiB at once, then touches it) within a
// few seconds, long before the compile's CPU limit. It meets the build's one memory limit: a
// cgroup of 4 GiB for nvcc and everything it starts, or where none can be made each process's
// address space. Either way the build fails saying so, and the grader goes on.
#include "vector_add.cuh"

#define SIXTEEN(x) x x x x x x x x x x x x x x x x
static const int bomb = SIXTEEN(SIXTEEN(SIXTEEN(SIXTEEN(SIXTEEN(SIXTEEN(SIXTEEN(SIXTEEN(SIXTEEN(1+))))))))) 0;

__global__ void add(const float* a, const float* b, float* c, size_t n) {
    size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i] + bomb * 0.0f;
}

void vector_add(const float* a, const float* b, float* c, size_t n) {
    if (n == 0) return;
    add<<<static_cast<unsigned>((n + 255) / 256), 256>>>(a, b, c, n);
}
