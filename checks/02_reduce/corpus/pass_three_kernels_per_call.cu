// step: 02_reduce/07_multiple_elements_per_thread.cu
// emulated: PASS
//
// Correct: three kernels per call: zero a counter of finished blocks, sum per block, and let a
// separate final kernel add the partial sums in order.
#include "reduce.cuh"

constexpr unsigned int kBlock = 128;
constexpr unsigned int kGrid = 64;

__global__ void clear(float* partials) { partials[threadIdx.x] = 0.0f; }

__global__ void accumulate(const float* in, size_t n, float* partials) {
    __shared__ float s[kBlock];
    float v = 0.0f;
    for (size_t i = blockIdx.x * size_t{kBlock} + threadIdx.x; i < n; i += size_t{kGrid} * kBlock)
        v += in[i];
    s[threadIdx.x] = v;
    __syncthreads();
    for (unsigned int k = kBlock / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) partials[blockIdx.x] += s[0];
}

__global__ void finish(const float* partials, float* out) {
    float total = 0.0f;
    for (unsigned int b = 0; b < kGrid; ++b) total += partials[b];
    *out = total;
}

extern "C" cudaError_t reduce_sum(const float* in, size_t n, float* out, void* workspace,
                                  size_t workspace_bytes, cudaStream_t stream) {
    if (workspace_bytes < kGrid * sizeof(float)) return cudaErrorInvalidValue;
    float* partials = static_cast<float*>(workspace);
    clear<<<1, kGrid, 0, stream>>>(partials);
    accumulate<<<kGrid, kBlock, 0, stream>>>(in, n, partials);
    finish<<<1, 1, 0, stream>>>(partials, out);
    return cudaGetLastError();
}
