// step: 05_scan/07_decoupled_lookback.cu
// emulated: PASS
//
// Correct: the decoupled look-back as a first version in a blog post writes it: one thread
// walks back one tile at a time. The status is one 64-bit word per tile (flag in the high half,
// the float's bits in the low half), published with atomicExch and read with atomicOr(p, 0)
// (an atomic read that changes nothing), so every access to a status word is atomic: no race,
// no torn word, and no fence needed. Thread 0 publishes the aggregate, then walks back:
// waits while a word is empty, adds its value, stops at the first inclusive prefix. The tile is
// 2048 elements, 256 threads x 8, scanned with cooperative groups (cg::inclusive_scan on the
// warp tile, cg::exclusive_scan over the warp totals).
#include <cooperative_groups.h>
#include <cooperative_groups/scan.h>

#include "scan.cuh"

namespace cg = cooperative_groups;

constexpr unsigned int kBlock = 256;
constexpr unsigned int kItems = 8;
constexpr unsigned int kTileItems = kBlock * kItems;  // 2048
constexpr unsigned int kWarps = kBlock / 32;
constexpr unsigned long long kAggregate = 1ull << 32;
constexpr unsigned long long kInclusive = 2ull << 32;

__device__ unsigned long long pack(unsigned long long flag, float v) {
    return flag | __float_as_uint(v);
}

__global__ void lookback_serial(const float* in, float* out, size_t n, unsigned int* counter,
                                unsigned long long* status) {
    __shared__ unsigned int s_tile;
    __shared__ float s_warp[kWarps];
    __shared__ float s_exclusive;
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    if (block.thread_rank() == 0) s_tile = atomicAdd(counter, 1u);
    block.sync();
    const unsigned int tile = s_tile;
    const size_t first = static_cast<size_t>(tile) * kTileItems + kItems * threadIdx.x;

    float x[kItems];
    for (unsigned int k = 0; k < kItems; ++k) x[k] = first + k < n ? in[first + k] : 0.0f;
    for (unsigned int k = 1; k < kItems; ++k) x[k] += x[k - 1];
    const float inc = cg::inclusive_scan(warp, x[kItems - 1]);
    float below = warp.shfl_up(inc, 1);  // the lanes before mine
    if (warp.thread_rank() == 0) below = 0.0f;
    if (warp.thread_rank() == 31) s_warp[warp.meta_group_rank()] = inc;
    block.sync();
    if (warp.meta_group_rank() == 0) {
        const float total = warp.thread_rank() < kWarps ? s_warp[warp.thread_rank()] : 0.0f;
        const float before = cg::exclusive_scan(warp, total);
        const float aggregate = warp.shfl(before + total, kWarps - 1);
        warp.sync();
        if (warp.thread_rank() < kWarps) s_warp[warp.thread_rank()] = before;
        if (warp.thread_rank() == 0) {
            float exclusive = 0.0f;
            if (tile == 0) {
                atomicExch(&status[0], pack(kInclusive, aggregate));
            } else {
                atomicExch(&status[tile], pack(kAggregate, aggregate));
                for (int p = static_cast<int>(tile) - 1; p >= 0; --p) {
                    unsigned long long word;
                    do {
                        word = atomicOr(&status[p], 0ull);
                    } while ((word >> 32) == 0);
                    exclusive += __uint_as_float(static_cast<unsigned int>(word));
                    if ((word >> 32) == 2) break;
                }
                atomicExch(&status[tile], pack(kInclusive, exclusive + aggregate));
            }
            s_exclusive = exclusive;
        }
    }
    block.sync();
    below += s_warp[warp.meta_group_rank()] + s_exclusive;
    for (unsigned int k = 0; k < kItems; ++k)
        if (first + k < n) out[first + k] = x[k] + below;
}

extern "C" cudaError_t inclusive_scan(const float* in, float* out, size_t n, void* workspace,
                                      size_t workspace_bytes, cudaStream_t stream) {
    const size_t tiles = (n + kTileItems - 1) / kTileItems;
    const size_t used = 256 + tiles * sizeof(unsigned long long);
    if (workspace_bytes < used) return cudaErrorInvalidValue;
    auto* counter = static_cast<unsigned int*>(workspace);
    auto* status = reinterpret_cast<unsigned long long*>(static_cast<char*>(workspace) + 256);
    cudaError_t err = cudaMemsetAsync(workspace, 0, used, stream);
    if (err != cudaSuccess) return err;
    lookback_serial<<<static_cast<unsigned int>(tiles), kBlock, 0, stream>>>(in, out, n, counter,
                                                                             status);
    return cudaGetLastError();
}
