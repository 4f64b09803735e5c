// Lesson 12, step 5 — LayerNorm with Welford's mean and variance (solution).
//
// Teaches: a variance in one pass without cancellation, and merging partial statistics. The
// textbook one-pass formula σ² = E[x²] - E[x]² subtracts two numbers of size μ² to get one of
// size σ²: with μ = 4096 and σ ≈ 0.58 both terms are about 1.7·10^7, where floats are 1 or 2
// apart, so the difference is noise, often negative (then sqrt gives NaN). Welford's update
// keeps the mean and M2 = Σ (x - mean)² instead, which never grow with μ:
//     n += 1;  d = x - mean;  mean += d / n;  M2 += d * (x - mean)
// Two partial results (n_a, mean_a, M2_a) and (n_b, mean_b, M2_b), from two threads, merge
// exactly (Chan et al.):
//     n = n_a + n_b;  d = mean_b - mean_a;  mean = mean_a + d * n_b / n;
//     M2 = M2_a + M2_b + d² * n_a * n_b / n
// so each thread runs Welford over the elements it holds (each float4 as two pairs, merged),
// and the merge is the operator of a warp (or block) reduce, as max and + were in steps 3 and
// 4. Then σ² = M2 / cols and y = (x - mean) * rsqrt(σ² + eps) * gamma + beta, from registers.
//
// The divisions cost more than the memory here if they are real: d / n and n_b / n are about
// ten instructions each, several per element. When the row fills every slot (kFull), every
// count is known at compile time (1 and 2 in a pair, 4 per float4, then doubling through the
// butterfly: row_merge does not shuffle n then), and the compiler turns each division into a
// multiplication by a constant.
//
// Shapes, by width (multiples of 4): up to 1024 a warp per row (step 3's layout), up to 8192
// a block of 256 threads per row, up to 32768 a block of 1024 (step 4's); any other width takes
// a loop that reads the row twice (a Welford pass, then the write).
//
// Check:  ./cudalings check 12_row_ops/05_layernorm_welford
// Stuck:  ./cudalings hint 12_row_ops/05_layernorm_welford

#include <cmath>

#include "row_ops.cuh"

constexpr unsigned int kFullMask = 0xffffffffu;
// (bench/row_ops/sweep.sh compiles this file with other values of these knobs.)
#ifndef ROW_OPS_SAME_COUNT  // 1: rows that fill every slot take the constant-count kernel
#define ROW_OPS_SAME_COUNT 1
#endif
#ifndef ROW_OPS_WIDE_THREADS  // rows of 16385 to 32768 floats: 1024 threads, 8 float4 each
#define ROW_OPS_WIDE_THREADS 1024
#endif
constexpr unsigned int kWideThreads = ROW_OPS_WIDE_THREADS;
#ifndef ROW_OPS_PERSISTENT  // 1: rows of 32768 floats take one block per SM, walking rows
#define ROW_OPS_PERSISTENT 0
#endif
constexpr bool kPersistent = ROW_OPS_PERSISTENT != 0;

struct Welford {
    float n, mean, m2;  // count, mean, Σ (x - mean)²
};

__device__ __forceinline__ void welford_add(Welford& w, float x) {
    w.n += 1.0f;
    const float d = x - w.mean;
    w.mean += d / w.n;
    w.m2 += d * (x - w.mean);  // d times the distance to the NEW mean: exact in exact arithmetic
}

__device__ __forceinline__ Welford welford_merge(Welford a, Welford b) {
    const float n = a.n + b.n;
    // fb = 0 for two empty partials (lanes past a short row). A select, not an early return:
    // when both counts are constants the compiler then folds fb and n into constants too.
    const float d = b.mean - a.mean, fb = n > 0.0f ? b.n / n : 0.0f;
    return {n, a.mean + d * fb, a.m2 + b.m2 + d * d * a.n * fb};
}

