// step: 03_warp_shuffle/01_segment_sum.cu
// emulated: MEMORY_ERROR
// reason: mask
//
// Buggy: after folding the upper half, the learner narrows the mask to the lower 16 lanes,
// but all 32 lanes still execute those shuffles: a lane may not call with a mask that leaves it
// out.
#include "warp_shuffle.cuh"

__global__ void sum_kernel(const float* in, float* sums, size_t n) {
    const size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x;
    float v = i < n ? in[i] : 0.0f;
    v += __shfl_xor_sync(kFullMask, v, 16);
    for (int d = 8; d > 0; d >>= 1) v += __shfl_xor_sync(0x0000ffffu, v, d);  // BUG
    if (threadIdx.x % 32 == 0 && i < n) sums[i / 32] = v;
}

extern "C" cudaError_t segment_sum(const float* in, float* sums, size_t n, cudaStream_t stream) {
    sum_kernel<<<static_cast<unsigned int>((n + 255) / 256), 256, 0, stream>>>(in, sums, n);
    return cudaGetLastError();
}
