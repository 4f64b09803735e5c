// expect: PASS
//
// A plain correct submission, the one the others try to read: its comment holds a marker
// (CUDALINGS_VICTIM_MARKER_7f3a) that read_other_submission looks for in every file it can reach.
#include "vector_add.cuh"

__global__ void add(const float* a, const float* b, float* c, size_t n) {
    size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

extern "C" cudaError_t vector_add(const float* a, const float* b, float* c, size_t n,
                                  cudaStream_t stream) {
    add<<<static_cast<unsigned int>((n + 255) / 256), 256, 0, stream>>>(a, b, c, n);
    return cudaGetLastError();
}
