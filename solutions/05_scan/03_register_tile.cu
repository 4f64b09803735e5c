// Lesson 05, step 3 — a register tile: thread, warp, block (solution).
//
// Teaches: the levels of lesson 04 again, now for a scan. 256 threads scan a tile of 1024
// elements, four per thread, with almost everything in registers:
//
//   thread: one float4 load, then a serial scan of its 4 values (3 additions);
//   warp:   lesson 03's shuffle scan of the 32 thread totals (5 rounds, no shared memory);
//   block:  lane 31 of each warp writes the warp's total to shared memory; after a barrier,
//           warp 0 scans those 8 totals (one more shuffle scan); after a second barrier, each
//           thread adds the totals of the warps before it and of the lanes before it.
//
//   thread t holds x[4t .. 4t+3]:   serial scan ->  p0 = x0, p1 = x0+x1, p2, p3 (its total)
//   warp w scans the totals p3:     lane l gets the sum of the totals of lanes 0..l
//   block:                          warp_prefix[w] = the sum of the totals of warps 0..w-1
//   final value of element 4t+k:    warp_prefix[w] + (lanes 0..l-1 of warp w) + p_k
//
// Work: about 1.3 additions per element. Depth: 3 + 5 + 5 steps and two barriers.
//
// This step solves the same problem as steps 1 and 2 (every tile on its own) and is as fast as
// a copy. The rest of the lesson is the price of carrying each tile's total into the next.
//
// Check:  ./cudalings check 05_scan/03_register_tile
// Stuck:  ./cudalings hint 05_scan/03_register_tile

#include "scan.cuh"

constexpr unsigned int kItemsPerThread = 4;                   // one float4
constexpr unsigned int kBlockSize = kTile / kItemsPerThread;  // 256 threads
constexpr unsigned int kWarps = kBlockSize / 32;              // 8 warps
constexpr unsigned int kFullMask = 0xffffffffu;
static_assert(kWarps <= 32, "warp 0 scans one warp total per lane");

// Lesson 03, step 3: lane l returns v(0) + v(1) + ... + v(l) over the lanes of the warp.
__device__ __forceinline__ float warp_inclusive_scan(float v, unsigned int lane) {
    for (unsigned int d = 1; d < 32; d *= 2) {
        const float below = __shfl_up_sync(kFullMask, v, d);
        if (lane >= d) v += below;
    }
    return v;
}

__global__ void __launch_bounds__(kBlockSize)
    register_tile_kernel(const float* __restrict__ in, float* __restrict__ out, size_t n) {
    __shared__ float warp_totals[kWarps];
    const unsigned int lane = threadIdx.x % 32;
    const unsigned int warp = threadIdx.x / 32;
    const size_t tile_begin = static_cast<size_t>(blockIdx.x) * kTile;
    const size_t first = tile_begin + kItemsPerThread * threadIdx.x;  // this thread's 4 elements
    const bool full_tile = tile_begin + kTile <= n;

    // A full tile starts at a multiple of 1024 floats, so each thread's pack is 16-byte aligned.
    // Only the last tile can be partial: its missing elements load as 0.
    float4 x;
    if (full_tile) {
        x = reinterpret_cast<const float4*>(in)[first / 4];
    } else {
        x.x = first + 0 < n ? in[first + 0] : 0.0f;
        x.y = first + 1 < n ? in[first + 1] : 0.0f;
        x.z = first + 2 < n ? in[first + 2] : 0.0f;
        x.w = first + 3 < n ? in[first + 3] : 0.0f;
    }

    // Thread: a serial scan of its own four values. x.w is now the thread's total.
    x.y += x.x;
    x.z += x.y;
    x.w += x.z;

    // Warp: the scan of the 32 thread totals. `below` is the sum of the totals of lanes 0..l-1
    // (the exclusive prefix, taken from the lane below rather than computed by a subtraction,
    // which would round).
    const float inclusive = warp_inclusive_scan(x.w, lane);
    float below = __shfl_up_sync(kFullMask, inclusive, 1);
    if (lane == 0) below = 0.0f;

    // Block: warp 0 turns the 8 warp totals into their inclusive prefixes, in place.
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
}

extern "C" cudaError_t tile_scan(const float* in, float* out, size_t n, cudaStream_t stream) {
    const size_t tiles = tile_count(n);
    register_tile_kernel<<<static_cast<unsigned int>(tiles), kBlockSize, 0, stream>>>(in, out, n);
    return cudaGetLastError();
}
