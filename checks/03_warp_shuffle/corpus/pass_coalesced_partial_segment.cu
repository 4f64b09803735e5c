// step: 03_warp_shuffle/01_segment_sum.cu
// emulated: PASS
//
// Correct: inside `if (i < n)` the lanes that took the branch form a coalesced group (in the
// partial last segment, fewer than 32); cg::reduce sums over exactly those lanes, and the
// group's first lane stores the sum. __activemask() (under coalesced_threads) follows the branch.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

#include "warp_shuffle.cuh"

namespace cg = cooperative_groups;

__global__ void sum_kernel(const float* in, float* sums, size_t n) {
    const size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x;
    if (i < n) {
        cg::coalesced_group active = cg::coalesced_threads();
        const float s = cg::reduce(active, in[i], cg::plus<float>());
        if (active.thread_rank() == 0) sums[i / 32] = s;
    }
}

extern "C" cudaError_t segment_sum(const float* in, float* sums, size_t n, cudaStream_t stream) {
    sum_kernel<<<static_cast<unsigned int>((n + 255) / 256), 256, 0, stream>>>(in, sums, n);
    return cudaGetLastError();
}
