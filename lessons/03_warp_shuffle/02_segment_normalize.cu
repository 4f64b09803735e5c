// Lesson 03, step 2 — a butterfly all-reduce with __shfl_xor_sync.
//
// Teaches: giving every lane the total, not only lane 0. __shfl_xor_sync(mask, v, m) swaps
// values between lane l and lane l ^ m. Five rounds (m = 16, 8, 4, 2, 1) pair the lanes in a
// "butterfly", and after the last round every lane holds the sum of all 32, bit for bit the
// same in every lane: the same 5 shuffles as step 1's reduction, and no broadcast needed.
//
// The job: normalise each 32-element segment by its sum, out[i] = in[i] / (sum of i's segment),
// so each segment's outputs add up to 1. Lane l of a warp holds element l of a segment, and
// needs its segment's total to divide its own element. The inputs are positive.
//
// What to do:
//   1. warp_allsum: the 5-round butterfly.
//   2. in the kernel: every lane gets its segment's total, then writes its own element.
// The loop is given: each warp loads kUnroll segments (one float per lane) before it uses
// any of them. Read "Step 2" in lessons/03_warp_shuffle/README.md first.
//
// Check:  ./cudalings check 03_warp_shuffle/02_segment_normalize
// Stuck:  ./cudalings hint 03_warp_shuffle/02_segment_normalize
//
// As given, this file compiles and runs but writes nothing, so every test fails.

#include "warp_shuffle.cuh"

constexpr unsigned int kBlockSize = 256;
constexpr unsigned int kWarpsPerBlock = kBlockSize / 32;
constexpr int kMaxRegisters = 32;  // a full SM of blocks fits (see step 1)
constexpr int kUnroll = 4;         // segments loaded per warp before any is used

// Every lane returns the sum of v over all 32 lanes.
__device__ __forceinline__ float warp_allsum(float v) {
    // TODO(1 of 2, ~2 lines): for m = 16, 8, 4, 2, 1:  v += __shfl_xor_sync(kFullMask, v, m).
    //   Draw it for 4 lanes if it is not clear why every lane ends with the whole sum.
    return v;
}

__global__ void __maxnreg__(kMaxRegisters)
    segment_normalize_kernel(const float* __restrict__ in, float* __restrict__ out, size_t n) {
    const unsigned int lane = threadIdx.x % 32;
    const size_t warp = (static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
    const size_t num_warps = static_cast<size_t>(gridDim.x) * kWarpsPerBlock;
    const size_t segments = (n + 31) / 32;

    // Grid-stride over segments, kUnroll per warp per iteration; the loop test depends on the
    // warp alone, so all 32 lanes run every iteration together.
    for (size_t s = warp; s < segments; s += kUnroll * num_warps) {
        float x[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
            // Lanes past n (a partial last segment, or segments past the end in the last
            // iteration) hold 0: they add nothing to a total.
            const size_t i = (s + u * num_warps) * 32 + lane;
            x[u] = i < n ? in[i] : 0.0f;
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
            const size_t i = (s + u * num_warps) * 32 + lane;
            // TODO(2 of 2, ~2 lines): total = warp_allsum(x[u]), called by EVERY lane (also
            //   those with i >= n: they bring 0), then, only if i < n, out[i] = x[u] / total.
            //   Delete the (void) line when you are done.
            (void)i, (void)x[u], (void)out;
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
