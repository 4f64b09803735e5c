// step: 07_compact/03_unordered.cu
// emulated: PASS
//
// Correct (unordered): the filter of NVIDIA's "warp-aggregated atomics" blog post. A grid-stride
// loop, one element per thread per iteration; the threads that keep their element form a
// coalesced group (cg::coalesced_threads() inside the branch), its rank-0 thread reserves
// g.size() slots with one atomicAdd, and g.shfl hands the base to the others, which add their
// rank in the group. Every kept element gets its own slot; the order across warps and
// iterations is whatever the atomics give, which compact_unordered allows.
#include <cooperative_groups.h>

#include "compact.cuh"

namespace cg = cooperative_groups;

constexpr unsigned int kBlock = 256;

__device__ unsigned int atomic_agg_inc(unsigned int* counter) {
    cg::coalesced_group g = cg::coalesced_threads();
    unsigned int base = 0;
    if (g.thread_rank() == 0) base = atomicAdd(counter, g.size());
    return g.shfl(base, 0) + g.thread_rank();
}

__global__ void filter_kernel(const float* __restrict__ in, size_t n, float threshold,
                              float* __restrict__ out, unsigned int* count) {
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += stride) {
        const float v = in[i];
        if (v > threshold) out[atomic_agg_inc(count)] = v;
    }
}

extern "C" cudaError_t compact_unordered(const float* in, float* out, unsigned int* count, size_t n,
                                         float threshold, void* workspace, size_t workspace_bytes,
                                         cudaStream_t stream) {
    (void)workspace, (void)workspace_bytes;
    cudaError_t err = cudaMemsetAsync(count, 0, sizeof(unsigned int), stream);
    if (err != cudaSuccess || n == 0) return err != cudaSuccess ? err : cudaGetLastError();
    unsigned int grid = 0;
    err = one_wave_grid(kBlock, (n + kBlock - 1) / kBlock, &grid);
    if (err != cudaSuccess) return err;
    filter_kernel<<<grid, kBlock, 0, stream>>>(in, n, threshold, out, count);
    return cudaGetLastError();
}
