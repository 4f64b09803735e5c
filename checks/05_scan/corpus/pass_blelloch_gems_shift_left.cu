// step: 05_scan/02_blelloch.cu
// emulated: PASS
//
// Correct: the Blelloch scan as GPU Gems 3 (ch. 39) writes it: two elements per thread,
// CONFLICT_FREE_OFFSET(k) = k >> 5 padding, a barrier at the start of every down-sweep round
// and after every up-sweep round (and one after the loads). Instead of adding each element
// back, the inclusive result is the exclusive one shifted left by one slot, with the tile's
// total (saved by thread 0 before it clears the root) as the last element. The twin with the
// barrier after the loads missing is fail_blelloch_no_barrier_after_load.cu.
#include "scan.cuh"

#define LOG_NUM_BANKS 5
#define CONFLICT_FREE_OFFSET(k) ((k) >> LOG_NUM_BANKS)

constexpr unsigned int kBlock = kTile / 2;

__global__ void blelloch(const float* __restrict__ in, float* __restrict__ out, size_t n) {
    __shared__ float temp[kTile + kTile / 32 + 1];
    __shared__ float total;
    const unsigned int thid = threadIdx.x;
    const size_t base = static_cast<size_t>(blockIdx.x) * kTile;
    const unsigned int ai = thid, bi = thid + kBlock;
    temp[ai + CONFLICT_FREE_OFFSET(ai)] = base + ai < n ? in[base + ai] : 0.0f;
    temp[bi + CONFLICT_FREE_OFFSET(bi)] = base + bi < n ? in[base + bi] : 0.0f;

    unsigned int offset = 1;
    __syncthreads();  // the loads before the first round
    for (unsigned int d = kTile >> 1; d > 0; d >>= 1) {
        if (thid < d) {
            unsigned int a = offset * (2 * thid + 1) - 1, b = offset * (2 * thid + 2) - 1;
            a += CONFLICT_FREE_OFFSET(a);
            b += CONFLICT_FREE_OFFSET(b);
            temp[b] += temp[a];
        }
        offset *= 2;
        __syncthreads();
    }
    if (thid == 0) {
        const unsigned int last = kTile - 1 + CONFLICT_FREE_OFFSET(kTile - 1);
        total = temp[last];
        temp[last] = 0.0f;
    }
    for (unsigned int d = 1; d < kTile; d *= 2) {
        offset >>= 1;
        __syncthreads();
        if (thid < d) {
            unsigned int a = offset * (2 * thid + 1) - 1, b = offset * (2 * thid + 2) - 1;
            a += CONFLICT_FREE_OFFSET(a);
            b += CONFLICT_FREE_OFFSET(b);
            const float t = temp[a];
            temp[a] = temp[b];
            temp[b] += t;
        }
    }
    __syncthreads();
    // inclusive[k] = exclusive[k + 1]; the last one is the tile's total.
    const unsigned int a1 = ai + 1, b1 = bi + 1;
    if (base + ai < n) out[base + ai] = temp[a1 + CONFLICT_FREE_OFFSET(a1)];
    if (base + bi < n)
        out[base + bi] = bi + 1 < kTile ? temp[b1 + CONFLICT_FREE_OFFSET(b1)] : total;
}

extern "C" cudaError_t tile_scan(const float* in, float* out, size_t n, cudaStream_t stream) {
    blelloch<<<static_cast<unsigned int>(tile_count(n)), kBlock, 0, stream>>>(in, out, n);
    return cudaGetLastError();
}
