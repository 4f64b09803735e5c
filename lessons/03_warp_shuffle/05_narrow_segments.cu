// Lesson 03, step 5 — narrower segments with `width`, and a broadcast with __shfl_sync.
//
// Teaches: the optional last argument of every shuffle, `width` (a power of two up to 32). It
// splits the warp into 32 / width independent groups of `width` lanes; inside the call, lane
// numbers count from the start of the lane's own group, and no value crosses a group border:
//   __shfl_down_sync(mask, v, d, width)  a lane with no lane d above it IN ITS GROUP keeps its v
//   __shfl_sync(mask, v, src, width)     each lane gets v from lane `src` OF ITS OWN GROUP
// So one warp handles 32 / width segments at once, each as if it were a small warp.
//
// The job: centre each segment of `width` elements (8 or 16) on zero,
//   out[i] = in[i] - (sum of i's segment) / m,   m = the segment's number of elements
// (width, or fewer for a partial last segment). Reduce each group with __shfl_down_sync and
// `width`, so the group's first lane holds the sum, then broadcast that sum to the whole group
// with __shfl_sync(..., 0, width).
//
// What to do:
//   1. group_sum_broadcast: the reduction and the broadcast.
//   2. in the kernel: m for this lane's segment, and the output.
// The width is a template parameter (kWidth): the launcher picks the instance. Read "Step 5"
// in lessons/03_warp_shuffle/README.md first.
//
// Check:  ./cudalings check 03_warp_shuffle/05_narrow_segments
// Stuck:  ./cudalings hint 03_warp_shuffle/05_narrow_segments
//
// As given, this file compiles and runs but writes nothing, so every test fails.

#include "warp_shuffle.cuh"

constexpr unsigned int kBlockSize = 256;
constexpr unsigned int kWarpsPerBlock = kBlockSize / 32;
constexpr int kMaxRegisters = 32;  // a full SM of blocks fits (see step 1)
constexpr int kUnroll = 4;         // 32-element chunks loaded per warp before any is used

// Every lane returns the sum of v over its group of kWidth lanes.
template <int kWidth>
__device__ __forceinline__ float group_sum_broadcast(float v) {
    // TODO(1 of 2, ~3 lines): for d = kWidth / 2, ..., 2, 1:
    //     v += __shfl_down_sync(kFullMask, v, d, kWidth);
    //   then return __shfl_sync(kFullMask, v, 0, kWidth): lane 0 of each group, not of the
    //   warp, because of the width.
    return v;
}

// A chunk is 32 consecutive elements, one per lane: 32 / kWidth segments (the last chunk may
// end inside a segment, or hold a partial one).
template <int kWidth>
__global__ void __maxnreg__(kMaxRegisters)
    segment_center_kernel(const float* __restrict__ in, float* __restrict__ out, size_t n) {
    const unsigned int lane = threadIdx.x % 32;
    const size_t warp = (static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
    const size_t num_warps = static_cast<size_t>(gridDim.x) * kWarpsPerBlock;
    const size_t chunks = (n + 31) / 32;
    // This lane's place in its group: its segment starts `group_lane` elements before it.
    const unsigned int group_lane = lane % kWidth;

    for (size_t c = warp; c < chunks; c += kUnroll * num_warps) {
        float x[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
            const size_t i = (c + u * num_warps) * 32 + lane;
            x[u] = i < n ? in[i] : 0.0f;  // 0 past n: adds nothing to a partial segment's sum
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
            const size_t i = (c + u * num_warps) * 32 + lane;
            // TODO(2 of 2, ~6 lines): sum = group_sum_broadcast<kWidth>(x[u]) in every lane;
            //   then, if i < n: the segment starts at i - group_lane, so it holds
            //   m = min(kWidth, n - (i - group_lane)) elements; write out[i] = x[u] - sum / m
            //   (m as a float). Delete the (void) line when you are done.
            (void)i, (void)x[u], (void)out, (void)group_lane;
        }
    }
}

template <int kWidth>
cudaError_t launch_center(const float* in, float* out, size_t n, cudaStream_t stream) {
    const size_t chunks = (n + 31) / 32;
    unsigned int grid = 0;
    cudaError_t err =
        one_wave_grid(kBlockSize, (chunks + kWarpsPerBlock - 1) / kWarpsPerBlock, &grid);
    if (err != cudaSuccess) return err;
    segment_center_kernel<kWidth><<<grid, kBlockSize, 0, stream>>>(in, out, n);
    return cudaGetLastError();
}

extern "C" cudaError_t segment_center(const float* in, float* out, size_t n, int width,
                                      cudaStream_t stream) {
    switch (width) {
        case 1:
            return launch_center<1>(in, out, n, stream);
        case 2:
            return launch_center<2>(in, out, n, stream);
        case 4:
            return launch_center<4>(in, out, n, stream);
        case 8:
            return launch_center<8>(in, out, n, stream);
        case 16:
            return launch_center<16>(in, out, n, stream);
        case 32:
            return launch_center<32>(in, out, n, stream);
        default:
            return cudaErrorInvalidValue;  // not a power of two from 1 to 32
    }
}
