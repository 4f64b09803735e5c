// Lesson 12, step 2 — online softmax: the max and the sum in one pass (solution).
//
// Teaches: the running max with a rescaled sum. Step 1 reads the row three times; the first two
// passes can be one. Keep (m, s) = (the max so far, Σ exp(x - m) so far). A new element x:
//     m' = max(m, x);   s' = s * exp(m - m') + exp(x - m')
// the old sum is rescaled to the new max before the new term joins it. Two partial results
// (m1, s1) and (m2, s2), from two threads, merge the same way:
//     m = max(m1, m2);  s = s1 * exp(m1 - m) + s2 * exp(m2 - m)
// so each thread walks its part of the row once, then a block reduce merges the pairs, and a
// second pass writes y = exp(x - m) / s: two reads of the row instead of three.
//
// -inf needs care: while the max so far is still -inf (a row that starts with masked entries),
// m - m' and x - m' are -inf - (-inf) = NaN. A pair whose max is -inf holds no mass: its sum is
// 0 whatever it was, and it is skipped, never multiplied.
//
// Check:  ./cudalings check 12_row_ops/02_online
// Stuck:  ./cudalings hint 12_row_ops/02_online

#include <cmath>

#include "row_ops.cuh"

constexpr unsigned int kBlock = 256;
constexpr unsigned int kWarps = kBlock / 32;
constexpr unsigned int kFullMask = 0xffffffffu;

struct MaxSum {
    float m, s;  // the max so far, and Σ exp(x - m) over the elements seen
};

// (m1, s1) and (m2, s2) as one pair. A side whose max is -inf has seen only -inf (or nothing):
// it adds nothing, and exp(-inf - (-inf)) must never be evaluated.
__device__ __forceinline__ MaxSum merge(MaxSum a, MaxSum b) {
    const float m = fmaxf(a.m, b.m);
    if (m == -INFINITY) return {m, 0.0f};
    return {m, a.s * expf(a.m - m) + b.s * expf(b.m - m)};  // exp(-inf - m) = 0: fine
}

__device__ MaxSum block_merge(MaxSum v) {
    __shared__ MaxSum partial[kWarps];
    const unsigned int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    for (unsigned int o = 16; o > 0; o /= 2)
        v = merge(v, {__shfl_xor_sync(kFullMask, v.m, o), __shfl_xor_sync(kFullMask, v.s, o)});
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    v = partial[0];
    for (unsigned int w = 1; w < kWarps; ++w) v = merge(v, partial[w]);
    return v;  // one call per kernel: no second barrier needed
}

__global__ void __launch_bounds__(kBlock)
    softmax_online_kernel(const float* __restrict__ x, float* __restrict__ y, size_t cols) {
    const float* row = x + blockIdx.x * cols;
    float* out = y + blockIdx.x * cols;

    MaxSum v{-INFINITY, 0.0f};
    for (size_t j = threadIdx.x; j < cols; j += kBlock) v = merge(v, {row[j], 1.0f});
    v = block_merge(v);

    const float shift = v.m == -INFINITY ? 0.0f : v.m;
    const float inv = v.s > 0.0f ? 1.0f / v.s : 0.0f;
    for (size_t j = threadIdx.x; j < cols; j += kBlock) out[j] = expf(row[j] - shift) * inv;
}

extern "C" cudaError_t softmax_rows(const float* x, float* y, size_t rows, size_t cols,
                                    cudaStream_t stream) {
    softmax_online_kernel<<<static_cast<unsigned int>(rows), kBlock, 0, stream>>>(x, y, cols);
    return cudaGetLastError();
}
