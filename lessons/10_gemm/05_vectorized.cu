// Lesson 10, step 5 — vectorised, conflict-free tile loads.
//
// Teaches: step 4's tiles moved in float4s. Global loads as float4 (one of A's tile and one of
// B's per thread per slice); A's tile stored transposed, As[p][r], so that a thread's 8 A
// operands are consecutive words (two float4 shared loads, like B's); As padded by 4 columns
// so the transposed stores do not collide in a bank. A float4 needs a 16-byte-aligned address:
// rows of A are aligned only when k % 4 == 0 (B's and C's when n % 4 == 0); otherwise each
// float4 is four guarded single loads. Read "Step 5" in lessons/10_gemm/README.md.
//
// Check:  ./cudalings check 10_gemm/05_vectorized
// Stuck:  ./cudalings hint 10_gemm/05_vectorized
//
// As given, this file compiles and runs but computes nothing (acc stays 0), so C becomes
// beta * C and every test fails.

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
        // TODO(1 of 2, ~35 lines): the slice's loads, then (below) the barrier.
        //   A: v = the four floats A(row0 + ar, p .. p + 3), p = p0 + 4 * aq: one float4 load
        //      when a_vec and p < k (then p + 3 < k as well), else four single loads, each 0.0f
        //      where its column is >= k; all zeros when row0 + ar >= m. Store it transposed:
        //      As[4 * aq + e][ar] = v.x, v.y, v.z, v.w (e = 0 .. 3).
        //   B: w = the four floats B(p0 + br, c .. c + 3), c = col0 + 4 * bq, the same way
        //      (b_vec and c < n: one float4), and store it whole: float4 at &Bs[br][4 * bq].
        (void)ar, (void)aq, (void)br, (void)bq, (void)a_vec, (void)b_vec, (void)p0;
        __syncthreads();

        // TODO(2 of 2, ~16 lines): for p < kBK: a[0..7] from two float4 reads at
        //   &As[p][tr * kTM] and &As[p][tr * kTM + 4], b[0..7] from &Bs[p][tc * kTN] and
        //   &Bs[p][tc * kTN + 4]; then acc[i][j] += a[i] * b[j]. Delete the (void) lines when you
        //   are done.
        (void)&As, (void)&Bs, (void)A, (void)B, (void)k;
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
