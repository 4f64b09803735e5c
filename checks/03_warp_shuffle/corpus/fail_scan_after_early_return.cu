// step: 03_warp_shuffle/03_segment_scan.cu
// emulated: MEMORY_ERROR
// reason: mask
//
// Buggy: lanes past n return before the scan's full-mask shuffles, which still name them.
#include "warp_shuffle.cuh"

__global__ void scan_kernel(const float* in, float* out, size_t n) {
    const size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x;
    if (i >= n) return;  // BUG: the shuffles below name these lanes
    const unsigned int lane = threadIdx.x % 32;
    float s = in[i];
    for (int d = 1; d < 32; d *= 2) {
        const float up = __shfl_up_sync(kFullMask, s, d);
        if (lane >= static_cast<unsigned int>(d)) s += up;
    }
    out[i] = s;
}

extern "C" cudaError_t segment_scan(const float* in, float* out, size_t n, cudaStream_t stream) {
    scan_kernel<<<static_cast<unsigned int>((n + 255) / 256), 256, 0, stream>>>(in, out, n);
    return cudaGetLastError();
}
