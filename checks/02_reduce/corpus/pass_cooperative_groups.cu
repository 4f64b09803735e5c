// step: 02_reduce/08_warp_shuffle.cu
// emulated: PASS
//
// Correct, with cooperative groups: cg::reduce over a 32-thread tile, then over the warps' sums.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

#include "reduce.cuh"

namespace cg = cooperative_groups;

constexpr unsigned int kBlock = 256;

__global__ void partial_sums(const float* in, size_t n, float* out) {
    __shared__ float warp_sums[kBlock / 32];
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    float sum = 0.0f;
    for (size_t i = blockIdx.x * size_t{kBlock} + block.thread_rank(); i < n;
         i += size_t{gridDim.x} * kBlock)
        sum += in[i];
    sum = cg::reduce(warp, sum, cg::plus<float>());
    if (warp.thread_rank() == 0) warp_sums[warp.meta_group_rank()] = sum;
    block.sync();
    if (warp.meta_group_rank() == 0) {
        float v = warp.thread_rank() < warp.meta_group_size() ? warp_sums[warp.thread_rank()] : 0.0f;
        v = cg::reduce(warp, v, cg::plus<float>());
        if (warp.thread_rank() == 0) out[blockIdx.x] = v;
    }
}

extern "C" cudaError_t reduce_sum(const float* in, size_t n, float* out, void* workspace,
                                  size_t workspace_bytes, cudaStream_t stream) {
    size_t blocks = (n + kBlock - 1) / kBlock;
    if (blocks > 1024) blocks = 1024;
    if (blocks * sizeof(float) > workspace_bytes) return cudaErrorInvalidValue;
    float* partials = static_cast<float*>(workspace);
    partial_sums<<<static_cast<unsigned int>(blocks), kBlock, 0, stream>>>(in, n, partials);
    partial_sums<<<1, kBlock, 0, stream>>>(partials, blocks, out);
    return cudaGetLastError();
}
