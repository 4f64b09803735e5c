// step: 02_reduce/08_warp_shuffle.cu
// emulated: MEMORY_ERROR
// reason: race
//
// Buggy: every block writes its sum to out[0] (the same element), so the last block to finish
// wins: the other blocks' partial sums are lost. The stores of different blocks to one element
// race (WRONG by the numbers on a GPU, MEMORY_ERROR with the hazard pass).
#include "reduce.cuh"

constexpr unsigned int kBlock = 256;

__device__ float warp_sum(float v) {
    for (int d = 16; d > 0; d >>= 1) v += __shfl_down_sync(0xffffffffu, v, d);
    return v;
}

__global__ void reduce_kernel(const float* in, size_t n, float* out) {
    __shared__ float sums[kBlock / 32];
    const size_t i = blockIdx.x * size_t{kBlock} + threadIdx.x;
    float v = warp_sum(i < n ? in[i] : 0.0f);
    if (threadIdx.x % 32 == 0) sums[threadIdx.x / 32] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        v = warp_sum(threadIdx.x < kBlock / 32 ? sums[threadIdx.x] : 0.0f);
        if (threadIdx.x == 0) out[0] = v;  // BUG: every block writes the total's place
    }
}

extern "C" cudaError_t reduce_sum(const float* in, size_t n, float* out, void* workspace,
                                  size_t workspace_bytes, cudaStream_t stream) {
    (void)workspace, (void)workspace_bytes;
    reduce_kernel<<<static_cast<unsigned int>((n + kBlock - 1) / kBlock), kBlock, 0, stream>>>(
        in, n, out);
    return cudaGetLastError();
}
