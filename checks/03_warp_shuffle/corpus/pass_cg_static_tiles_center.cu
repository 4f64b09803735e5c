// step: 03_warp_shuffle/05_narrow_segments.cu
// emulated: PASS
//
// Correct: the segment width picks a template instantiation; each uses a cooperative-groups tile
// of that width and cg::reduce (every lane of the tile gets the segment's sum).
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

#include "warp_shuffle.cuh"

namespace cg = cooperative_groups;

template <unsigned int kWidth>
__global__ void center_kernel(const float* in, float* out, size_t n) {
    auto tile = cg::tiled_partition<kWidth>(cg::this_thread_block());
    const size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x;
    const float v = i < n ? in[i] : 0.0f;
    const float sum = cg::reduce(tile, v, cg::plus<float>());
    const size_t first = i - tile.thread_rank();
    const size_t count = n - first < kWidth ? n - first : kWidth;
    if (i < n) out[i] = v - sum / static_cast<float>(count);
}

extern "C" cudaError_t segment_center(const float* in, float* out, size_t n, int width,
                                      cudaStream_t stream) {
    const unsigned int blocks = static_cast<unsigned int>((n + 255) / 256);
    switch (width) {
        case 8: center_kernel<8><<<blocks, 256, 0, stream>>>(in, out, n); break;
        case 16: center_kernel<16><<<blocks, 256, 0, stream>>>(in, out, n); break;
        case 32: center_kernel<32><<<blocks, 256, 0, stream>>>(in, out, n); break;
        default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}
