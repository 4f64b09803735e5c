// step: 02_reduce/01_interleaved.cu
// emulated: MEMORY_ERROR
// reason: race
//
// Buggy: interleaved addressing without the barrier between the load and the first round:
// thread 0 adds sdata[1], which thread 1 may not have stored yet (it usually has, on a GPU:
// the race is only seen by the hazard pass there).
#include "reduce.cuh"

constexpr unsigned int kBlock = 256;

__global__ void reduce_kernel(const float* in, size_t n, float* out) {
    __shared__ float sdata[kBlock];
    const unsigned int tid = threadIdx.x;
    const size_t i = static_cast<size_t>(blockIdx.x) * kBlock + tid;
    sdata[tid] = i < n ? in[i] : 0.0f;
    for (unsigned int s = 1; s < kBlock; s *= 2) {  // BUG: no __syncthreads() before round 1
        if (tid % (2 * s) == 0) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
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
