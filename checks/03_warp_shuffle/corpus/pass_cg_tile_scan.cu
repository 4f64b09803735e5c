// step: 03_warp_shuffle/03_segment_scan.cu
// emulated: PASS
//
// Correct: one warp per segment; cooperative groups' inclusive_scan over a 32-thread tile.
#include <cooperative_groups.h>
#include <cooperative_groups/scan.h>

#include "warp_shuffle.cuh"

namespace cg = cooperative_groups;

__global__ void scan_kernel(const float* in, float* out, size_t n) {
    auto warp = cg::tiled_partition<32>(cg::this_thread_block());
    const size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x;
    const float v = i < n ? in[i] : 0.0f;
    const float s = cg::inclusive_scan(warp, v);
    if (i < n) out[i] = s;
}

extern "C" cudaError_t segment_scan(const float* in, float* out, size_t n, cudaStream_t stream) {
    scan_kernel<<<static_cast<unsigned int>((n + 255) / 256), 256, 0, stream>>>(in, out, n);
    return cudaGetLastError();
}
