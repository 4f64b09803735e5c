// Lesson 03, step 1 — segment sums with __shfl_down_sync.
//
// Teaches: adding values that live in different threads' registers, with no shared memory.
// __shfl_down_sync(mask, v, offset) hands every lane the v of the lane `offset` above it; five
// rounds (offsets 16, 8, 4, 2, 1) leave the sum of the warp's 32 values in lane 0, and three
// rounds (offsets 4, 2, 1) the sum of each group of 8 lanes in the group's first lane.
//
// The job: sums[s] = in[32 s] + ... + in[32 s + 31] for every segment s; the last segment may
// be partial (n % 32 elements), see warp_shuffle.cuh.
//
// The layout is given, because it is what makes this kernel as fast as DRAM allows (see
// "Step 1" in the README): each warp owns a *tile* of 32 segments (1024 floats). Each lane
// loads float4 packs (4 consecutive floats), so a 32-float segment lies in 8 lanes and one
// warp-wide load covers 4 segments; 8 loads per lane cover the tile, all issued before any is
// used. Per load, each lane adds its 4 floats, then 3 shuffle rounds (offsets 4, 2, 1) finish
// each segment's sum in the first lane of its group of 8, and those lanes write.
//
// What to do:
//   1. group8_sum: the 3-round reduction over each group of 8 lanes.
//   2. load_pack_checked: a float4 pack with zeros past n (for the last tile).
//   3. the end of the kernel: reduce each pack and let lanes 0, 8, 16, 24 write.
// Read "Shuffles" and "Step 1" in lessons/03_warp_shuffle/README.md first.
//
// Check:  ./cudalings check 03_warp_shuffle/01_segment_sum
// Stuck:  ./cudalings hint 03_warp_shuffle/01_segment_sum
//
// As given, this file compiles and runs but writes nothing, so every test fails.

#include "warp_shuffle.cuh"

constexpr unsigned int kBlockSize = 256;
constexpr unsigned int kWarpsPerBlock = kBlockSize / 32;
// float4 loads per lane: a tile is 8 x 32 lanes x 4 floats = 1024 floats = 32 segments.
constexpr int kLoadsPerLane = 8;
constexpr size_t kTileFloats = 32 * 32;

// Lanes 0, 8, 16 and 24 return the sums of v over lanes 0-7, 8-15, 16-23 and 24-31.
__device__ __forceinline__ float group8_sum(float v) {
    // TODO(1 of 3, ~2 lines): for offset = 4, 2, 1:  v += __shfl_down_sync(kFullMask, v,
    //   offset). Every lane must run every round (no `if` around the shuffle): the mask says all
    //   32 lanes take part. (Lane 8 g reads only lanes 8 g + 4, + 2, + 1 of its own group; what
    //   the other lanes compute is not used.)
    return v;
}

// Pack p = floats 4p .. 4p + 3, zeros past n (the last tile may end inside a pack, or before).
__device__ __forceinline__ float4 load_pack_checked(const float* __restrict__ in, size_t p,
                                                    size_t n) {
    // TODO(2 of 3, ~4 lines): i = 4 * p. When i + 3 < n the whole pack exists: return
    //   reinterpret_cast<const float4*>(in)[p]. Otherwise build it with make_float4 from
    //   in[i], in[i + 1], in[i + 2], each only if its index is < n (else 0.0f), and 0.0f last.
    //   Delete the (void) line when you are done.
    (void)in, (void)p, (void)n;
    return make_float4(0.0f, 0.0f, 0.0f, 0.0f);
}

__global__ void __launch_bounds__(kBlockSize)
    segment_sum_kernel(const float* __restrict__ in, float* __restrict__ sums, size_t n) {
    const unsigned int lane = threadIdx.x % 32;
    const size_t tile = (static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
    // Warps past the last tile leave, all 32 lanes together (the test depends on the warp).
    if (tile * kTileFloats >= n) return;

    // Lane l's k-th pack is pack k * 32 + l of the tile: segment 4 k + l / 8 of the tile.
    const size_t first_pack = tile * (kTileFloats / 4) + lane;
    float4 v[kLoadsPerLane];
    if ((tile + 1) * kTileFloats <= n) {
        // A whole tile: 8 loads, no tests, all in flight before the first one is used.
        const float4* in4 = reinterpret_cast<const float4*>(in);
#pragma unroll
        for (int k = 0; k < kLoadsPerLane; ++k) v[k] = in4[first_pack + k * 32];
    } else {
        // The last, partial tile: zeros past n (they add nothing to the partial segment).
#pragma unroll
        for (int k = 0; k < kLoadsPerLane; ++k)
            v[k] = load_pack_checked(in, first_pack + k * 32, n);
    }

    // TODO(3 of 3, ~8 lines): for k = 0..7: s[k] = group8_sum(v[k].x + v[k].y + v[k].z +
    //   v[k].w), in a loop that every lane runs. Then, only in lanes with lane % 8 == 0: for each
    //   k, segment = tile * 32 + 4 * k + lane / 8; write sums[segment] = s[k] if segment is
    //   below the number of segments, (n + 31) / 32 (the last tile may hold fewer than 32).
    //   Delete the two (void) lines when you are done.
    (void)static_cast<const float4*>(v);
    (void)sums;
}

extern "C" cudaError_t segment_sum(const float* in, float* sums, size_t n, cudaStream_t stream) {
    // One warp per tile, and as many blocks as that takes (see "Step 1" in the README).
    const size_t tiles = (n + kTileFloats - 1) / kTileFloats;
    const size_t blocks = (tiles + kWarpsPerBlock - 1) / kWarpsPerBlock;
    segment_sum_kernel<<<static_cast<unsigned int>(blocks), kBlockSize, 0, stream>>>(in, sums, n);
    return cudaGetLastError();
}
