// Step 1: saxpy, one thread per element. Each thread owns one element; the last block hangs past
// n, so the bounds test is not optional.
#include "saxpy.cuh"

__global__ void saxpy_kernel(const float* x, const float* y, float* out, size_t n, float a) {
    const size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x;
    if (i < n) out[i] = a * x[i] + y[i];
}

extern "C" cudaError_t saxpy(const float* x, const float* y, float* out, size_t n, float a,
                             cudaStream_t stream) {
    const unsigned blocks = static_cast<unsigned>((n + 255) / 256);
    saxpy_kernel<<<blocks, 256, 0, stream>>>(x, y, out, n, a);
    return cudaGetLastError();
}
