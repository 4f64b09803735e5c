// Lesson 12, step 1 — softmax in three passes, one block per row (solution).
//
// Teaches: the max subtraction. exp(x) overflows float for x > 88.7, so exp(x) / Σ exp(x) is
// inf / inf = NaN for rows with large entries; subtracting the row's max m first changes
// nothing mathematically (the factor exp(-m) cancels) and keeps every exponent <= 0, so every
// term is in [0, 1] and the largest is exactly 1. Three passes over the row:
//   1. m = max of the row          (a block reduce with max, lesson 04 step 3)
//   2. s = Σ exp(x - m)            (a block reduce with +)
//   3. y = exp(x - m) / s
// A row of only -inf entries has m = -inf and x - m = -inf - (-inf) = NaN: the contract says
// its output is 0, so that row shifts by 0 instead and its sum, 0, gives the factor 0.
//
// Check:  ./cudalings check 12_row_ops/01_three_pass
// Stuck:  ./cudalings hint 12_row_ops/01_three_pass

#include <cmath>

#include "row_ops.cuh"

constexpr unsigned int kBlock = 256;

struct Max {
    __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct Sum {
    __device__ float operator()(float a, float b) const { return a + b; }
};

// The reduction of v over the block, returned to EVERY thread (lesson 04's block reduce, with a
// butterfly in the last warp so all lanes hold the result, then one broadcast through shared).
template <typename Op>
__device__ float block_all_reduce(float v, Op op) {
    constexpr unsigned int kWarps = kBlock / 32, kFullMask = 0xffffffffu;
    __shared__ float partial[kWarps];
    const unsigned int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    for (unsigned int m = 16; m > 0; m /= 2) v = op(v, __shfl_xor_sync(kFullMask, v, m));
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    v = partial[0];
    for (unsigned int w = 1; w < kWarps; ++w) v = op(v, partial[w]);
    __syncthreads();  // everyone has read partial[] before a next call overwrites it
    return v;
}

__global__ void __launch_bounds__(kBlock)
    softmax_three_pass_kernel(const float* __restrict__ x, float* __restrict__ y, size_t cols) {
    const float* row = x + blockIdx.x * cols;
    float* out = y + blockIdx.x * cols;

    float m = -INFINITY;  // the identity of max: threads with no element keep it
    for (size_t j = threadIdx.x; j < cols; j += kBlock) m = fmaxf(m, row[j]);
    m = block_all_reduce(m, Max());
    const float shift = m == -INFINITY ? 0.0f : m;  // an all -inf row: exp(-inf - 0) = 0

    float s = 0.0f;
    for (size_t j = threadIdx.x; j < cols; j += kBlock) s += expf(row[j] - shift);
    s = block_all_reduce(s, Sum());
    const float inv = s > 0.0f ? 1.0f / s : 0.0f;  // s >= 1 unless the row is all -inf

    for (size_t j = threadIdx.x; j < cols; j += kBlock) out[j] = expf(row[j] - shift) * inv;
}

extern "C" cudaError_t softmax_rows(const float* x, float* y, size_t rows, size_t cols,
                                    cudaStream_t stream) {
    softmax_three_pass_kernel<<<static_cast<unsigned int>(rows), kBlock, 0, stream>>>(x, y, cols);
    return cudaGetLastError();
}
