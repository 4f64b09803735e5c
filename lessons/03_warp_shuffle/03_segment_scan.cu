// Lesson 03, step 3 — an inclusive scan within each segment with __shfl_up_sync.
//
// Teaches: the prefix sum of 32 values in 5 shuffle rounds. __shfl_up_sync(mask, v, d) hands
// lane l the v of lane l - d; lanes l < d have no lane d below them and get their own v back,
// which they must not add. In round d = 1, 2, 4, 8, 16 every lane l >= d adds what lane l - d
// holds; after the last round lane l holds v(0) + ... + v(l). (Hillis-Steele, in registers.)
//
//   lane:         0    1    2    3    4    5   ...
//   input:        a    b    c    d    e    f
//   after d = 1:  a   a+b  b+c  c+d  d+e  e+f
//   after d = 2:  a   a+b  a..c a..d b..e c..f
//   after d = 4:  a   a+b  a..c a..d a..e a..f          ... and so on up to d = 16
//
// The job: out[i] = in[32 s] + ... + in[i], where s = i / 32 is i's segment.
//
// What to do:
//   1. warp_inclusive_scan: the 5 rounds.
//   2. in the kernel: scan each loaded segment and write the prefixes.
// Read "Step 3" in lessons/03_warp_shuffle/README.md first.
//
// Check:  ./cudalings check 03_warp_shuffle/03_segment_scan
// Stuck:  ./cudalings hint 03_warp_shuffle/03_segment_scan
//
// As given, this file compiles and runs but writes nothing, so every test fails.

#include "warp_shuffle.cuh"

constexpr unsigned int kBlockSize = 256;
constexpr unsigned int kWarpsPerBlock = kBlockSize / 32;
constexpr int kMaxRegisters = 32;  // a full SM of blocks fits (see step 1)
constexpr int kUnroll = 4;         // segments loaded per warp before any is used

// Lane l returns v(0) + v(1) + ... + v(l) over the lanes of the warp.
__device__ __forceinline__ float warp_inclusive_scan(float v, unsigned int lane) {
    // TODO(1 of 2, ~4 lines): for d = 1, 2, 4, 8, 16:
    //     const float below = __shfl_up_sync(kFullMask, v, d);   // every lane, every round
    //     if (lane >= d) v += below;
    //   The shuffle must stay OUTSIDE the `if`: lanes 0..d-1 still take part in it (the mask
    //   says all 32 do), they just do not use what they get. Delete the (void) line.
    (void)lane;
    return v;
}

__global__ void __maxnreg__(kMaxRegisters)
    segment_scan_kernel(const float* __restrict__ in, float* __restrict__ out, size_t n) {
    const unsigned int lane = threadIdx.x % 32;
    const size_t warp = (static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
    const size_t num_warps = static_cast<size_t>(gridDim.x) * kWarpsPerBlock;
    const size_t segments = (n + 31) / 32;

    for (size_t s = warp; s < segments; s += kUnroll * num_warps) {
        float x[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
            const size_t i = (s + u * num_warps) * 32 + lane;
            x[u] = i < n ? in[i] : 0.0f;  // lanes past n hold 0
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
            const size_t i = (s + u * num_warps) * 32 + lane;
            // TODO(2 of 2, ~2 lines): prefix = warp_inclusive_scan(x[u], lane) in every lane,
            //   then, if i < n, out[i] = prefix. Delete the (void) line when you are done.
            (void)i, (void)x[u], (void)out;
        }
    }
}

extern "C" cudaError_t segment_scan(const float* in, float* out, size_t n, cudaStream_t stream) {
    const size_t segments = (n + 31) / 32;
    unsigned int grid = 0;
    cudaError_t err =
        one_wave_grid(kBlockSize, (segments + kWarpsPerBlock - 1) / kWarpsPerBlock, &grid);
    if (err != cudaSuccess) return err;
    segment_scan_kernel<<<grid, kBlockSize, 0, stream>>>(in, out, n);
    return cudaGetLastError();
}
