// Lesson 10, step 5 — vectorised, conflict-free tile loads (solution).
//
// Teaches: step 4's tiles, moved in float4s. Three changes:
//   1. Global loads as float4: a thread fetches 4 consecutive floats of a row of A and of B in
//      one instruction (one float4 of each per slice, instead of four floats of each).
//   2. A's tile stored *transposed* in shared memory, As[p][r]: a thread's 8 A operands for one
//      k index are then 8 consecutive words, two float4 shared loads instead of eight scalar
//      ones (B's row already is consecutive: two float4 loads too).
//   3. As padded by 4 columns: the transposed stores As[4q + e][r] of a warp then fall in 32
//      different banks (without it the lanes with q = 0 and q = 1 collide pairwise).
// And C is read and written as float4 where a row allows.
//
// float4 needs 16-byte alignment. The bases are aligned, but row i of A starts at A + i * k:
// aligned for every row only when k % 4 == 0 (B and C: n % 4 == 0). For other shapes each
// float4 becomes four guarded single loads: the same values, in the same places.
//
// Check:  ./cudalings check 10_gemm/05_vectorized
// Stuck:  ./cudalings hint 10_gemm/05_vectorized

#include "gemm.cuh"

constexpr unsigned int kBM = 128, kBN = 128, kBK = 8;
constexpr unsigned int kTM = 8, kTN = 8;
constexpr unsigned int kThreads = kBM * kBN / (kTM * kTN);  // 256
constexpr unsigned int kPad = 4;  // As's rows are kBM + 4 floats: conflict-free stores, and
                                  // still 16-byte multiples for float4 reads

__global__ void __launch_bounds__(kThreads)
    gemm_vectorized_kernel(const float* __restrict__ A, const float* __restrict__ B,
                           float* __restrict__ C, unsigned int m, unsigned int n, unsigned int k,
                           float alpha, float beta) {
    __shared__ __align__(16) float As[kBK][kBM + kPad];  // transposed: As[p][r]
    __shared__ __align__(16) float Bs[kBK][kBN];

    const unsigned int t = threadIdx.x;
    const unsigned int row0 = blockIdx.y * kBM, col0 = blockIdx.x * kBN;
    const unsigned int tr = t / (kBN / kTN), tc = t % (kBN / kTN);
    // One float4 of A's tile (128 rows x 2 quads) and one of B's (8 rows x 32 quads) per thread.
    const unsigned int ar = t / (kBK / 4), aq = t % (kBK / 4);
    const unsigned int br = t / (kBN / 4), bq = t % (kBN / 4);
    const bool a_vec = k % 4 == 0, b_vec = n % 4 == 0, c_vec = n % 4 == 0;

    float acc[kTM][kTN] = {};
    for (unsigned int p0 = 0; p0 < k; p0 += kBK) {
        {  // A(row0 + ar, p0 + 4 aq .. + 3), stored down column ar of As
            const unsigned int r = row0 + ar, p = p0 + 4 * aq;
            float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            if (r < m) {
                const float* src = A + static_cast<size_t>(r) * k + p;
                if (a_vec && p < k) {
                    v = *reinterpret_cast<const float4*>(src);  // p < k => p + 3 < k
                } else {
                    v.x = p < k ? src[0] : 0.0f;
                    v.y = p + 1 < k ? src[1] : 0.0f;
                    v.z = p + 2 < k ? src[2] : 0.0f;
                    v.w = p + 3 < k ? src[3] : 0.0f;
                }
            }
            As[4 * aq + 0][ar] = v.x;
            As[4 * aq + 1][ar] = v.y;
            As[4 * aq + 2][ar] = v.z;
            As[4 * aq + 3][ar] = v.w;
        }
        {  // B(p0 + br, col0 + 4 bq .. + 3), a float4 store into Bs
            const unsigned int p = p0 + br, c = col0 + 4 * bq;
            float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            if (p < k) {
                const float* src = B + static_cast<size_t>(p) * n + c;
                if (b_vec && c < n) {
                    v = *reinterpret_cast<const float4*>(src);
                } else {
                    v.x = c < n ? src[0] : 0.0f;
                    v.y = c + 1 < n ? src[1] : 0.0f;
                    v.z = c + 2 < n ? src[2] : 0.0f;
                    v.w = c + 3 < n ? src[3] : 0.0f;
                }
            }
            *reinterpret_cast<float4*>(&Bs[br][4 * bq]) = v;
        }
        __syncthreads();

#pragma unroll
        for (unsigned int p = 0; p < kBK; ++p) {
            float a[kTM], b[kTN];
#pragma unroll
            for (unsigned int i = 0; i < kTM; i += 4)
                *reinterpret_cast<float4*>(&a[i]) =
                    *reinterpret_cast<const float4*>(&As[p][tr * kTM + i]);
#pragma unroll
            for (unsigned int j = 0; j < kTN; j += 4)
                *reinterpret_cast<float4*>(&b[j]) =
                    *reinterpret_cast<const float4*>(&Bs[p][tc * kTN + j]);
#pragma unroll
            for (unsigned int i = 0; i < kTM; ++i)
#pragma unroll
                for (unsigned int j = 0; j < kTN; ++j) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }

#pragma unroll
    for (unsigned int i = 0; i < kTM; ++i) {
        const unsigned int row = row0 + tr * kTM + i;
        if (row >= m) break;
        float* c_row = C + static_cast<size_t>(row) * n;
#pragma unroll
        for (unsigned int j = 0; j < kTN; j += 4) {
            const unsigned int col = col0 + tc * kTN + j;
            if (c_vec && col < n) {  // n % 4 == 0 and col % 4 == 0: all four exist
                float4* c4 = reinterpret_cast<float4*>(c_row + col);
                float4 v = *c4;
                v.x = alpha * acc[i][j + 0] + beta * v.x;
                v.y = alpha * acc[i][j + 1] + beta * v.y;
                v.z = alpha * acc[i][j + 2] + beta * v.z;
                v.w = alpha * acc[i][j + 3] + beta * v.w;
                *c4 = v;
            } else {
#pragma unroll
                for (unsigned int e = 0; e < 4; ++e)
                    if (col + e < n) c_row[col + e] = alpha * acc[i][j + e] + beta * c_row[col + e];
            }
        }
    }
}

extern "C" cudaError_t gemm(const float* A, const float* B, float* C, size_t m, size_t n, size_t k,
                            float alpha, float beta, cudaStream_t stream) {
    const dim3 grid(static_cast<unsigned int>((n + kBN - 1) / kBN),
                    static_cast<unsigned int>((m + kBM - 1) / kBM));
    gemm_vectorized_kernel<<<grid, kThreads, 0, stream>>>(
        A, B, C, static_cast<unsigned int>(m), static_cast<unsigned int>(n),
        static_cast<unsigned int>(k), alpha, beta);
    return cudaGetLastError();
}
