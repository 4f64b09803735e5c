// step: 04_block_reduce/02_block_partial_sums.cu
// emulated: PASS
//
// Correct, with cooperative groups: the block's rank and index from cg::this_thread_block(),
// a cg::reduce per warp tile, block.sync(), and the warps' sums in a shared array.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

#include "block_reduce.cuh"

namespace cg = cooperative_groups;

__global__ void partials_kernel(const float* x, size_t n, float* partials) {
    __shared__ float warp_sums[kTile / 32];
    const cg::thread_block block = cg::this_thread_block();
    const auto warp = cg::tiled_partition<32>(block);
    const size_t i = block.group_index().x * size_t{kTile} + block.thread_rank();
    const float v = cg::reduce(warp, i < n ? x[i] : 0.0f, cg::plus<float>());
    if (warp.thread_rank() == 0) warp_sums[warp.meta_group_rank()] = v;
    block.sync();
    if (block.thread_rank() == 0) {
        float s = 0.0f;
        for (unsigned w = 0; w < kTile / 32; ++w) s += warp_sums[w];
        partials[block.group_index().x] = s;
    }
}

extern "C" cudaError_t block_partial_sums(const float* x, size_t n, float* partials,
                                          cudaStream_t stream) {
    partials_kernel<<<static_cast<unsigned int>(tile_count(n)), kTile, 0, stream>>>(x, n, partials);
    return cudaGetLastError();
}
