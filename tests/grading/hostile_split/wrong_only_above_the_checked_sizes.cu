// expect: WRONG
// in-process: WRONG
// reason: values
//
// Right where the values are checked under emulation, wrong above: up to 2^20 + 1025 elements
// (the largest size an emulated check runs whole) it adds; above, it copies a. On a GPU every size
// is checked whole: WRONG at the first larger case. Under emulation the blocks sampled at 2^24
// and 2^28 run on inputs made where they read them, and the judge checks the elements they wrote,
// in the runner's process and through the judge split alike: WRONG ("values"), never PASS.
#include "vector_add.cuh"

__global__ void vector_add_kernel(const float* a, const float* b, float* c, size_t n) {
    const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= n) return;
    c[i] = n <= (size_t{1} << 20) + 1025 ? a[i] + b[i] : a[i];
}

extern "C" cudaError_t vector_add(const float* a, const float* b, float* c, size_t n,
                                  cudaStream_t stream) {
    vector_add_kernel<<<static_cast<unsigned>((n + 255) / 256), 256, 0, stream>>>(a, b, c, n);
    return cudaGetLastError();
}
