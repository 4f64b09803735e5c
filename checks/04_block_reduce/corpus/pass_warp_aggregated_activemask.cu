// step: 04_block_reduce/01_atomic_sum.cu
// emulated: PASS
//
// Correct: warp-aggregated atomics. Inside `if (i < n)` __activemask() gives the lanes that took
// the branch (a prefix of the warp); they sum their values with shuffles that use only lanes of
// that mask, and the first of them does one atomicAdd for the warp.
#include "block_reduce.cuh"

__global__ void sum_kernel(const float* x, size_t n, float* sum) {
    const size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x;
    if (i < n) {
        const unsigned active = __activemask();
        const unsigned lane = threadIdx.x % 32;
        float v = x[i];
        for (unsigned d = 16; d > 0; d /= 2) {
            const float other = __shfl_down_sync(active, v, d);
            if (lane + d < 32 && (active >> (lane + d) & 1u)) v += other;
        }
        if (lane == static_cast<unsigned>(__ffs(active) - 1)) atomicAdd(sum, v);
    }
}

extern "C" cudaError_t atomic_sum(const float* x, size_t n, float* sum, cudaStream_t stream) {
    cudaError_t err = cudaMemsetAsync(sum, 0, sizeof(float), stream);
    if (err != cudaSuccess) return err;
    sum_kernel<<<static_cast<unsigned int>((n + 255) / 256), 256, 0, stream>>>(x, n, sum);
    return cudaGetLastError();
}
