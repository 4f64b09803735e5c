// step: 02_reduce/07_multiple_elements_per_thread.cu
// emulated: MEMORY_ERROR
// reason: barrier
//
// Buggy: the block stages each round of its grid-stride loop in shared memory, with a
// __syncthreads() inside the loop; threads whose last index is past n leave the loop (and its
// barrier) a round early while the others wait at it.
#include "reduce.cuh"

constexpr unsigned int kBlock = 256;
constexpr unsigned int kGrid = 32;

__global__ void reduce_kernel(const float* in, size_t n, float* out) {
    __shared__ float stage[kBlock];
    float acc = 0.0f;
    for (size_t i = blockIdx.x * size_t{kBlock} + threadIdx.x; i < n; i += size_t{kGrid} * kBlock) {
        stage[threadIdx.x] = in[i];
        __syncthreads();  // BUG: not every thread takes the same number of rounds
        acc += stage[threadIdx.x];
        __syncthreads();
    }
    stage[threadIdx.x] = acc;
    __syncthreads();
    for (unsigned int s = kBlock / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) stage[threadIdx.x] += stage[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = stage[0];
}

__global__ void finish(const float* partials, float* out) {
    float total = 0.0f;
    for (unsigned int b = 0; b < kGrid; ++b) total += partials[b];
    *out = total;
}

extern "C" cudaError_t reduce_sum(const float* in, size_t n, float* out, void* workspace,
                                  size_t workspace_bytes, cudaStream_t stream) {
    (void)workspace_bytes;
    float* partials = static_cast<float*>(workspace);
    reduce_kernel<<<kGrid, kBlock, 0, stream>>>(in, n, partials);
    finish<<<1, 1, 0, stream>>>(partials, out);
    return cudaGetLastError();
}
