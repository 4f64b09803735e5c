// step: 07_compact/04_single_pass.cu
// emulated: PASS
//
// Correct (stable): the single pass with libcu++ atomics instead of volatile. One 64-bit status
// word per tile (flag in the high half, the count or inclusive prefix in the low half), stored
// and loaded through cuda::atomic_ref<unsigned long long, thread_scope_device> with
// memory_order_relaxed: flag and count are one atomic word, so no ordering between two words
// is needed. Warp 0 looks back over windows of 32 tiles (lane 0 = the nearest), __nanosleep
// between polls. No staging: every thread writes its kept elements straight to
// out[prefix + rank] (uncoalesced, still stable). Tiles of 4096: 256 threads x 16 consecutive
// elements (four float4).
#include <cuda/atomic>

#include "compact.cuh"

constexpr unsigned int kBlock = 256;
constexpr unsigned int kWarps = kBlock / 32;
constexpr unsigned int kItems = 16;
constexpr unsigned int kTileItems = kItems * kBlock;
constexpr unsigned long long kAggregate = 1ull << 32, kInclusive = 2ull << 32;

using status_ref = cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>;

__device__ unsigned int look_back(unsigned long long* status, unsigned int tile) {
    const unsigned int lane = threadIdx.x % 32;
    unsigned int prefix = 0;
    for (long long end = tile;; end -= 32) {
        const long long p = end - 1 - lane;
        unsigned long long word;
        while (true) {
            word = p >= 0 ? status_ref(status[p]).load(cuda::memory_order_relaxed) : kInclusive;
            if (__all_sync(0xffffffffu, (word >> 32) != 0)) break;
            __nanosleep(200);
        }
        const unsigned int inclusive = __ballot_sync(0xffffffffu, (word >> 32) == 2);
        const unsigned int stop = inclusive ? __ffs(inclusive) - 1 : 31;
        unsigned int add = lane <= stop ? static_cast<unsigned int>(word) : 0u;
        add = __reduce_add_sync(0xffffffffu, add);
        prefix += add;
        if (inclusive) return prefix;
    }
}

__global__ void single_pass(const float* __restrict__ in, size_t n, float threshold,
                            float* __restrict__ out, unsigned int* count, unsigned int* ticket,
                            unsigned long long* status, unsigned int tiles) {
    __shared__ unsigned int s_tile, s_prefix;
    __shared__ unsigned int s_warp[kWarps];
    const unsigned int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (threadIdx.x == 0) s_tile = atomicAdd(ticket, 1u);
    __syncthreads();
    const unsigned int tile = s_tile;
    const size_t first = static_cast<size_t>(tile) * kTileItems + kItems * threadIdx.x;

    float v[kItems];
    if (first + kItems <= n) {
        const float4* in4 = reinterpret_cast<const float4*>(in + first);
        for (unsigned int r = 0; r < kItems / 4; ++r) {
            const float4 q = in4[r];
            v[4 * r] = q.x, v[4 * r + 1] = q.y, v[4 * r + 2] = q.z, v[4 * r + 3] = q.w;
        }
    } else {
        for (unsigned int j = 0; j < kItems; ++j) v[j] = first + j < n ? in[first + j] : 0.0f;
    }
    unsigned int mine = 0;
    for (unsigned int j = 0; j < kItems; ++j) mine += (first + j < n && v[j] > threshold) ? 1u : 0u;
    unsigned int inc = mine;
    for (unsigned int d = 1; d < 32; d *= 2) {
        const unsigned int o = __shfl_up_sync(0xffffffffu, inc, d);
        if (lane >= d) inc += o;
    }
    if (lane == 31) s_warp[warp] = inc;
    __syncthreads();
    unsigned int rank = inc - mine, tile_count = 0;
    for (unsigned int w = 0; w < kWarps; ++w) {
        if (w < warp) rank += s_warp[w];
        tile_count += s_warp[w];
    }
    if (warp == 0) {
        if (lane == 0)
            status_ref(status[tile])
                .store((tile == 0 ? kInclusive : kAggregate) | tile_count,
                       cuda::memory_order_relaxed);
        const unsigned int prefix = tile == 0 ? 0u : look_back(status, tile);
        if (lane == 0) {
            if (tile != 0)
                status_ref(status[tile])
                    .store(kInclusive | (prefix + tile_count), cuda::memory_order_relaxed);
            s_prefix = prefix;
        }
    }
    __syncthreads();
    unsigned int pos = s_prefix + rank;
    for (unsigned int j = 0; j < kItems; ++j)
        if (first + j < n && v[j] > threshold) out[pos++] = v[j];
    if (tile == tiles - 1 && threadIdx.x == 0) *count = s_prefix + tile_count;
}

extern "C" cudaError_t compact(const float* in, float* out, unsigned int* count, size_t n,
                               float threshold, void* workspace, size_t workspace_bytes,
                               cudaStream_t stream) {
    const size_t tiles = (n + kTileItems - 1) / kTileItems;
    if (tiles == 0) {
        cudaError_t err = cudaMemsetAsync(count, 0, sizeof(unsigned int), stream);
        return err != cudaSuccess ? err : cudaGetLastError();
    }
    const size_t used = 256 + tiles * sizeof(unsigned long long);
    if (workspace_bytes < used) return cudaErrorInvalidValue;
    auto* ticket = static_cast<unsigned int*>(workspace);
    auto* status = reinterpret_cast<unsigned long long*>(static_cast<char*>(workspace) + 256);
    cudaError_t err = cudaMemsetAsync(workspace, 0, used, stream);
    if (err != cudaSuccess) return err;
    single_pass<<<static_cast<unsigned int>(tiles), kBlock, 0, stream>>>(
        in, n, threshold, out, count, ticket, status, static_cast<unsigned int>(tiles));
    return cudaGetLastError();
}
