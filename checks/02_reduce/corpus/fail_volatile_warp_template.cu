// step: 02_reduce/06_complete_unroll.cu
// emulated: MEMORY_ERROR
// reason: race
//
// Buggy: the complete unroll with the classic volatile warp reduction (Harris, 2007) and no
// __syncwarp(): lanes of warp 0 read and write the same slots in one round with nothing
// ordering them (since Volta the lanes are scheduled independently).
#include "reduce.cuh"

template <unsigned int kBlock>
__device__ void warp_reduce(volatile float* s, unsigned int tid) {
    if (kBlock >= 64) s[tid] += s[tid + 32];
    if (kBlock >= 32) s[tid] += s[tid + 16];
    if (kBlock >= 16) s[tid] += s[tid + 8];
    if (kBlock >= 8) s[tid] += s[tid + 4];
    if (kBlock >= 4) s[tid] += s[tid + 2];
    if (kBlock >= 2) s[tid] += s[tid + 1];
}

template <unsigned int kBlock>
__global__ void reduce_kernel(const float* in, size_t n, float* out) {
    __shared__ float s[kBlock];
    const unsigned int tid = threadIdx.x;
    const size_t i = blockIdx.x * size_t{2 * kBlock} + tid;
    s[tid] = (i < n ? in[i] : 0.0f) + (i + kBlock < n ? in[i + kBlock] : 0.0f);
    __syncthreads();
    if (kBlock >= 512) { if (tid < 256) s[tid] += s[tid + 256]; __syncthreads(); }
    if (kBlock >= 256) { if (tid < 128) s[tid] += s[tid + 128]; __syncthreads(); }
    if (kBlock >= 128) { if (tid < 64) s[tid] += s[tid + 64]; __syncthreads(); }
    if (tid < 32) warp_reduce<kBlock>(s, tid);
    if (tid == 0) out[blockIdx.x] = s[0];
}

extern "C" cudaError_t reduce_sum(const float* in, size_t n, float* out, void* workspace,
                                  size_t workspace_bytes, cudaStream_t stream) {
    constexpr unsigned int kBlock = 256;
    float* buffers[2] = {static_cast<float*>(workspace),
                         static_cast<float*>(workspace) + workspace_bytes / sizeof(float) / 2};
    for (int pass = 0;; ++pass) {
        const size_t blocks = (n + 2 * kBlock - 1) / (2 * kBlock);
        float* dst = blocks == 1 ? out : buffers[pass % 2];
        reduce_kernel<kBlock><<<static_cast<unsigned int>(blocks), kBlock, 0, stream>>>(in, n, dst);
        if (blocks == 1) break;
        in = dst;
        n = blocks;
    }
    return cudaGetLastError();
}
