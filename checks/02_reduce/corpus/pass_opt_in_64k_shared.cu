// step: 02_reduce/03_sequential_addressing.cu
// emulated: PASS
//
// Correct: each block stages 16384 floats (64 KiB) of dynamic shared memory, after opting in
// with cudaFuncSetAttribute, as a block above 48 KiB must.
#include "reduce.cuh"

constexpr unsigned int kBlock = 256;
constexpr unsigned int kPerBlock = 16384;

__global__ void reduce_kernel(const float* in, size_t n, float* out) {
    extern __shared__ float stage[];
    const size_t base = static_cast<size_t>(blockIdx.x) * kPerBlock;
    for (unsigned int k = threadIdx.x; k < kPerBlock; k += blockDim.x)
        stage[k] = base + k < n ? in[base + k] : 0.0f;
    __syncthreads();
    for (unsigned int s = kPerBlock / 2; s > 0; s >>= 1) {
        for (unsigned int k = threadIdx.x; k < s; k += blockDim.x) stage[k] += stage[k + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = stage[0];
}

extern "C" cudaError_t reduce_sum(const float* in, size_t n, float* out, void* workspace,
                                  size_t workspace_bytes, cudaStream_t stream) {
    const int bytes = kPerBlock * sizeof(float);
    cudaError_t err =
        cudaFuncSetAttribute(reduce_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
    if (err != cudaSuccess) return err;
    float* buffers[2] = {static_cast<float*>(workspace),
                         static_cast<float*>(workspace) + workspace_bytes / sizeof(float) / 2};
    for (int pass = 0;; ++pass) {
        const size_t blocks = (n + kPerBlock - 1) / kPerBlock;
        float* dst = blocks == 1 ? out : buffers[pass % 2];
        reduce_kernel<<<static_cast<unsigned int>(blocks), kBlock, bytes, stream>>>(in, n, dst);
        if (blocks == 1) break;
        in = dst;
        n = blocks;
    }
    return cudaGetLastError();
}
