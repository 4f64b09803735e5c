// Lesson 12, step 3 — a warp per row, the row in registers.
//
// Teaches: matching the reduction to the row. A block of 256 threads per row of 128 floats
// leaves 224 threads idle and pays two barriers per row; a warp is exactly as wide as a
// 128-float row read as float4. Here each warp of a block of 8 warps owns one row: its lanes
// load the whole row into registers (lane l holds elements (32k + l)·4 .. +3 for k < kPer), the
// max and the sum are butterflies over the warp (__shfl_xor_sync, lesson 03: every lane ends
// with the result, no shared memory, no barrier), and the row is written from the registers:
// one read and one write of each element, as for a copy.
//
// Lanes whose slots lie past the end of the row (a width not a multiple of 32 or 128) hold
// the identities, -inf for the max and 0 for the sum, and still take part in every shuffle:
// the shuffles run with the full mask, so all 32 lanes must reach them.
//
// The row must fit in registers: up to 1024 floats (32 per lane). Wider rows take a loop that
// walks the row twice (an online pass as in step 2, then the write): correct, not fast; step 4
// is for them.
//
// Check:  ./cudalings check 12_row_ops/03_warp_per_row
// Stuck:  ./cudalings hint 12_row_ops/03_warp_per_row
//
// Read "Step 3" in lessons/12_row_ops/README.md first. As given, this file compiles and runs but writes nothing, so every test fails.

#include <cmath>

#include "row_ops.cuh"

constexpr unsigned int kBlock = 256;
constexpr unsigned int kRowsPerBlock = kBlock / 32;
constexpr unsigned int kFullMask = 0xffffffffu;
constexpr size_t kMaxRegisterCols = 1024;

// TODO(1 of 2, ~2 lines): butterflies (lesson 03, step 2): for m = 16, 8, 4, 2, 1,
//   v = fmaxf(v, __shfl_xor_sync(kFullMask, v, m)) in warp_max, v += ... in warp_sum. Every
//   lane ends with the whole warp's result.
__device__ __forceinline__ float warp_max(float v) { return v; }
__device__ __forceinline__ float warp_sum(float v) { return v; }

// kVec floats per load (4: float4, when cols is a multiple of 4; else 1), kPer loads per lane.
template <int kVec, int kPer>
__global__ void __launch_bounds__(kBlock)
    softmax_warp_kernel(const float* __restrict__ x, float* __restrict__ y, size_t rows,
                        size_t cols) {
    const unsigned int lane = threadIdx.x % 32;
    const size_t row = static_cast<size_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / 32;
    if (row >= rows) return;  // the whole warp leaves together: no shuffle is left half-done
    const float* in = x + row * cols;
    float* out = y + row * cols;

    float v[kPer][kVec];
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
        const size_t c = (static_cast<size_t>(k) * 32 + lane) * kVec;
        if constexpr (kVec == 4) {
            float4 q = make_float4(-INFINITY, -INFINITY, -INFINITY, -INFINITY);
            if (c < cols) q = __ldcs(reinterpret_cast<const float4*>(in + c));  // read once
            v[k][0] = q.x, v[k][1] = q.y, v[k][2] = q.z, v[k][3] = q.w;
        } else {
            v[k][0] = c < cols ? in[c] : -INFINITY;
        }
    }

    // TODO(2 of 2, ~20 lines): the row is in v (padding slots hold -inf). From registers:
    //   - m = the max of the lane's v[k][e], then warp_max(m); shift = m, or 0 when m is -inf;
    //   - v[k][e] = expf(v[k][e] - shift), s = their sum, then warp_sum(s); inv = 1 / s, or 0;
    //   - for each k whose column c = (k * 32 + lane) * kVec is < cols: store v[k][..] * inv
    //     (kVec == 4: one float4, with __stcs; else out[c]).
    //   Every lane runs both reductions, even a lane that holds only padding.
    //   Delete the (void) line when you are done.
    (void)out, (void)v;
}

// Rows wider than kMaxRegisterCols: step 2's online pass per lane, merged over the warp, then a
// second read of the row for the write.
struct MaxSum {
    float m, s;
};
__device__ __forceinline__ MaxSum merge(MaxSum a, MaxSum b) {
    const float m = fmaxf(a.m, b.m);
    if (m == -INFINITY) return {m, 0.0f};
    return {m, a.s * expf(a.m - m) + b.s * expf(b.m - m)};
}

__global__ void __launch_bounds__(kBlock)
    softmax_warp_loop_kernel(const float* __restrict__ x, float* __restrict__ y, size_t rows,
                             size_t cols) {
    const unsigned int lane = threadIdx.x % 32;
    const size_t row = static_cast<size_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / 32;
    if (row >= rows) return;
    const float* in = x + row * cols;
    float* out = y + row * cols;
    MaxSum v{-INFINITY, 0.0f};
    for (size_t c = lane; c < cols; c += 32) v = merge(v, {in[c], 1.0f});
    for (unsigned int o = 16; o > 0; o /= 2)
        v = merge(v, {__shfl_xor_sync(kFullMask, v.m, o), __shfl_xor_sync(kFullMask, v.s, o)});
    const float shift = v.m == -INFINITY ? 0.0f : v.m;
    const float inv = v.s > 0.0f ? 1.0f / v.s : 0.0f;
    for (size_t c = lane; c < cols; c += 32) out[c] = expf(in[c] - shift) * inv;
}

template <int kVec, int kPer>
void launch(const float* x, float* y, size_t rows, size_t cols, unsigned int grid,
            cudaStream_t stream) {
    softmax_warp_kernel<kVec, kPer><<<grid, kBlock, 0, stream>>>(x, y, rows, cols);
}

extern "C" cudaError_t softmax_rows(const float* x, float* y, size_t rows, size_t cols,
                                    cudaStream_t stream) {
    const unsigned int grid = static_cast<unsigned int>((rows + kRowsPerBlock - 1) / kRowsPerBlock);
    if (cols > kMaxRegisterCols) {
        softmax_warp_loop_kernel<<<grid, kBlock, 0, stream>>>(x, y, rows, cols);
    } else if (cols % 4 == 0) {  // float4 loads: 128 floats per warp per load
        const size_t per = (cols + 127) / 128;
        if (per <= 1) launch<4, 1>(x, y, rows, cols, grid, stream);
        else if (per <= 2) launch<4, 2>(x, y, rows, cols, grid, stream);
        else if (per <= 4) launch<4, 4>(x, y, rows, cols, grid, stream);
        else launch<4, 8>(x, y, rows, cols, grid, stream);
    } else {  // a row that is not 16-byte aligned: one float per load
        const size_t per = (cols + 31) / 32;
        if (per <= 1) launch<1, 1>(x, y, rows, cols, grid, stream);
        else if (per <= 2) launch<1, 2>(x, y, rows, cols, grid, stream);
        else if (per <= 4) launch<1, 4>(x, y, rows, cols, grid, stream);
        else if (per <= 8) launch<1, 8>(x, y, rows, cols, grid, stream);
        else if (per <= 16) launch<1, 16>(x, y, rows, cols, grid, stream);
        else launch<1, 32>(x, y, rows, cols, grid, stream);
    }
    return cudaGetLastError();
}
