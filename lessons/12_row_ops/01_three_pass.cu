// Lesson 12, step 1 — softmax in three passes, one block per row.
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
//
// Read "Step 1" in lessons/12_row_ops/README.md first. As given, this file compiles and runs but writes nothing, so every test fails.

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

    // TODO(1 of 3, ~4 lines): pass 1. m = the max of this thread's elements row[j], j =
    //   threadIdx.x, threadIdx.x + kBlock, ... (start from -INFINITY, the identity of max), then
    //   m = block_all_reduce(m, Max()). The shift: m, or 0 when m is -INFINITY (an all -inf
    //   row, where -inf - (-inf) would be NaN).

    // TODO(2 of 3, ~4 lines): pass 2. s = the sum of expf(row[j] - shift) over the thread's
    //   elements, then block_all_reduce(s, Sum()); inv = 1 / s, or 0 when s is 0.

    // TODO(3 of 3, ~1 line): pass 3. out[j] = expf(row[j] - shift) * inv.
    //   Delete the (void) line when you are done.
    (void)&row, (void)&out, (void)cols;
}

extern "C" cudaError_t softmax_rows(const float* x, float* y, size_t rows, size_t cols,
                                    cudaStream_t stream) {
    softmax_three_pass_kernel<<<static_cast<unsigned int>(rows), kBlock, 0, stream>>>(x, y, cols);
    return cudaGetLastError();
}
