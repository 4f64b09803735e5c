// step: 03_warp_shuffle/02_segment_normalize.cu
// emulated: PASS
//
// Correct: a butterfly (__shfl_xor_sync) leaves the segment's sum in every lane, so no
// broadcast is needed; lanes past n contribute 0 and store nothing.
#include "warp_shuffle.cuh"

__global__ void normalize_kernel(const float* in, float* out, size_t n) {
    const size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x;
    const float v = i < n ? in[i] : 0.0f;
    float sum = v;
    for (int mask = 16; mask > 0; mask >>= 1) sum += __shfl_xor_sync(kFullMask, sum, mask);
    if (i < n) out[i] = v / sum;
}

extern "C" cudaError_t segment_normalize(const float* in, float* out, size_t n,
                                         cudaStream_t stream) {
    normalize_kernel<<<static_cast<unsigned int>((n + 127) / 128), 128, 0, stream>>>(in, out, n);
    return cudaGetLastError();
}
