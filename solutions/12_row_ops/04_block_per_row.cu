// Lesson 12, step 4 — a block per row for wide rows (solution).
//
// Teaches: the same kernel shape as step 3 one level up. A row of 32768 floats is 1024 floats
// per lane for a warp: far too many registers, and one warp per SM-slot cannot keep enough
// bytes in flight. A block of kThreads threads owns one row; thread t holds kPer float4 of it
// (elements (k·kThreads + t)·4 .. +3), the max and the sum are block reduces (lesson 04: a
// butterfly in each warp, the warps' results through shared memory, one barrier), and the row
// is written from registers: still one read and one write per element.
//
// At 32768 floats a row is all an SM holds (1024 threads with 32 registers of data each), so
// no other block hides what this one does after its last load lands. The exponentials are
// therefore taken before any barrier: exp(x - mt), with mt the thread's OWN max, as soon as its
// loads arrive; the block's max m then only rescales, by exp(mt - m) (step 2's rescale).
//
// Sizes: 128 threads (2 float4 each) for rows up to 1024 floats, 256 threads up to 8192 (up
// to 8 float4 each), 1024 threads up to 32768 (8 float4 each). Rows wider than 32768, or whose
// width is not a multiple of 4, take a loop that reads the row twice (step 2's online pass,
// then the write): that is the answer for rows that fit neither in registers nor in one
// block's shared memory.
//
// Check:  ./cudalings check 12_row_ops/04_block_per_row
// Stuck:  ./cudalings hint 12_row_ops/04_block_per_row

#include <cmath>

#include "row_ops.cuh"

constexpr unsigned int kFullMask = 0xffffffffu;
constexpr size_t kMaxRegisterCols = 32768;
// Rows up to 1024 floats: a block of 128 threads, 2 float4 each. 256 threads of one float4
// each keep 16 bytes per thread in flight and sit idle through both reduces; half the threads
// with twice the loads keep twice the bytes in flight per SM.
// (bench/row_ops/sweep.sh compiles this file with other values.)
#ifndef ROW_OPS_NARROW_THREADS
#define ROW_OPS_NARROW_THREADS 128
#endif
constexpr unsigned int kNarrowThreads = ROW_OPS_NARROW_THREADS;
constexpr int kNarrowPer = 1024 / 4 / kNarrowThreads;
#ifndef ROW_OPS_WIDE_THREADS  // rows of 16385 to 32768 floats: 1024 threads, 8 float4 each
#define ROW_OPS_WIDE_THREADS 1024
#endif
constexpr unsigned int kWideThreads = ROW_OPS_WIDE_THREADS;
#ifndef ROW_OPS_PERSISTENT  // 1: those rows take one block per SM, each walking its rows
#define ROW_OPS_PERSISTENT 0
#endif
constexpr bool kPersistent = ROW_OPS_PERSISTENT != 0;

struct Max {
    __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
    __device__ static float identity() { return -INFINITY; }
};
struct Sum {
    __device__ float operator()(float a, float b) const { return a + b; }
    __device__ static float identity() { return 0.0f; }
};

// v reduced over the block of kThreads threads, returned to every thread. `partial` is the
// caller's: two calls in a row use two arrays, so no barrier is needed after the read.
template <unsigned int kThreads, typename Op>
__device__ __forceinline__ float block_all_reduce(float v, Op op, float* partial) {
    const unsigned int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    for (unsigned int m = 16; m > 0; m /= 2) v = op(v, __shfl_xor_sync(kFullMask, v, m));
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    v = lane < kThreads / 32 ? partial[lane] : Op::identity();  // every warp: all partials
    for (unsigned int m = 16; m > 0; m /= 2) v = op(v, __shfl_xor_sync(kFullMask, v, m));
    return v;
}

// One row, `in` and `out` its first elements, over the kThreads threads of the block.
template <unsigned int kThreads, int kPer>
__device__ __forceinline__ void softmax_row(const float* __restrict__ in, float* __restrict__ out,
                                            size_t cols, float* max_partial, float* sum_partial) {
    float4 v[kPer];
#pragma unroll
    for (int k = 0; k < kPer; ++k) {  // every load issued before any arithmetic waits on one
        const size_t c = (static_cast<size_t>(k) * kThreads + threadIdx.x) * 4;
        v[k] = make_float4(-INFINITY, -INFINITY, -INFINITY, -INFINITY);
        if (c < cols) v[k] = __ldcs(reinterpret_cast<const float4*>(in + c));
    }
    // The exponentials before any barrier, relative to this thread's own max mt: they need
    // nothing from other threads, so they run while other warps' loads are still arriving
    // instead of after the whole row is in. The block's max m then rescales each thread's sum
    // and values by exp(mt - m), step 2's rescale (a thread with only -inf has nothing to scale).
    float mt = -INFINITY;
#pragma unroll
    for (int k = 0; k < kPer; ++k)
        mt = fmaxf(fmaxf(mt, fmaxf(v[k].x, v[k].y)), fmaxf(v[k].z, v[k].w));
    const float own = mt == -INFINITY ? 0.0f : mt;
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
        v[k] = make_float4(expf(v[k].x - own), expf(v[k].y - own), expf(v[k].z - own),
                           expf(v[k].w - own));
        s += (v[k].x + v[k].y) + (v[k].z + v[k].w);
    }
    const float m = block_all_reduce<kThreads>(mt, Max(), max_partial);
    const float scale = mt == -INFINITY ? 0.0f : expf(mt - m);
    s = block_all_reduce<kThreads>(s * scale, Sum(), sum_partial);
    const float inv = s > 0.0f ? scale / s : 0.0f;  // y = exp(x - mt) * exp(mt - m) / s

