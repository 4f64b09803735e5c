// Lesson 03, step 2 — a butterfly all-reduce with __shfl_xor_sync (solution).
//
// Teaches: when every lane needs the total, not only lane 0. __shfl_xor_sync(mask, v, m) swaps
// values between lane l and lane l ^ m. Five rounds (m = 16, 8, 4, 2, 1) pair every lane with
// a partner in a "butterfly" pattern, and after the last round every lane holds the sum of all
// 32: the same 5 shuffles as the reduction of step 1, with no extra broadcast.
//
// The job: normalise each 32-element segment by its sum, out[i] = in[i] / (sum of i's segment),
// so that each segment's outputs add up to 1. Lane l of a warp owns element l of a segment;
// each lane needs its segment's total to divide its own element.
//
// Why the butterfly gives the same bits in every lane: in each round lanes l and l ^ m add the
// same two numbers (a + b in one, b + a in the other), and float addition is commutative, so
// the partial sums stay identical pairwise and the final totals are bit-for-bit equal.
//
// Check:  ./cudalings check 03_warp_shuffle/02_segment_normalize
// Stuck:  ./cudalings hint 03_warp_shuffle/02_segment_normalize

#include "warp_shuffle.cuh"

constexpr unsigned int kBlockSize = 256;
constexpr unsigned int kWarpsPerBlock = kBlockSize / 32;
// At most 32 registers per thread, so a full SM of blocks fits (see step 1).
constexpr int kMaxRegisters = 32;
// Segments each warp loads before it reduces any: kUnroll independent loads per thread.
constexpr int kUnroll = 4;

// Every lane returns the sum of v over all 32 lanes.
__device__ __forceinline__ float warp_allsum(float v) {
#pragma unroll
    for (int m = 16; m > 0; m /= 2) v += __shfl_xor_sync(kFullMask, v, m);
    return v;
}

__global__ void __maxnreg__(kMaxRegisters)
    segment_normalize_kernel(const float* __restrict__ in, float* __restrict__ out, size_t n) {
    const unsigned int lane = threadIdx.x % 32;
    const size_t warp = (static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
    const size_t num_warps = static_cast<size_t>(gridDim.x) * kWarpsPerBlock;
    const size_t segments = (n + 31) / 32;

    // Grid-stride over segments, kUnroll per warp per iteration. The loop test depends on the
    // warp alone, so all 32 lanes always run the shuffles together.
    for (size_t s = warp; s < segments; s += kUnroll * num_warps) {
        float x[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
            // Lanes past n (in the partial last segment, or in segments past the end during
            // the last iteration) bring 0: they add nothing to a total.
            const size_t i = (s + u * num_warps) * 32 + lane;
            x[u] = i < n ? in[i] : 0.0f;
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
            // Every lane runs the butterfly, including lanes that hold no element.
            const float total = warp_allsum(x[u]);
            const size_t i = (s + u * num_warps) * 32 + lane;
            if (i < n) out[i] = x[u] / total;
        }
    }
}

extern "C" cudaError_t segment_normalize(const float* in, float* out, size_t n,
                                         cudaStream_t stream) {
    const size_t segments = (n + 31) / 32;
    unsigned int grid = 0;
    cudaError_t err =
        one_wave_grid(kBlockSize, (segments + kWarpsPerBlock - 1) / kWarpsPerBlock, &grid);
    if (err != cudaSuccess) return err;
    segment_normalize_kernel<<<grid, kBlockSize, 0, stream>>>(in, out, n);
    return cudaGetLastError();
}
