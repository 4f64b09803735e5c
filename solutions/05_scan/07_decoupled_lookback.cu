// Lesson 05, step 7 — decoupled look-back: one pass at the speed of a copy (solution).
//
// Teaches: the single-pass scan of Merrill and Garland (CUB's DeviceScan). Step 6's chain is
// right but serial: tile t cannot publish before tile t - 1 has, so the tiles finish one after
// another. Here a tile publishes twice:
//
//   1. its AGGREGATE (the sum of its own elements) as soon as it is known, without waiting for
//      anybody: {kFlagAggregate, sum};
//   2. its INCLUSIVE prefix (the sum of everything up to its end) once it has its exclusive
//      prefix: {kFlagInclusive, exclusive + sum}.
//
// To find its exclusive prefix, tile t looks back: warp 0 reads the status words of the 32
// tiles before it, one per lane. If one of them is inclusive, the nearest such prefix plus the
// aggregates after it is the answer; if all 32 are aggregates, their sum is part of it and the
// window slides 32 tiles further back. A tile never waits for a predecessor's look-back, only
// for its aggregate, which every started tile publishes soon: the chain of step 6 is gone.
//
//   window over tiles t-32 .. t-1 (lane 31 = tile t-1):
//     flags:  ... A  A  I  A  A  A        A = aggregate, I = inclusive, . = not yet (wait)
//     sum:             [I  +  A + A + A]  = exclusive prefix of tile t
//
// Polling costs: 32 lanes of thousands of tiles reading status words in L2. Back-off keeps it
// down: sleep kLookbackDelayNs after publishing the aggregate (the predecessors are probably
// still busy), and kPollDelayNs before reading a window again that had a tile not yet started.
//
// Tile numbers come from an atomic counter, as in step 6: tile t - 1 belongs to a block that has
// started already, so the wait always ends (see "Forward progress" in the README).
//
// Float results can differ in their last bits from call to call: how far back the look-back
// goes, and so the order of the additions, depends on timing. Integer data are exact.
//
// Check:  ./cudalings check 05_scan/07_decoupled_lookback
// Stuck:  ./cudalings hint 05_scan/07_decoupled_lookback

#include "scan.cuh"

constexpr unsigned int kBlockSize = 256;
constexpr unsigned int kWarps = kBlockSize / 32;
constexpr unsigned int kRows = 8;  // float4 per thread: a tile is kRows rows of 1024 elements
constexpr unsigned int kTileItems = kRows * kBlockSize * 4;  // 8192
constexpr unsigned int kLookbackDelayNs = 3000;              // after publishing the aggregate
constexpr unsigned int kPollDelayNs = 1000;                  // before reading a window again
constexpr bool kStreaming = true;  // __ldcs/__stcs: tell the caches the data is used once
constexpr unsigned int kFullMask = 0xffffffffu;
static_assert(kRows * kWarps % 32 == 0, "warp 0 scans the row totals, the same number per lane");

// A status word: the flag in the high 32 bits, a float's bits in the low 32. One 64-bit store
// publishes both at once, so a reader never sees a flag with the wrong value.
constexpr unsigned int kFlagEmpty = 0;  // nothing published yet (what the memset leaves)
constexpr unsigned int kFlagAggregate = 1;
constexpr unsigned int kFlagInclusive = 2;
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
// volatile: every call really reads (or writes) memory, at L2 where all SMs meet; without it
// the compiler may read once and spin on a register forever.
__device__ __forceinline__ unsigned long long load_status(const unsigned long long* p) {
    return *reinterpret_cast<const volatile unsigned long long*>(p);
}
__device__ __forceinline__ void store_status(unsigned long long* p, unsigned long long word) {
    *reinterpret_cast<volatile unsigned long long*>(p) = word;
}

__device__ __forceinline__ float4 load_once(const float4* p) {
    if constexpr (kStreaming) return __ldcs(p);
    return *p;
}
__device__ __forceinline__ void store_once(float4* p, float4 v) {
    if constexpr (kStreaming) {
        __stcs(p, v);
    } else {
        *p = v;
    }
}

__device__ __forceinline__ float warp_inclusive_scan(float v, unsigned int lane) {
    for (unsigned int d = 1; d < 32; d *= 2) {
        const float below = __shfl_up_sync(kFullMask, v, d);
        if (lane >= d) v += below;
    }
    return v;
}

