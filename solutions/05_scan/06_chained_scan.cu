// Lesson 05, step 6 — a chained single pass: each tile waits for the one before (solution).
//
// Teaches: how blocks of one kernel can hand values to each other safely, and what a serial
// chain costs. One kernel, one block per tile of 4096 elements, 8n bytes of traffic:
//
//   block: draw a tile number t from an atomic counter
//          load the tile, scan it (step 3's levels, four rows of 1024)   -> its total
//          thread 0: wait until tile t - 1 has published its inclusive prefix P
//                    publish tile t's: P + total
//          every thread: add P, store
//
// Forward progress: a block waits only for tile t - 1, and that tile number was drawn earlier,
// by a block that is already running; it will finish and publish. With t = blockIdx.x instead,
// tile t - 1 might belong to a block the GPU has not started yet, and may never start while
// the waiting blocks occupy every SM: a deadlock (the README explains).
//
// Memory ordering: the flag and the value are one 64-bit word, written by one store, so a
// reader sees either nothing or both. volatile makes every read of the loop a real load.
//
// Depth: the number of tiles. Each link of the chain is a store and a load through L2
// (hundreds of nanoseconds): 65,536 tiles at 2^28 take milliseconds, however fast the rest is.
//
// Check:  ./cudalings check 05_scan/06_chained_scan
// Stuck:  ./cudalings hint 05_scan/06_chained_scan

#include "scan.cuh"

constexpr unsigned int kBlockSize = 256;
constexpr unsigned int kWarps = kBlockSize / 32;
constexpr unsigned int kRows = 4;  // float4 per thread: a tile is kRows rows of 1024 elements
constexpr unsigned int kTileItems = kRows * kBlockSize * 4;  // 4096
constexpr unsigned int kFullMask = 0xffffffffu;
static_assert(kRows * kWarps % 32 == 0, "warp 0 scans the row totals, the same number per lane");

// A status word: the flag in the high 32 bits, a float's bits in the low 32.
constexpr unsigned int kFlagEmpty = 0;      // nothing published yet (what the memset leaves)
constexpr unsigned int kFlagInclusive = 2;  // the value is the inclusive prefix of the tile
// (Step 7 adds kFlagAggregate = 1.)
static_assert(kFlagEmpty == 0, "the launcher's cudaMemsetAsync(0) must leave every word empty");

__device__ __forceinline__ unsigned long long make_status(unsigned int flag, float value) {
    return (static_cast<unsigned long long>(flag) << 32) | __float_as_uint(value);
}
__device__ __forceinline__ unsigned int flag_of(unsigned long long word) {
    return static_cast<unsigned int>(word >> 32);
}
__device__ __forceinline__ float value_of(unsigned long long word) {
    return __uint_as_float(static_cast<unsigned int>(word));
}
// volatile: every call really reads (or writes) memory; without it the compiler may load the
// word once and spin on a register forever.
__device__ __forceinline__ unsigned long long load_status(const unsigned long long* p) {
    return *reinterpret_cast<const volatile unsigned long long*>(p);
}
__device__ __forceinline__ void store_status(unsigned long long* p, unsigned long long word) {
    *reinterpret_cast<volatile unsigned long long*>(p) = word;
}

__device__ __forceinline__ float warp_inclusive_scan(float v, unsigned int lane) {
    for (unsigned int d = 1; d < 32; d *= 2) {
        const float below = __shfl_up_sync(kFullMask, v, d);
        if (lane >= d) v += below;
    }
    return v;
}

