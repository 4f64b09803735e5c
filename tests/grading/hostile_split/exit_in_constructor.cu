// expect: CRASH
//
// Ends its process while it is being loaded: a constructor that runs before the step is ever
// called exits with code 0. Through the judge split the process that ends is the learner's,
// after it said the file was loaded: the learner's CRASH, not the grader's INTERNAL_ERROR.
#include <cstdlib>

#include "vector_add.cuh"

__attribute__((constructor)) static void leave_early() { std::exit(0); }

__global__ void add(const float* a, const float* b, float* c, size_t n) {
    size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

extern "C" cudaError_t vector_add(const float* a, const float* b, float* c, size_t n,
                                  cudaStream_t stream) {
    add<<<static_cast<unsigned>((n + 255) / 256), 256, 0, stream>>>(a, b, c, n);
    return cudaGetLastError();
}
