// step: 02_reduce/03_sequential_addressing.cu
// emulated: PASS
//
// Correct: the shared array lives at namespace scope (one per block, as any __shared__ array).
#include "reduce.cuh"

constexpr unsigned int kBlock = 256;
__shared__ float g_tile[kBlock];

__global__ void reduce_kernel(const float* in, size_t n, float* out) {
    const unsigned int tid = threadIdx.x;
    const size_t i = static_cast<size_t>(blockIdx.x) * kBlock + tid;
    g_tile[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = kBlock / 2; s > 0; s >>= 1) {
        if (tid < s) g_tile[tid] += g_tile[tid + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = g_tile[0];
}

extern "C" cudaError_t reduce_sum(const float* in, size_t n, float* out, void* workspace,
                                  size_t workspace_bytes, cudaStream_t stream) {
    float* buffers[2] = {static_cast<float*>(workspace),
                         static_cast<float*>(workspace) + workspace_bytes / sizeof(float) / 2};
    for (int pass = 0;; ++pass) {
        const size_t blocks = (n + kBlock - 1) / kBlock;
        float* dst = blocks == 1 ? out : buffers[pass % 2];
        reduce_kernel<<<static_cast<unsigned int>(blocks), kBlock, 0, stream>>>(in, n, dst);
        if (blocks == 1) break;
        in = dst;
        n = blocks;
    }
    return cudaGetLastError();
}
