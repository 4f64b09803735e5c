// Lesson 12, step 6 — residual add fused with RMSNorm.
//
// Teaches: fusion. In a transformer block the residual stream is updated, s = x + residual,
// and normalised right away: y = s / sqrt(mean(s²) + eps) * weight. As two kernels that is an
// add (read x and r, write s: 12 bytes per element) and an RMSNorm (read s, write y: 8 bytes),
// 20 bytes per element. Fused, each element is read once and written once per output: read x
// and r, write s and y, 16 bytes, the least any implementation can move. The sum stays in
// registers between the two uses; mean(s²) is a plain sum reduce (no max, no mean to subtract:
// RMSNorm has no cancellation to fear, which is why models adopted it).
//
// Shapes as in step 5: a warp per row up to 1024 floats, a block of 256 up to 8192, a block of
// 1024 up to 32768 (multiples of 4); any other width writes s, then reads it back for y.
//
// Check:  ./cudalings check 12_row_ops/06_residual_rmsnorm
// Stuck:  ./cudalings hint 12_row_ops/06_residual_rmsnorm
//
// Read "Step 6" in lessons/12_row_ops/README.md first. As given, this file compiles and runs but writes nothing, so every test fails.

#include <cmath>

#include "row_ops.cuh"

constexpr unsigned int kFullMask = 0xffffffffu;

// Σ v over the kThreads threads of a row, in every thread.
template <unsigned int kThreads>
__device__ __forceinline__ float row_sum(float v) {
    for (unsigned int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(kFullMask, v, o);
    if constexpr (kThreads > 32) {
        __shared__ float partial[kThreads / 32];
        const unsigned int lane = threadIdx.x % 32;
        if (lane == 0) partial[threadIdx.x / 32] = v;
        __syncthreads();
        v = lane < kThreads / 32 ? partial[lane] : 0.0f;
        for (unsigned int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(kFullMask, v, o);
    }
    return v;
}

__host__ __device__ constexpr unsigned int block_of(unsigned int threads_per_row) {
    return threads_per_row < 256 ? 256 : threads_per_row;
}

template <unsigned int kThreads, int kPer>
__global__ void __launch_bounds__(block_of(kThreads))
    rmsnorm_kernel(const float* __restrict__ x, const float* __restrict__ r,
                   const float* __restrict__ weight, float* __restrict__ y,
                   float* __restrict__ sum, size_t rows, size_t cols, float eps) {
    const unsigned int t = threadIdx.x % kThreads;
    const size_t row = static_cast<size_t>(blockIdx.x) * (block_of(kThreads) / kThreads) +
                       threadIdx.x / kThreads;
    if (row >= rows) return;  // only with a warp per row (no barrier in that kernel)
    const size_t base = row * cols;

    float4 s[kPer];
    // TODO(1 of 2, ~14 lines): for each k, column c = (k * kThreads + t) * 4: s[k] = 0, and when
    //   c < cols, s[k] = x + r at base + c (two __ldcs float4 loads, added component-wise).
    //   Then, for each k with c < cols, __stcs s[k] to sum + base + c (the new residual), and
    //   add s[k].x² + s[k].y² + s[k].z² + s[k].w² to ss; then ss = row_sum<kThreads>(ss).
    float ss = 0.0f;

    // TODO(2 of 2, ~9 lines): rstd = rsqrtf(ss / cols + eps); for each k with c < cols:
    //   weight at c as a float4 (__ldg), and __stcs s[k] * rstd * w to y + base + c.
    //   Delete the (void) line when you are done.
    (void)x, (void)r, (void)weight, (void)y, (void)sum, (void)base, (void)t, (void)s, (void)ss,
        (void)eps;
}

// Any width: write s while summing s², then read s back (each thread its own elements).
template <unsigned int kThreads>
__global__ void __launch_bounds__(block_of(kThreads))
    rmsnorm_loop_kernel(const float* __restrict__ x, const float* __restrict__ r,
                        const float* __restrict__ weight, float* __restrict__ y, float* sum,
                        size_t rows, size_t cols, float eps) {
    const unsigned int t = threadIdx.x % kThreads;
    const size_t row = static_cast<size_t>(blockIdx.x) * (block_of(kThreads) / kThreads) +
                       threadIdx.x / kThreads;
    if (row >= rows) return;
    const size_t base = row * cols;
    float ss = 0.0f;
    for (size_t c = t; c < cols; c += kThreads) {
        const float s = x[base + c] + r[base + c];
        sum[base + c] = s;
        ss += s * s;
    }
    ss = row_sum<kThreads>(ss);
    const float rstd = rsqrtf(ss / static_cast<float>(cols) + eps);
    for (size_t c = t; c < cols; c += kThreads) y[base + c] = sum[base + c] * rstd * weight[c];
}

template <unsigned int kThreads, int kPer>
void launch(const float* x, const float* r, const float* weight, float* y, float* sum,
            size_t rows, size_t cols, float eps, cudaStream_t stream) {
    const size_t per_block = block_of(kThreads) / kThreads;
    const unsigned int grid = static_cast<unsigned int>((rows + per_block - 1) / per_block);
    if constexpr (kPer == 0)
        rmsnorm_loop_kernel<kThreads>
            <<<grid, block_of(kThreads), 0, stream>>>(x, r, weight, y, sum, rows, cols, eps);
    else
        rmsnorm_kernel<kThreads, kPer>
            <<<grid, block_of(kThreads), 0, stream>>>(x, r, weight, y, sum, rows, cols, eps);
}

extern "C" cudaError_t residual_rmsnorm_rows(const float* x, const float* residual,
                                             const float* weight, float* y, float* sum,
                                             size_t rows, size_t cols, float eps,
                                             cudaStream_t stream) {
    auto go = [&](auto f) { f(x, residual, weight, y, sum, rows, cols, eps, stream); };
    if (cols % 4 != 0 || cols > 32768) {
        if (cols <= 1024) go(launch<32, 0>);
        else go(launch<256, 0>);
    } else if (cols <= 1024) {
        const size_t per = (cols + 127) / 128;
        if (per <= 1) go(launch<32, 1>);
        else if (per <= 2) go(launch<32, 2>);
        else if (per <= 4) go(launch<32, 4>);
        else go(launch<32, 8>);
    } else if (cols <= 8192) {
        const size_t per = (cols + 1023) / 1024;
        if (per <= 2) go(launch<256, 2>);
        else if (per <= 4) go(launch<256, 4>);
        else go(launch<256, 8>);
    } else {
        if (cols <= 16384) go(launch<1024, 4>);
        else go(launch<1024, 8>);
    }
    return cudaGetLastError();
}
