// step: 05_scan/07_decoupled_lookback.cu
// emulated: PASS
//
// Correct: the decoupled look-back as CUB's older tile state did it for values that do not fit
// next to a flag: three arrays, `flags` (read and written through volatile), `aggregates` and
// `inclusives` (plain floats). A tile writes the value, then __threadfence(), then the flag, so a
// reader that has seen the flag (and fences before reading) sees the value. The aggregate and
// the inclusive prefix live in different arrays, so a predecessor that publishes its inclusive
// prefix never overwrites a value a successor may be reading. Warp 0 reads a window of 32 flags
// (lane 0 = the nearest tile), waits with __any_sync until all are set, and adds the values up
// to the nearest inclusive one with an xor-shuffle sum. Tiles of 2048: 512 threads x 4.
#include "scan.cuh"

constexpr unsigned int kBlock = 512;
constexpr unsigned int kTileItems = 4 * kBlock;  // 2048: 12 bytes of status per tile fit
constexpr unsigned int kWarps = kBlock / 32;
enum : unsigned int { kFlagEmpty = 0, kFlagAggregate = 1, kFlagInclusive = 2 };

__device__ float warp_inclusive(float v, unsigned int lane) {
    for (unsigned int d = 1; d < 32; d <<= 1) {
        const float o = __shfl_up_sync(0xffffffffu, v, d);
        if (lane >= d) v += o;
    }
    return v;
}

// Warp 0 of tile `tile` > 0: the sum of every tile before it, in every lane.
__device__ float look_back(volatile unsigned int* flags, const float* aggregates,
                           const float* inclusives, int tile, unsigned int lane) {
    float exclusive = 0.0f;
    for (int end = tile;; end -= 32) {
        const int p = end - 1 - static_cast<int>(lane);
        unsigned int f;
        do {
            f = p >= 0 ? flags[p] : kFlagInclusive;  // before tile 0: an inclusive 0
        } while (__any_sync(0xffffffffu, f == kFlagEmpty));
        __threadfence();  // the flag before the value
        float value = 0.0f;
        if (p >= 0) value = f == kFlagInclusive ? inclusives[p] : aggregates[p];
        const unsigned int inclusive = __ballot_sync(0xffffffffu, f == kFlagInclusive);
        const unsigned int stop = inclusive ? __ffs(inclusive) - 1 : 31;
        float add = lane <= stop ? value : 0.0f;
        for (unsigned int o = 16; o > 0; o >>= 1) add += __shfl_xor_sync(0xffffffffu, add, o);
        exclusive += add;
        if (inclusive) return exclusive;
    }
}

__global__ void lookback_kernel(const float* in, float* out, size_t n, unsigned int* counter,
                                unsigned int* flags, float* aggregates, float* inclusives) {
    __shared__ unsigned int s_tile;
    __shared__ float s_warp[kWarps];
    __shared__ float s_exclusive;
    volatile unsigned int* vflags = flags;
    if (threadIdx.x == 0) s_tile = atomicAdd(counter, 1u);
    __syncthreads();
    const unsigned int tile = s_tile;
    const unsigned int lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    const size_t first = static_cast<size_t>(tile) * kTileItems + 4 * threadIdx.x;

    float x[4];
    if (first + 4 <= n) {
        const float4 q = reinterpret_cast<const float4*>(in)[first / 4];
        x[0] = q.x, x[1] = q.y, x[2] = q.z, x[3] = q.w;
    } else {
        for (int j = 0; j < 4; ++j) x[j] = first + j < n ? in[first + j] : 0.0f;
    }
    for (int j = 1; j < 4; ++j) x[j] += x[j - 1];
    const float inc = warp_inclusive(x[3], lane);
    float below = __shfl_up_sync(0xffffffffu, inc, 1);
    if (lane == 0) below = 0.0f;
    if (lane == 31) s_warp[warp] = inc;
    __syncthreads();
    float aggregate = 0.0f;
    for (unsigned int w = 0; w < kWarps; ++w) {
        if (w == warp) below += aggregate;  // the warps before mine
        aggregate += s_warp[w];
    }

    if (warp == 0) {
        if (lane == 0) {
            if (tile == 0) {
                inclusives[0] = aggregate;
                __threadfence();
                vflags[0] = kFlagInclusive;
            } else {
                aggregates[tile] = aggregate;
                __threadfence();
                vflags[tile] = kFlagAggregate;
            }
        }
        float exclusive = 0.0f;
        if (tile > 0) exclusive = look_back(vflags, aggregates, inclusives, tile, lane);
        if (lane == 0) {
            if (tile > 0) {
                inclusives[tile] = exclusive + aggregate;
                __threadfence();
                vflags[tile] = kFlagInclusive;
            }
            s_exclusive = exclusive;
        }
    }
    __syncthreads();
    below += s_exclusive;
    for (int j = 0; j < 4; ++j)
        if (first + j < n) out[first + j] = x[j] + below;
}

extern "C" cudaError_t inclusive_scan(const float* in, float* out, size_t n, void* workspace,
                                      size_t workspace_bytes, cudaStream_t stream) {
    const size_t tiles = (n + kTileItems - 1) / kTileItems;
    // [counter, 256 bytes] [flags] [aggregates] [inclusives]: 256 + 12 bytes per tile
    const size_t flag_end = 256 + 4 * tiles;
    if (workspace_bytes < flag_end + 8 * tiles) return cudaErrorInvalidValue;
    char* base = static_cast<char*>(workspace);
    auto* counter = reinterpret_cast<unsigned int*>(base);
    auto* flags = reinterpret_cast<unsigned int*>(base + 256);
    auto* aggregates = reinterpret_cast<float*>(base + flag_end);
    auto* inclusives = aggregates + tiles;
    cudaError_t err = cudaMemsetAsync(workspace, 0, flag_end, stream);
    if (err != cudaSuccess) return err;
    lookback_kernel<<<static_cast<unsigned int>(tiles), kBlock, 0, stream>>>(
        in, out, n, counter, flags, aggregates, inclusives);
    return cudaGetLastError();
}
