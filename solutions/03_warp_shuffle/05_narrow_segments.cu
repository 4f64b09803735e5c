// Lesson 03, step 5 — narrower segments with `width`, and a broadcast with __shfl_sync
// (solution).
//
// Teaches: the optional last argument of every shuffle, `width` (a power of two up to 32). It
// splits the warp into 32 / width independent groups of `width` lanes; inside a call, lane
// numbers are relative to the lane's own group, and no value crosses a group boundary:
//   __shfl_down_sync(mask, v, d, width)  a lane whose group has no lane d above it keeps its v
//   __shfl_sync(mask, v, src, width)     every lane gets v from lane `src` OF ITS OWN GROUP
// So one warp handles 32 / width segments at once, each as if it were a tiny warp.
//
// The job: centre each segment of `width` elements (8 or 16) on zero,
//   out[i] = in[i] - (sum of the segment) / m,   m = its number of elements.
// A reduction with __shfl_down_sync(..., width) leaves each segment's sum in its group's first
// lane; __shfl_sync(..., 0, width) then broadcasts it to the whole group. (A butterfly, as in
// step 2, would give every lane the sum directly; reduce-then-broadcast is the pattern to know
// for when one lane does something the others need the result of, e.g. an atomicAdd.)
//
// Check:  ./cudalings check 03_warp_shuffle/05_narrow_segments
// Stuck:  ./cudalings hint 03_warp_shuffle/05_narrow_segments

#include "warp_shuffle.cuh"

constexpr unsigned int kBlockSize = 256;
constexpr unsigned int kWarpsPerBlock = kBlockSize / 32;
constexpr int kMaxRegisters = 32;  // a full SM of blocks fits (see step 1)
constexpr int kUnroll = 4;         // 32-element chunks loaded per warp before any is reduced

// Every lane returns the sum of v over its group of kWidth lanes.
template <int kWidth>
__device__ __forceinline__ float group_sum_broadcast(float v) {
    // Reduce: the group's first lane ends with the group's sum. The width keeps each group's
    // lanes from reading a neighbouring group (a lane with no lane d above it in its group gets
    // its own v back; those lanes' results are not used).
#pragma unroll
    for (int d = kWidth / 2; d > 0; d /= 2) v += __shfl_down_sync(kFullMask, v, d, kWidth);
    // Broadcast: lane 0 *of each group*. Without `width`, source lane 0 would be lane 0 of the
    // warp, and every group would get the first group's sum.
    return __shfl_sync(kFullMask, v, 0, kWidth);
}

// A chunk is 32 consecutive elements, one per lane: 32 / kWidth whole segments, since kWidth
// divides 32 (the last chunk may end inside a segment, or hold a partial one). The width is a
// template parameter so that the shuffle loop unrolls and "/ kWidth" costs nothing; the
// launcher picks the instance.
template <int kWidth>
__global__ void __maxnreg__(kMaxRegisters)
    segment_center_kernel(const float* __restrict__ in, float* __restrict__ out, size_t n) {
    const unsigned int lane = threadIdx.x % 32;
    const size_t warp = (static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
    const size_t num_warps = static_cast<size_t>(gridDim.x) * kWarpsPerBlock;
    const size_t chunks = (n + 31) / 32;
    // This lane's position in its group: the first element of its segment is `group_lane`
    // elements before its own.
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
            const float sum = group_sum_broadcast<kWidth>(x[u]);
            const size_t i = (c + u * num_warps) * 32 + lane;
            if (i < n) {
                // m = kWidth, except for a partial last segment: the elements from its first
                // one up to n.
                const size_t left = n - (i - group_lane);
                const float m = static_cast<float>(left < size_t{kWidth} ? left : size_t{kWidth});
                out[i] = x[u] - sum / m;
            }
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
            return cudaErrorInvalidValue;  // not a power of two up to 32
    }
}