__global__ void __launch_bounds__(kBlockSize)
    chained_scan_kernel(const float* __restrict__ in, float* __restrict__ out, size_t n,
                        unsigned int* __restrict__ counter, unsigned long long* status) {
    __shared__ unsigned int s_tile;
    __shared__ float s_prefix[kRows][kWarps];  // row r, warp w: its 128 elements' prefix
    __shared__ float s_tile_prefix;
    const unsigned int lane = threadIdx.x % 32;
    const unsigned int warp = threadIdx.x / 32;

    // The tile number: the order in which blocks start, not blockIdx.x.
    if (threadIdx.x == 0) s_tile = atomicAdd(counter, 1u);
    __syncthreads();
    const unsigned int tile = s_tile;
    const size_t tile_begin = static_cast<size_t>(tile) * kTileItems;
    const bool full_tile = tile_begin + kTileItems <= n;

    // Row r of the tile is step 3's tile: 1024 elements, one float4 per thread.
    float4 x[kRows];
    if (full_tile) {
        const float4* in4 = reinterpret_cast<const float4*>(in + tile_begin);
#pragma unroll
        for (unsigned int r = 0; r < kRows; ++r) x[r] = in4[r * kBlockSize + threadIdx.x];
    } else {
#pragma unroll
        for (unsigned int r = 0; r < kRows; ++r) {
            const size_t first = tile_begin + r * kTile + 4 * threadIdx.x;
            x[r].x = first + 0 < n ? in[first + 0] : 0.0f;
            x[r].y = first + 1 < n ? in[first + 1] : 0.0f;
            x[r].z = first + 2 < n ? in[first + 2] : 0.0f;
            x[r].w = first + 3 < n ? in[first + 3] : 0.0f;
        }
    }

    // Thread and warp levels of every row (step 3): afterwards x[r] holds each element's prefix
    // within the 128 elements of (row r, this warp), and s_prefix[r][warp] their total.
#pragma unroll
    for (unsigned int r = 0; r < kRows; ++r) {
        x[r].y += x[r].x;
        x[r].z += x[r].y;
        x[r].w += x[r].z;
        const float inclusive = warp_inclusive_scan(x[r].w, lane);
        float below = __shfl_up_sync(kFullMask, inclusive, 1);
        if (lane == 0) below = 0.0f;
        x[r].x += below;
        x[r].y += below;
        x[r].z += below;
        x[r].w += below;
        if (lane == 31) s_prefix[r][warp] = inclusive;
    }
    __syncthreads();

    if (warp == 0) {
        // Block level: the kRows x kWarps totals in tile order (row by row) become exclusive
        // prefixes within the tile; their sum is the tile's total.
        constexpr unsigned int kPerLane = kRows * kWarps / 32;
        float* totals = &s_prefix[0][0];
        float v[kPerLane];
        float lane_total = 0.0f;
        // dev: not covered (kPerLane is 1 at this tile shape: the loop has one round)
#pragma unroll
        for (unsigned int j = 0; j < kPerLane; ++j) {
            const float t = totals[lane * kPerLane + j];
            v[j] = lane_total;
            lane_total += t;
        }
        const float inclusive = warp_inclusive_scan(lane_total, lane);
        float below = __shfl_up_sync(kFullMask, inclusive, 1);
        if (lane == 0) below = 0.0f;
#pragma unroll
        for (unsigned int j = 0; j < kPerLane; ++j) totals[lane * kPerLane + j] = below + v[j];

        const float tile_total = __shfl_sync(kFullMask, inclusive, 31);
        if (lane == 0) {
            // Wait for the previous tile's inclusive prefix, then publish this tile's.
            float prefix = 0.0f;
            if (tile > 0) {
                unsigned long long word;
                do {
                    word = load_status(&status[tile - 1]);
                } while (flag_of(word) != kFlagInclusive);
                prefix = value_of(word);
            }
            store_status(&status[tile], make_status(kFlagInclusive, prefix + tile_total));
            s_tile_prefix = prefix;
        }
    }
    __syncthreads();

    const float tile_prefix = s_tile_prefix;
#pragma unroll
    for (unsigned int r = 0; r < kRows; ++r) {
        const float p = tile_prefix + s_prefix[r][warp];
        x[r].x += p;
        x[r].y += p;
        x[r].z += p;
        x[r].w += p;
    }
    if (full_tile) {
        float4* out4 = reinterpret_cast<float4*>(out + tile_begin);
#pragma unroll
        for (unsigned int r = 0; r < kRows; ++r) out4[r * kBlockSize + threadIdx.x] = x[r];
    } else {
#pragma unroll
        for (unsigned int r = 0; r < kRows; ++r) {
            const size_t first = tile_begin + r * kTile + 4 * threadIdx.x;
            if (first + 0 < n) out[first + 0] = x[r].x;
            if (first + 1 < n) out[first + 1] = x[r].y;
            if (first + 2 < n) out[first + 2] = x[r].z;
            if (first + 3 < n) out[first + 3] = x[r].w;
        }
    }
}

// Workspace: the tile counter in the first 256 bytes, then one status word per tile.
constexpr size_t kStatusOffset = 256;

extern "C" cudaError_t inclusive_scan(const float* in, float* out, size_t n, void* workspace,
                                      size_t workspace_bytes, cudaStream_t stream) {
    const size_t tiles = (n + kTileItems - 1) / kTileItems;
    const size_t used = kStatusOffset + tiles * sizeof(unsigned long long);
    if (workspace_bytes < used || workspace_bytes < scan_workspace_bytes(n))
        return cudaErrorInvalidValue;
    auto* counter = static_cast<unsigned int*>(workspace);
    auto* status =
        reinterpret_cast<unsigned long long*>(static_cast<char*>(workspace) + kStatusOffset);

    // The counter and every status word start at 0 (kFlagEmpty), at every call.
    cudaError_t err = cudaMemsetAsync(workspace, 0, used, stream);
    if (err != cudaSuccess) return err;
    chained_scan_kernel<<<static_cast<unsigned int>(tiles), kBlockSize, 0, stream>>>(
        in, out, n, counter, status);
    return cudaGetLastError();
}
