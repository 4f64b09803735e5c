// Lesson 05, step 4 — the three-level device scan: scan, scan the totals, add back.
//
// Teaches: how a scan crosses tiles when blocks cannot wait for each other: kernel boundaries.
//
//   level 1:  scan every tile of 1024 (step 3's kernel), and write each tile's total
//             x: [ tile 0 | tile 1 | tile 2 | ... ]      -> out: every tile scanned alone
//                                                        -> totals: T0, T1, T2, ...
//   level 2:  scan the totals, the same way (recursively: 2^28 elements have 2^18 totals, which
//             have 256 totals of their own, which fit in one tile)
//                                                        -> totals: T0, T0+T1, T0+T1+T2, ...
//   add back: tile b >= 1 adds scanned total b - 1 to each of its elements
//
// Every arrow is a kernel launch: the end of a kernel is the only grid-wide barrier there is,
// and it is what guarantees that every tile total of a level is written before the next level
// reads them. Depth: 2 launches per level, 3 levels at 2^28 (5 launches in all).
//
// What to do (the tile kernel is step 3's, given, plus the tile's total):
//   1. add_tile_prefix_kernel: tile b + 1 adds scanned total b;
//   2. scan_levels: scan the tiles, recurse on the totals, add back.
// Read "Step 4" in lessons/05_scan/README.md first.
//
// Check:  ./cudalings check 05_scan/04_scan_then_propagate
// Stuck:  ./cudalings hint 05_scan/04_scan_then_propagate
//
// As given, this file compiles and runs but writes nothing, so every test fails.

#include "scan.cuh"

constexpr unsigned int kItemsPerThread = 4;                   // one float4
constexpr unsigned int kBlockSize = kTile / kItemsPerThread;  // 256 threads
constexpr unsigned int kWarps = kBlockSize / 32;
constexpr unsigned int kFullMask = 0xffffffffu;
static_assert(kTile % 128 == 0, "a tile is whole warps of float4");

__device__ __forceinline__ float warp_inclusive_scan(float v, unsigned int lane) {
    for (unsigned int d = 1; d < 32; d *= 2) {
        const float below = __shfl_up_sync(kFullMask, v, d);
        if (lane >= d) v += below;
    }
    return v;
}

// Given: step 3's register tile, plus the tile's total: out = the scan of each tile of in on its
// own, totals[b] = the sum of tile b. in and out may be the same array (the levels above the first
// scan their totals in place): each thread reads its four elements before it writes them.
__global__ void __launch_bounds__(kBlockSize)
    scan_tiles_kernel(const float* in, float* out, size_t n, float* __restrict__ totals) {
    __shared__ float warp_totals[kWarps];
    const unsigned int lane = threadIdx.x % 32;
    const unsigned int warp = threadIdx.x / 32;
    const size_t tile_begin = static_cast<size_t>(blockIdx.x) * kTile;
    const size_t first = tile_begin + kItemsPerThread * threadIdx.x;
    const bool full_tile = tile_begin + kTile <= n;

    float4 x;
    if (full_tile) {
        x = reinterpret_cast<const float4*>(in)[first / 4];
    } else {
        x.x = first + 0 < n ? in[first + 0] : 0.0f;
        x.y = first + 1 < n ? in[first + 1] : 0.0f;
        x.z = first + 2 < n ? in[first + 2] : 0.0f;
        x.w = first + 3 < n ? in[first + 3] : 0.0f;
    }
    x.y += x.x;
    x.z += x.y;
    x.w += x.z;

    const float inclusive = warp_inclusive_scan(x.w, lane);
    float below = __shfl_up_sync(kFullMask, inclusive, 1);
    if (lane == 0) below = 0.0f;
    if (lane == 31) warp_totals[warp] = inclusive;
    __syncthreads();
    if (warp == 0) {
        float w = lane < kWarps ? warp_totals[lane] : 0.0f;
        w = warp_inclusive_scan(w, lane);
        if (lane < kWarps) warp_totals[lane] = w;
    }
    __syncthreads();
    if (warp > 0) below += warp_totals[warp - 1];

    x.x += below;
    x.y += below;
    x.z += below;
    x.w += below;
    if (full_tile) {
        reinterpret_cast<float4*>(out)[first / 4] = x;
    } else {
        if (first + 0 < n) out[first + 0] = x.x;
        if (first + 1 < n) out[first + 1] = x.y;
        if (first + 2 < n) out[first + 2] = x.z;
        if (first + 3 < n) out[first + 3] = x.w;
    }
    // The last thread's last value is the whole tile's sum (missing elements counted as 0).
    if (threadIdx.x == kBlockSize - 1) totals[blockIdx.x] = x.w;
}

// Block b adds the scanned total of tile b (the sum of tiles 0..b) to every element of tile
// b + 1: launched with one block per tile except the first, which needs nothing.
__global__ void __launch_bounds__(kBlockSize)
    add_tile_prefix_kernel(float* out, size_t n, const float* __restrict__ scanned_totals) {
    // TODO(1 of 2, ~6 lines): tile = blockIdx.x + 1 (as a size_t); prefix =
    //   scanned_totals[tile - 1]; this thread's 4 elements start at tile * kTile + 4 * threadIdx.x.
    //   Full tile (tile * kTile + kTile <= n): load the float4, add prefix to its 4 values, store
    //   it back. Last, partial tile: add prefix to each of the 4 elements that is below n.
    //   Delete the (void) line when you are done.
    (void)out, (void)n, (void)scanned_totals;
}

// Floats of workspace one level's totals take: rounded up to 64 floats (256 bytes), so that the
// next level's array starts aligned for float4 access.
inline size_t level_floats(size_t tiles) { return (tiles + 63) / 64 * 64; }

// Scans in[0, n) into out; `scratch` has room for the totals of this level and all those above.
cudaError_t scan_levels(const float* in, float* out, size_t n, float* scratch,
                        cudaStream_t stream) {
    // TODO(2 of 2, ~12 lines): three things, checking cudaGetLastError() after each launch:
    //   - tiles = tile_count(n); scan_tiles_kernel<<<tiles, kBlockSize, 0, stream>>>(in, out, n,
    //     scratch): every tile scanned on its own, tile b's total in scratch[b]. If there is only
    //     one tile, that is the whole scan: return.
    //   - the level above: scan_levels(scratch, scratch, tiles, scratch + level_floats(tiles),
    //     stream): the totals, scanned in place; their own totals go after them.
    //   - add_tile_prefix_kernel<<<tiles - 1, kBlockSize, 0, stream>>>(out, n, scratch).
    //   Delete the (void) line when you are done.
    (void)in, (void)out, (void)n, (void)scratch, (void)stream;
    return cudaSuccess;
}

extern "C" cudaError_t inclusive_scan(const float* in, float* out, size_t n, void* workspace,
                                      size_t workspace_bytes, cudaStream_t stream) {
    // Every level's totals must fit: n / 1024 floats, then n / 1024^2, ... (each rounded up).
    size_t needed = 0;
    for (size_t count = n; count > 1; count = tile_count(count)) {
        needed += level_floats(tile_count(count)) * sizeof(float);
    }
    if (workspace_bytes < needed || workspace_bytes < scan_workspace_bytes(n)) {
        return cudaErrorInvalidValue;
    }
    return scan_levels(in, out, n, static_cast<float*>(workspace), stream);
}
