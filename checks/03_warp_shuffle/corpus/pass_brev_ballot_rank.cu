// step: 03_warp_shuffle/04_ballot_rank.cu
// emulated: PASS
//
// Correct, in an unusual way: the number of kept lanes below this one, counted after reversing
// the ballot's bits (__brev): the lanes below `lane` become the top `lane` bits.
#include "warp_shuffle.cuh"

__global__ void rank_kernel(const float* in, unsigned* ranks, unsigned* counts, size_t n,
                            float threshold) {
    const size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x;
    const bool keep = i < n && in[i] > threshold;
    const unsigned kept = __ballot_sync(kFullMask, keep);
    const unsigned lane = threadIdx.x % 32;
    if (i < n) ranks[i] = lane == 0 ? 0u : __popc(__brev(kept) >> (32 - lane));
    if (threadIdx.x % 32 == 0 && i < n) counts[i / 32] = __popc(kept);
}

extern "C" cudaError_t segment_select_rank(const float* in, unsigned* ranks, unsigned* counts,
                                           size_t n, float threshold, cudaStream_t stream) {
    rank_kernel<<<static_cast<unsigned int>((n + 255) / 256), 256, 0, stream>>>(in, ranks, counts,
                                                                                n, threshold);
    return cudaGetLastError();
}