// The merge of every thread's partial over the kThreads threads of a row, in every thread.
// kSameCount: every thread holds the same count (the row fills every slot), so the partner's n
// is this thread's n and is not shuffled: n stays a compile-time constant, and every d / n and
// n_b / n in the Welford code above is folded into a multiplication by a constant.
template <unsigned int kThreads, bool kSameCount>
__device__ __forceinline__ Welford row_merge(Welford w) {
#pragma unroll
    for (unsigned int o = 16; o > 0; o /= 2)
        w = welford_merge(w, {kSameCount ? w.n : __shfl_xor_sync(kFullMask, w.n, o),
                              __shfl_xor_sync(kFullMask, w.mean, o),
                              __shfl_xor_sync(kFullMask, w.m2, o)});
    if constexpr (kThreads > 32) {  // one row per block: the warps' results through shared
        constexpr unsigned int kWarps = kThreads / 32;
        __shared__ Welford partial[kWarps];
        const float n = w.n;
        if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = w;
        __syncthreads();
        w = partial[threadIdx.x % kWarps];  // each group of kWarps lanes merges all of them
        if constexpr (kSameCount) w.n = n;
#pragma unroll
        for (unsigned int o = kWarps / 2; o > 0; o /= 2)
            w = welford_merge(w, {kSameCount ? w.n : __shfl_xor_sync(kFullMask, w.n, o),
                                  __shfl_xor_sync(kFullMask, w.mean, o),
                                  __shfl_xor_sync(kFullMask, w.m2, o)});
    }
    return w;
}

// The partial of four elements: two pairs by Welford's update, merged. Every count in it is a
// constant (1, 2, then 2 + 2), so no division is left after compilation.
__device__ __forceinline__ Welford welford_of(float4 v) {
    Welford p{0.0f, 0.0f, 0.0f}, q{0.0f, 0.0f, 0.0f};
    welford_add(p, v.x);
    welford_add(p, v.y);
    welford_add(q, v.z);
    welford_add(q, v.w);
    return welford_merge(p, q);
}

__host__ __device__ constexpr unsigned int block_of(unsigned int threads_per_row) {
    return threads_per_row < 256 ? 256 : threads_per_row;
}

// The row in registers: kThreads threads per row, kPer float4 per thread. cols % 4 == 0.
// kFull: cols == kThreads * kPer * 4, every slot holds 4 elements of the row.
// One row, `in` and `out` its first elements; t is this thread's place among the row's threads.
template <unsigned int kThreads, int kPer, bool kFull>
__device__ __forceinline__ void layernorm_row(const float* __restrict__ in,
                                              const float* __restrict__ gamma,
                                              const float* __restrict__ beta,
                                              float* __restrict__ out, size_t cols, float eps) {
    const unsigned int t = threadIdx.x % kThreads;

    float4 v[kPer];
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
        const size_t c = (static_cast<size_t>(k) * kThreads + t) * 4;
        v[k] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        if (kFull || c < cols) v[k] = __ldcs(reinterpret_cast<const float4*>(in + c));
    }
    Welford w{0.0f, 0.0f, 0.0f};
#pragma unroll
    for (int k = 0; k < kPer; ++k)
        if (kFull || (static_cast<size_t>(k) * kThreads + t) * 4 < cols)
            w = welford_merge(w, welford_of(v[k]));
    w = row_merge<kThreads, kFull>(w);
    const float mean = w.mean, rstd = rsqrtf(w.m2 / static_cast<float>(cols) + eps);

#pragma unroll
    for (int k = 0; k < kPer; ++k) {
        const size_t c = (static_cast<size_t>(k) * kThreads + t) * 4;
        if (c >= cols) continue;
        const float4 g = __ldg(reinterpret_cast<const float4*>(gamma + c));  // cached: all rows
        const float4 b = __ldg(reinterpret_cast<const float4*>(beta + c));
        __stcs(reinterpret_cast<float4*>(out + c),
               make_float4((v[k].x - mean) * rstd * g.x + b.x, (v[k].y - mean) * rstd * g.y + b.y,
                           (v[k].z - mean) * rstd * g.z + b.z, (v[k].w - mean) * rstd * g.w + b.w));
    }
}

// block_of(kThreads) / kThreads rows at a time per block, then (when the grid is smaller than
// the rows: ROW_OPS_PERSISTENT) the block's next rows. A warp past the last row leaves the loop
// whole: a warp-per-row kernel has no barrier.
template <unsigned int kThreads, int kPer, bool kFull>
__global__ void __launch_bounds__(block_of(kThreads))
    layernorm_kernel(const float* __restrict__ x, const float* __restrict__ gamma,
                     const float* __restrict__ beta, float* __restrict__ y, size_t rows,
                     size_t cols, float eps) {
    constexpr unsigned int kRows = block_of(kThreads) / kThreads;
    // dev: not covered (a second row only with ROW_OPS_PERSISTENT=1)
    for (size_t row = static_cast<size_t>(blockIdx.x) * kRows + threadIdx.x / kThreads;
         row < rows; row += static_cast<size_t>(gridDim.x) * kRows) {
        layernorm_row<kThreads, kPer, kFull>(x + row * cols, gamma, beta, y + row * cols, cols,
                                             eps);
        if (kThreads > 32 && kPersistent) __syncthreads();  // row_merge's partials, reused next
    }
}

