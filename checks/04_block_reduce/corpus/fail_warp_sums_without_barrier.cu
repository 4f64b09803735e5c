// step: 04_block_reduce/02_block_partial_sums.cu
// emulated: MEMORY_ERROR
// reason: race
//
// Buggy: warp 0 reads the other warps' sums from shared memory without waiting for them
// (the __syncthreads() between the store of warp sums and their read is missing).
#include "block_reduce.cuh"

__device__ float warp_sum(float v) {
    for (int d = 16; d > 0; d /= 2) v += __shfl_down_sync(0xffffffffu, v, d);
    return v;
}

__global__ void partials_kernel(const float* x, size_t n, float* partials) {
    __shared__ float warp_sums[kTile / 32];
    const size_t i = blockIdx.x * size_t{kTile} + threadIdx.x;
    float v = warp_sum(i < n ? x[i] : 0.0f);
    if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = v;
    // BUG: __syncthreads() missing here
    if (threadIdx.x < 32) {
        v = warp_sum(threadIdx.x < kTile / 32 ? warp_sums[threadIdx.x] : 0.0f);
        if (threadIdx.x == 0) partials[blockIdx.x] = v;
    }
}

extern "C" cudaError_t block_partial_sums(const float* x, size_t n, float* partials,
                                          cudaStream_t stream) {
    partials_kernel<<<static_cast<unsigned int>(tile_count(n)), kTile, 0, stream>>>(x, n, partials);
    return cudaGetLastError();
}
