// Lesson 03, step 3 — an inclusive scan within each segment with __shfl_up_sync (solution).
//
// Teaches: the scan (prefix sum) of 32 values in 5 shuffle rounds. __shfl_up_sync(mask, v, d)
// hands lane l the v of lane l - d (lanes below d get their own v back, and must not add it).
// In round d = 1, 2, 4, 8, 16 every lane l >= d adds the value of lane l - d: after round d,
// lane l holds the sum of the min(l + 1, 2d) elements ending at l, so after d = 16 it holds
// the sum of elements 0..l. This is the Hillis-Steele scan, with registers instead of a
// shared-memory array and no barriers.
//
//   lane:         0    1    2    3    4    5    6    7   ...
//   input:        a    b    c    d    e    f    g    h
//   after d = 1:  a   a+b  b+c  c+d  d+e  e+f  f+g  g+h
//   after d = 2:  a   a+b  a..c a..d b..e c..f d..g e..h
//   after d = 4:  a   a+b  a..c a..d a..e a..f a..g a..h     (and so on up to d = 16)
//
// The job: out[i] = in[32 s] + ... + in[i] for the segment s that holds i.
//
// Check:  ./cudalings check 03_warp_shuffle/03_segment_scan
// Stuck:  ./cudalings hint 03_warp_shuffle/03_segment_scan

#include "warp_shuffle.cuh"

constexpr unsigned int kBlockSize = 256;
constexpr unsigned int kWarpsPerBlock = kBlockSize / 32;
constexpr int kMaxRegisters = 32;  // a full SM of blocks fits (see step 1)
constexpr int kUnroll = 4;         // segments loaded per warp before any is scanned

// Lane l returns v(0) + v(1) + ... + v(l) over the lanes of the warp.
__device__ __forceinline__ float warp_inclusive_scan(float v, unsigned int lane) {
#pragma unroll
    for (int d = 1; d < 32; d *= 2) {
        // Every lane executes the shuffle (the mask says all 32 will); only lanes that have a
        // lane d below them add what they got. Putting the shuffle itself inside the `if`
        // would leave lanes 0..d-1 out of a shuffle whose mask names them: undefined.
        const float below = __shfl_up_sync(kFullMask, v, d);
        if (lane >= static_cast<unsigned int>(d)) v += below;
    }
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
            // 0 past n: in a partial segment the lanes past the end sit *above* every real
            // element, so they could not change a real element's prefix anyway; but 0 keeps
            // them harmless whatever the algorithm.
            const size_t i = (s + u * num_warps) * 32 + lane;
            x[u] = i < n ? in[i] : 0.0f;
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
            const float prefix = warp_inclusive_scan(x[u], lane);
            const size_t i = (s + u * num_warps) * 32 + lane;
            if (i < n) out[i] = prefix;
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
