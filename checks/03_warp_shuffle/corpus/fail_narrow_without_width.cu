// step: 03_warp_shuffle/05_narrow_segments.cu
// emulated: WRONG
//
// Buggy: narrow segments reduced with whole-warp shuffles (no `width` argument): the sum
// reaching a segment's first lane includes the next segments' values, and the broadcast from
// lane 0 gives every segment the first one's mean.
#include "warp_shuffle.cuh"

__global__ void center_kernel(const float* in, float* out, size_t n, int width) {
    const size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x;
    const float v = i < n ? in[i] : 0.0f;
    float sum = v;
    for (int d = width / 2; d > 0; d /= 2) sum += __shfl_down_sync(kFullMask, sum, d);
    sum = __shfl_sync(kFullMask, sum, 0);  // BUG: no width: lane 0 of the warp for everyone
    const size_t first = i / width * width;
    const size_t count = n - first < size_t(width) ? n - first : size_t(width);
    if (i < n) out[i] = v - sum / static_cast<float>(count);
}

extern "C" cudaError_t segment_center(const float* in, float* out, size_t n, int width,
                                      cudaStream_t stream) {
    center_kernel<<<static_cast<unsigned int>((n + 255) / 256), 256, 0, stream>>>(in, out, n,
                                                                                  width);
    return cudaGetLastError();
}
