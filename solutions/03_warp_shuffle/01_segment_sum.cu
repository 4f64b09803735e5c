// Lesson 03, step 1 — segment sums with __shfl_down_sync (solution).
//
// Teaches: adding values that live in different threads' registers without shared memory.
// __shfl_down_sync(mask, v, offset) hands every lane the v of the lane `offset` above it; five
// rounds (offsets 16, 8, 4, 2, 1) leave the sum of 32 lanes in lane 0, and three rounds
// (offsets 4, 2, 1) the sum of each group of 8 lanes in the group's first lane.
//
// The fast layout: each warp owns one *tile* of 32 consecutive segments (1024 floats, 4 KiB).
// The tile is read with float4 loads, so a lane holds 4 consecutive floats and a 32-float
// segment is spread over 8 lanes; one warp-wide load of 512 bytes covers 4 segments, and 8 of
// them cover the tile. Each lane first issues all 8 of its loads, then, per load, adds its 4
// floats in registers and takes part in 3 shuffle rounds that finish each segment in the
// first lane of its group of 8. Those 4 lanes (0, 8, 16, 24) write the tile's 32 sums.
//
// Why this layout: the sum of 2^28 floats in 32-wide segments reads 1 GiB and writes 32 MiB,
// so DRAM sets its floor; what separates a kernel at the floor from one 5% above it is how
// many bytes each thread keeps in flight (here 128) and how few instructions it spends per
// byte (3 shuffles per 16 bytes instead of 5 per 4 bytes).
//
// Check:  ./cudalings check 03_warp_shuffle/01_segment_sum
// Stuck:  ./cudalings hint 03_warp_shuffle/01_segment_sum

#include "warp_shuffle.cuh"

constexpr unsigned int kBlockSize = 256;
constexpr unsigned int kWarpsPerBlock = kBlockSize / 32;
// float4 loads per lane: a tile is 8 x 32 lanes x 4 floats = 1024 floats = 32 segments.
constexpr int kLoadsPerLane = 8;
constexpr size_t kTileFloats = 32 * 32;

// Lanes 0, 8, 16 and 24 get the sums of v over lanes 0-7, 8-15, 16-23 and 24-31. No `width`
// argument is needed: a group's first lane only ever reads lanes of its own group (g + 4,
// then g + 2, then g + 1); the lanes that read across a group boundary produce values nobody
// uses. Every lane must execute every round: the mask promises that all 32 arrive.
__device__ __forceinline__ float group8_sum(float v) {
#pragma unroll
    for (int offset = 4; offset > 0; offset /= 2) v += __shfl_down_sync(kFullMask, v, offset);
    return v;
}

// Pack p = floats 4p .. 4p + 3, zeros past n. Only the last tile needs this: it may end in
// the middle of a pack (n % 4 != 0) or hold no pack at all for some lanes.
__device__ __forceinline__ float4 load_pack_checked(const float* __restrict__ in, size_t p,
                                                    size_t n) {
    const size_t i = 4 * p;
    if (i + 3 < n) return reinterpret_cast<const float4*>(in)[p];
    return make_float4(i < n ? in[i] : 0.0f, i + 1 < n ? in[i + 1] : 0.0f,
                       i + 2 < n ? in[i + 2] : 0.0f, 0.0f);
}

__global__ void __launch_bounds__(kBlockSize)
    segment_sum_kernel(const float* __restrict__ in, float* __restrict__ sums, size_t n) {
    const unsigned int lane = threadIdx.x % 32;
    const size_t tile = (static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
    // The grid is rounded up to whole blocks: warps past the last tile leave, all 32 lanes
    // together (the test depends on the warp alone), so no shuffle misses a lane.
    if (tile * kTileFloats >= n) return;

    // Lane l's k-th pack is pack k * 32 + l of the tile: segment 4 k + l / 8 of the tile.
    const size_t first_pack = tile * (kTileFloats / 4) + lane;
    float4 v[kLoadsPerLane];
    if ((tile + 1) * kTileFloats <= n) {
        // A whole tile (every tile but possibly the last): 8 loads, no tests, all in flight
        // before the first one is used.
        const float4* in4 = reinterpret_cast<const float4*>(in);
#pragma unroll
        for (int k = 0; k < kLoadsPerLane; ++k) v[k] = in4[first_pack + k * 32];
    } else {
        // The last, partial tile: zeros past n. The partial last segment (n % 32 != 0) is
        // summed over the elements it has, since the zeros add nothing.
#pragma unroll
        for (int k = 0; k < kLoadsPerLane; ++k)
            v[k] = load_pack_checked(in, first_pack + k * 32, n);
    }

    float s[kLoadsPerLane];
#pragma unroll
    for (int k = 0; k < kLoadsPerLane; ++k)
        s[k] = group8_sum((v[k].x + v[k].y) + (v[k].z + v[k].w));

    // Lane 8 g now holds the sums of segments 4 k + g (k = 0..7) of the tile.
    if (lane % 8 == 0) {
        const size_t segments = (n + 31) / 32;
#pragma unroll
        for (int k = 0; k < kLoadsPerLane; ++k) {
            const size_t segment = tile * 32 + 4 * k + lane / 8;
            if (segment < segments) sums[segment] = s[k];
        }
    }
}

extern "C" cudaError_t segment_sum(const float* in, float* sums, size_t n, cudaStream_t stream) {
    // One warp per tile, and as many blocks as that takes: each warp's job is a fixed 4 KiB, so
    // the GPU's block scheduler keeps every SM full until the end, with no loop at all. (A
    // grid-stride loop over tiles with one wave of blocks, as in lesson 01, measured 1% slower
    // here: see "Step 1" in the README.)
    const size_t tiles = (n + kTileFloats - 1) / kTileFloats;
    const size_t blocks = (tiles + kWarpsPerBlock - 1) / kWarpsPerBlock;
    segment_sum_kernel<<<static_cast<unsigned int>(blocks), kBlockSize, 0, stream>>>(in, sums, n);
    return cudaGetLastError();
}