// The sum of v over the warp, in lane 0.
__device__ __forceinline__ float warp_sum(float v) {
    for (unsigned int offset = 16; offset > 0; offset /= 2)
        v += __shfl_down_sync(kFullMask, v, offset);
    return v;
}

// Warp 0 of tile `tile` >= 1: returns, in lane 0, the sum of every element before the tile.
__device__ float look_back(const unsigned long long* status, unsigned int tile, unsigned int lane) {
    __nanosleep(kLookbackDelayNs);
    float exclusive = 0.0f;
    int end = static_cast<int>(tile);  // this window: tiles end - 32 .. end - 1
    // dev: not covered (a second window only past 32 waiting tiles, 2^18+)
    while (true) {
        // Lane 31 reads the nearest predecessor. Tiles before 0 count as an inclusive 0: they
        // are never reached, because tile 0 publishes an inclusive prefix and lies above them.
        const int pred = end - 32 + static_cast<int>(lane);
        unsigned long long word;
        while (true) {
            word = pred >= 0 ? load_status(&status[pred]) : make_status(kFlagInclusive, 0.0f);
            if (__ballot_sync(kFullMask, flag_of(word) == kFlagEmpty) == 0) break;
            __nanosleep(kPollDelayNs);  // a tile of the window has not published yet
        }
        // The nearest inclusive prefix is the highest lane that has one; it and the aggregates
        // above it cover everything before this window's end. Without one, all 32 aggregates
        // count, and the window moves 32 tiles back.
        const unsigned int inclusive = __ballot_sync(kFullMask, flag_of(word) == kFlagInclusive);
        const int nearest = inclusive ? 31 - __clz(static_cast<int>(inclusive)) : 0;
        exclusive += warp_sum(static_cast<int>(lane) >= nearest ? value_of(word) : 0.0f);
        if (inclusive) return exclusive;
        // dev: not covered (the window moves back only past 32 waiting tiles, 2^18+)
        end -= 32;
    }
}

__global__ void __launch_bounds__(kBlockSize)
    lookback_scan_kernel(const float* __restrict__ in, float* __restrict__ out, size_t n,
                         unsigned int* __restrict__ counter, unsigned long long* status) {
    __shared__ unsigned int s_tile;
    __shared__ float s_prefix[kRows][kWarps];  // row r, warp w: its 128 elements' prefix
    __shared__ float s_tile_prefix;
    const unsigned int lane = threadIdx.x % 32;
    const unsigned int warp = threadIdx.x / 32;

    // Tile numbers in the order blocks start (step 6).
    if (threadIdx.x == 0) s_tile = atomicAdd(counter, 1u);
    __syncthreads();
    const unsigned int tile = s_tile;
    const size_t tile_begin = static_cast<size_t>(tile) * kTileItems;
    const bool full_tile = tile_begin + kTileItems <= n;

    // Row r of the tile is step 3's tile: 1024 elements, one float4 per thread. All kRows loads
    // are issued before the first is used.
    float4 x[kRows];
    if (full_tile) {
        const float4* in4 = reinterpret_cast<const float4*>(in + tile_begin);
#pragma unroll
        for (unsigned int r = 0; r < kRows; ++r)
            x[r] = load_once(&in4[r * kBlockSize + threadIdx.x]);
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
        // prefixes within the tile; their sum is the tile's aggregate.
        constexpr unsigned int kPerLane = kRows * kWarps / 32;
        float* totals = &s_prefix[0][0];
        float v[kPerLane];
        float lane_total = 0.0f;
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
        const float aggregate = __shfl_sync(kFullMask, inclusive, 31);

        // Publish the aggregate at once (tile 0's is already its inclusive prefix), look back,
        // publish the inclusive prefix.
        if (lane == 0) {
            store_status(&status[tile],
                         make_status(tile == 0 ? kFlagInclusive : kFlagAggregate, aggregate));
        }
        float exclusive = 0.0f;
        if (tile > 0) exclusive = look_back(status, tile, lane);
        if (lane == 0) {
            if (tile > 0)
                store_status(&status[tile], make_status(kFlagInclusive, exclusive + aggregate));
            s_tile_prefix = exclusive;
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
        for (unsigned int r = 0; r < kRows; ++r)
            store_once(&out4[r * kBlockSize + threadIdx.x], x[r]);
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
    lookback_scan_kernel<<<static_cast<unsigned int>(tiles), kBlockSize, 0, stream>>>(
        in, out, n, counter, status);
    return cudaGetLastError();
}
