// expect: WRONG
//
// Computes a wrong sum, then, at its process's exit, tries to leave quietly: an atexit handler
// calls _exit(0), as if a clean end could stand for a passed step. The judge reads the outputs
// itself after each call: the first case is WRONG, whatever the process does at its end.
#include <cstdlib>
#include <unistd.h>

#include "vector_add.cuh"

namespace {
void quiet_end() { _exit(0); }
const int registered = std::atexit(quiet_end);
}  // namespace

__global__ void add_wrong(const float* a, const float* b, float* c, size_t n) {
    size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] - b[i];
}

extern "C" cudaError_t vector_add(const float* a, const float* b, float* c, size_t n,
                                  cudaStream_t stream) {
    (void)registered;
    add_wrong<<<static_cast<unsigned>((n + 255) / 256), 256, 0, stream>>>(a, b, c, n);
    return cudaGetLastError();
}
