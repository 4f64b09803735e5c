// step: 03_warp_shuffle/02_segment_normalize.cu
// emulated: MEMORY_ERROR
// reason: mask
//
// Buggy: the lower and upper half-warps fetch their partner's value with two different
// shuffles (one per branch), both naming all 32 lanes: every lane named in a mask must call
// the same shuffle.
#include "warp_shuffle.cuh"

__global__ void normalize_kernel(const float* in, float* out, size_t n) {
    const size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x;
    const unsigned int lane = threadIdx.x % 32;
    const float v = i < n ? in[i] : 0.0f;
    float sum = v;
    for (int d = 8; d > 0; d >>= 1) sum += __shfl_xor_sync(kFullMask, sum, d);
    float other;
    if (lane < 16)
        other = __shfl_xor_sync(kFullMask, sum, 16);  // BUG: two call sites for one exchange
    else
        other = __shfl_xor_sync(kFullMask, sum, 16);
    sum += other;
    if (i < n) out[i] = v / sum;
}

extern "C" cudaError_t segment_normalize(const float* in, float* out, size_t n,
                                         cudaStream_t stream) {
    normalize_kernel<<<static_cast<unsigned int>((n + 255) / 256), 256, 0, stream>>>(in, out, n);
    return cudaGetLastError();
}
