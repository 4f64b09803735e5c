// step: 05_scan/03_register_tile.cu
// emulated: PASS
//
// Correct: a register tile with a single barrier and 128 threads of 8 elements (two float4 per
// thread, the thread's 8 consecutive elements). After the one barrier no thread writes shared
// memory again: each warp adds up the totals of the warps before it itself (at most 3 reads), so
// warp 0 does not have to scan them in place, and no second barrier is needed. The exclusive
// prefix within the warp comes from __shfl_up_sync of the inclusive one (no subtraction).
#include "scan.cuh"

constexpr unsigned int kItems = 8;
constexpr unsigned int kBlock = kTile / kItems;  // 128 threads
constexpr unsigned int kWarps = kBlock / 32;     // 4

__global__ void __launch_bounds__(kBlock)
    register_scan(const float* __restrict__ in, float* __restrict__ out, size_t n) {
    __shared__ float warp_total[kWarps];
    const unsigned int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const size_t first = static_cast<size_t>(blockIdx.x) * kTile + kItems * threadIdx.x;

    float x[kItems];
    if (first + kItems <= n) {
        const float4* p = reinterpret_cast<const float4*>(in + first);
        const float4 a = p[0], b = p[1];
        x[0] = a.x, x[1] = a.y, x[2] = a.z, x[3] = a.w;
        x[4] = b.x, x[5] = b.y, x[6] = b.z, x[7] = b.w;
    } else {
        for (unsigned int k = 0; k < kItems; ++k) x[k] = first + k < n ? in[first + k] : 0.0f;
    }
#pragma unroll
    for (unsigned int k = 1; k < kItems; ++k) x[k] += x[k - 1];

    float inclusive = x[kItems - 1];
#pragma unroll
    for (unsigned int d = 1; d < 32; d *= 2) {
        const float other = __shfl_up_sync(0xffffffffu, inclusive, d);
        if (lane >= d) inclusive += other;
    }
    float below = __shfl_up_sync(0xffffffffu, inclusive, 1);
    if (lane == 0) below = 0.0f;
    if (lane == 31) warp_total[warp] = inclusive;
    __syncthreads();
    for (unsigned int w = 0; w < warp; ++w) below += warp_total[w];

    for (unsigned int k = 0; k < kItems; ++k)
        if (first + k < n) out[first + k] = x[k] + below;
}

extern "C" cudaError_t tile_scan(const float* in, float* out, size_t n, cudaStream_t stream) {
    register_scan<<<static_cast<unsigned int>(tile_count(n)), kBlock, 0, stream>>>(in, out, n);
    return cudaGetLastError();
}
