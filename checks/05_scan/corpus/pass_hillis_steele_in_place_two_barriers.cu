// step: 05_scan/01_hillis_steele.cu
// emulated: PASS
//
// Correct: Hillis-Steele with ONE buffer, as many textbooks write it: in each round every thread
// first reads the value d places to its left into a register, then the whole block waits at a
// barrier, and only then does every thread add it into its own slot (and waits again before the
// next round reads). The first barrier orders every read of a round before any write of it, so
// the in-place update is race-free; it costs 20 barriers instead of 10. The tile lives in
// dynamic shared memory (extern __shared__, 4 KiB given at launch).
#include "scan.cuh"

__global__ void scan_in_place(const float* __restrict__ in, float* __restrict__ out, size_t n) {
    extern __shared__ float tile[];
    const unsigned int t = threadIdx.x;
    const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + t;
    tile[t] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned int d = 1; d < blockDim.x; d <<= 1) {
        const float left = t >= d ? tile[t - d] : 0.0f;
        __syncthreads();  // every read of this round before any write
        tile[t] += left;
        __syncthreads();  // every write before the next round's reads
    }
    if (i < n) out[i] = tile[t];
}

extern "C" cudaError_t tile_scan(const float* in, float* out, size_t n, cudaStream_t stream) {
    const unsigned int blocks = static_cast<unsigned int>(tile_count(n));
    scan_in_place<<<blocks, kTile, kTile * sizeof(float), stream>>>(in, out, n);
    return cudaGetLastError();
}
