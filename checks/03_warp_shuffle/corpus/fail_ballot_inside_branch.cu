// step: 03_warp_shuffle/04_ballot_rank.cu
// emulated: MEMORY_ERROR
// reason: mask
//
// Buggy: the ballot is taken inside `if (i < n)` with the full mask: in the partial last
// segment the lanes past n never call it (they leave the kernel), yet the mask names them.
#include "warp_shuffle.cuh"

__global__ void rank_kernel(const float* in, unsigned* ranks, unsigned* counts, size_t n,
                            float threshold) {
    const size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x;
    if (i < n) {
        const unsigned kept = __ballot_sync(kFullMask, in[i] > threshold);  // BUG
        const unsigned lane = threadIdx.x % 32;
        ranks[i] = __popc(kept & ((1u << lane) - 1u));
        if (lane == 0) counts[i / 32] = __popc(kept);
    }
}

extern "C" cudaError_t segment_select_rank(const float* in, unsigned* ranks, unsigned* counts,
                                           size_t n, float threshold, cudaStream_t stream) {
    rank_kernel<<<static_cast<unsigned int>((n + 255) / 256), 256, 0, stream>>>(in, ranks, counts,
                                                                                n, threshold);
    return cudaGetLastError();
}