#pragma unroll
    for (int k = 0; k < kPer; ++k) {
        const size_t c = (static_cast<size_t>(k) * kThreads + threadIdx.x) * 4;
        if (c < cols)
            __stcs(reinterpret_cast<float4*>(out + c),
                   make_float4(v[k].x * inv, v[k].y * inv, v[k].z * inv, v[k].w * inv));
    }
}

// Row blockIdx.x, and then every gridDim.x-th row after it when the grid is smaller than
// rows (ROW_OPS_PERSISTENT). No barrier is needed between two rows: a warp writes max_partial
// again only after the second barrier of the row before, which every warp reaches after
// reading max_partial, and likewise for sum_partial one barrier later.
template <unsigned int kThreads, int kPer>
__global__ void __launch_bounds__(kThreads)
    softmax_block_kernel(const float* __restrict__ x, float* __restrict__ y, size_t rows,
                         size_t cols) {
    __shared__ float max_partial[kThreads / 32], sum_partial[kThreads / 32];
    // dev: not covered (a second row only with ROW_OPS_PERSISTENT=1)
    for (size_t row = blockIdx.x; row < rows; row += gridDim.x)
        softmax_row<kThreads, kPer>(x + row * cols, y + row * cols, cols, max_partial, sum_partial);
}

// Any width: an online pass (step 2) and a second read for the write.
constexpr unsigned int kLoopThreads = 256;
struct MaxSum {
    float m, s;
};
__device__ __forceinline__ MaxSum merge(MaxSum a, MaxSum b) {
    const float m = fmaxf(a.m, b.m);
    if (m == -INFINITY) return {m, 0.0f};
    return {m, a.s * expf(a.m - m) + b.s * expf(b.m - m)};
}

__global__ void __launch_bounds__(kLoopThreads)
    softmax_block_loop_kernel(const float* __restrict__ x, float* __restrict__ y, size_t cols) {
    __shared__ MaxSum partial[kLoopThreads / 32];
    const unsigned int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const float* in = x + blockIdx.x * cols;
    float* out = y + blockIdx.x * cols;
    MaxSum v{-INFINITY, 0.0f};
    for (size_t c = threadIdx.x; c < cols; c += kLoopThreads) v = merge(v, {in[c], 1.0f});
    for (unsigned int o = 16; o > 0; o /= 2)
        v = merge(v, {__shfl_xor_sync(kFullMask, v.m, o), __shfl_xor_sync(kFullMask, v.s, o)});
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    v = partial[0];
    for (unsigned int w = 1; w < kLoopThreads / 32; ++w) v = merge(v, partial[w]);
    const float shift = v.m == -INFINITY ? 0.0f : v.m;
    const float inv = v.s > 0.0f ? 1.0f / v.s : 0.0f;
    for (size_t c = threadIdx.x; c < cols; c += kLoopThreads) out[c] = expf(in[c] - shift) * inv;
}

// A block per row; with ROW_OPS_PERSISTENT, rows of 16385 to 32768 floats (one block fills an
// SM) take one block per SM instead, each walking its rows: no block launch between two rows.
template <unsigned int kThreads, int kPer>
void launch(const float* x, float* y, size_t rows, size_t cols, cudaStream_t stream) {
    size_t grid = rows;
    int device = 0, sms = 0;
    if (kPersistent && kPer * kThreads * 4 == 32768 && cudaGetDevice(&device) == cudaSuccess &&
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) == cudaSuccess)
        grid = rows < static_cast<size_t>(sms) ? rows : static_cast<size_t>(sms);
    // (a failed query leaves its error for the caller's cudaGetLastError())
    softmax_block_kernel<kThreads, kPer>
        <<<static_cast<unsigned int>(grid), kThreads, 0, stream>>>(x, y, rows, cols);
}

extern "C" cudaError_t softmax_rows(const float* x, float* y, size_t rows, size_t cols,
                                    cudaStream_t stream) {
    if (cols % 4 != 0 || cols > kMaxRegisterCols) {
        softmax_block_loop_kernel<<<static_cast<unsigned int>(rows), kLoopThreads, 0, stream>>>(
            x, y, cols);
    } else if (cols <= 4 * kNarrowThreads * kNarrowPer) {  // up to 1024 floats
        launch<kNarrowThreads, kNarrowPer>(x, y, rows, cols, stream);
    } else if (cols <= 8192) {
        const size_t per = (cols + 1023) / 1024;  // float4 per thread, 256 threads
        if (per <= 2) launch<256, 2>(x, y, rows, cols, stream);
        else if (per <= 4) launch<256, 4>(x, y, rows, cols, stream);
        else launch<256, 8>(x, y, rows, cols, stream);
    } else {
        if (cols <= 16384) launch<1024, 4>(x, y, rows, cols, stream);
        else launch<kWideThreads, 32768 / 4 / kWideThreads>(x, y, rows, cols, stream);
    }
    return cudaGetLastError();
}