// Any width: a Welford pass over the row, then a second read for the write.
template <unsigned int kThreads>
__global__ void __launch_bounds__(block_of(kThreads))
    layernorm_loop_kernel(const float* __restrict__ x, const float* __restrict__ gamma,
                          const float* __restrict__ beta, float* __restrict__ y, size_t rows,
                          size_t cols, float eps) {
    const unsigned int t = threadIdx.x % kThreads;
    const size_t row = static_cast<size_t>(blockIdx.x) * (block_of(kThreads) / kThreads) +
                       threadIdx.x / kThreads;
    if (row >= rows) return;
    const float* in = x + row * cols;
    float* out = y + row * cols;
    Welford w{0.0f, 0.0f, 0.0f};
    for (size_t c = t; c < cols; c += kThreads) welford_add(w, in[c]);
    w = row_merge<kThreads, false>(w);
    const float mean = w.mean, rstd = rsqrtf(w.m2 / static_cast<float>(cols) + eps);
    for (size_t c = t; c < cols; c += kThreads) out[c] = (in[c] - mean) * rstd * gamma[c] + beta[c];
}

template <unsigned int kThreads, int kPer>
void launch(const float* x, const float* gamma, const float* beta, float* y, size_t rows,
            size_t cols, float eps, cudaStream_t stream) {
    const size_t per_block = block_of(kThreads) / kThreads;
    unsigned int grid = static_cast<unsigned int>((rows + per_block - 1) / per_block);
    int device = 0, sms = 0;  // ROW_OPS_PERSISTENT: rows of 32768 floats, one block per SM
    if (kPersistent && kPer * kThreads * 4 == 32768 && cudaGetDevice(&device) == cudaSuccess &&
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) == cudaSuccess &&
        static_cast<unsigned int>(sms) < grid)
        grid = static_cast<unsigned int>(sms);  // (a failed query: its error is returned)
    if constexpr (kPer == 0)
        layernorm_loop_kernel<kThreads>
            <<<grid, block_of(kThreads), 0, stream>>>(x, gamma, beta, y, rows, cols, eps);
    else if (ROW_OPS_SAME_COUNT && cols == static_cast<size_t>(kThreads) * kPer * 4)
        layernorm_kernel<kThreads, kPer, true>
            <<<grid, block_of(kThreads), 0, stream>>>(x, gamma, beta, y, rows, cols, eps);
    else
        layernorm_kernel<kThreads, kPer, false>
            <<<grid, block_of(kThreads), 0, stream>>>(x, gamma, beta, y, rows, cols, eps);
}

extern "C" cudaError_t layernorm_rows(const float* x, const float* gamma, const float* beta,
                                      float* y, size_t rows, size_t cols, float eps,
                                      cudaStream_t stream) {
    auto go = [&](auto f) { f(x, gamma, beta, y, rows, cols, eps, stream); };
    if (cols % 4 != 0 || cols > 32768) {
        if (cols <= 1024) go(launch<32, 0>);
        else go(launch<256, 0>);
    } else if (cols <= 1024) {  // a warp per row: float4 per lane
        const size_t per = (cols + 127) / 128;
        if (per <= 1) go(launch<32, 1>);
        else if (per <= 2) go(launch<32, 2>);
        else if (per <= 4) go(launch<32, 4>);
        else go(launch<32, 8>);
    } else if (cols <= 8192) {  // a block of 256 per row
        const size_t per = (cols + 1023) / 1024;
        if (per <= 2) go(launch<256, 2>);
        else if (per <= 4) go(launch<256, 4>);
        else go(launch<256, 8>);
    } else {  // a block of 1024 per row
        if (cols <= 16384) go(launch<1024, 4>);
        else go(launch<kWideThreads, 32768 / 4 / kWideThreads>);
    }
    return cudaGetLastError();
}
