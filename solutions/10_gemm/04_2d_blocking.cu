// Lesson 10, step 4 — 2-D register blocking: an outer product per k (solution).
//
// Teaches: give each thread an 8 x 8 square of outputs. Per k index it loads 8 values of A's
// column and 8 of B's row into registers and does their outer product: 64 multiply-adds for 16
// shared loads (step 3: 8 for 9). The square is what makes it pay: a thread's outputs share
// their rows' A values and their columns' B values.
//
// The block computes a 128 x 128 tile of C with 256 threads (128 * 128 / 64), k in slices of
// kBK = 8. A tile 128 x 8 and B tile 8 x 128 are 1024 floats each: four of each per thread.
//   thread t: rows (t / 16) * 8 + i, columns (t % 16) * 8 + j, i, j < 8.
// Registers: 64 accumulators + 16 operands; ask for them with __launch_bounds__.
//
// As has one spare column (kBK + 1 floats a row). A warp is 2 rows of 16 threads: its two
// halves read A rows 8 apart, and with rows of 8 floats those are 64 words apart, the same
// bank: every A load would cost two shared-memory passes (a 2-way bank conflict). With rows
// of 9 floats they are 72 words apart, 8 banks: one pass. (B's loads still conflict: lanes
// read words 8 apart. Steps 5 and 6 deal with that.) On an H200 the unpadded kernel was no
// faster than step 3 (tuning bench, 2026-12-05); bench/gemm_sweep times both.
//
// Check:  ./cudalings check 10_gemm/04_2d_blocking
// Stuck:  ./cudalings hint 10_gemm/04_2d_blocking

#include "gemm.cuh"

constexpr unsigned int kBM = 128, kBN = 128, kBK = 8;
constexpr unsigned int kTM = 8, kTN = 8;                    // a thread's square of outputs
constexpr unsigned int kThreads = kBM * kBN / (kTM * kTN);  // 256

__global__ void __launch_bounds__(kThreads)
    gemm_2d_blocking_kernel(const float* __restrict__ A, const float* __restrict__ B,
                            float* __restrict__ C, unsigned int m, unsigned int n, unsigned int k,
                            float alpha, float beta) {
    __shared__ float As[kBM][kBK + 1];  // + 1: the two half-warps' A rows in different banks
    __shared__ float Bs[kBK][kBN];

    const unsigned int t = threadIdx.x;
    const unsigned int row0 = blockIdx.y * kBM, col0 = blockIdx.x * kBN;
    const unsigned int tr = t / (kBN / kTN), tc = t % (kBN / kTN);  // 16 x 16 threads
    // Loads: thread t fills As[ar + 32 q][ac] and Bs[br + 2 q][bc] for q < 4.
    const unsigned int ar = t / kBK, ac = t % kBK;  // 32 rows of A's tile per pass
    const unsigned int br = t / kBN, bc = t % kBN;  // 2 rows of B's tile per pass
    constexpr unsigned int kARows = kThreads / kBK, kBRows = kThreads / kBN;

    float acc[kTM][kTN] = {};
    float a[kTM], b[kTN];
    for (unsigned int p0 = 0; p0 < k; p0 += kBK) {
#pragma unroll
        for (unsigned int r = ar; r < kBM; r += kARows)
            As[r][ac] = (row0 + r < m && p0 + ac < k)
                            ? A[static_cast<size_t>(row0 + r) * k + p0 + ac]
                            : 0.0f;
#pragma unroll
        for (unsigned int r = br; r < kBK; r += kBRows)
            Bs[r][bc] = (p0 + r < k && col0 + bc < n)
                            ? B[static_cast<size_t>(p0 + r) * n + col0 + bc]
                            : 0.0f;
        __syncthreads();

#pragma unroll
        for (unsigned int p = 0; p < kBK; ++p) {
#pragma unroll
            for (unsigned int i = 0; i < kTM; ++i) a[i] = As[tr * kTM + i][p];
#pragma unroll
            for (unsigned int j = 0; j < kTN; ++j) b[j] = Bs[p][tc * kTN + j];
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
#pragma unroll
        for (unsigned int j = 0; j < kTN; ++j) {
            const unsigned int col = col0 + tc * kTN + j;
            if (row < m && col < n) {  // the register tile can hang over C's edge
                float* c = C + static_cast<size_t>(row) * n + col;
                *c = alpha * acc[i][j] + beta * *c;
            }
        }
    }
}

extern "C" cudaError_t gemm(const float* A, const float* B, float* C, size_t m, size_t n, size_t k,
                            float alpha, float beta, cudaStream_t stream) {
    const dim3 grid(static_cast<unsigned int>((n + kBN - 1) / kBN),
                    static_cast<unsigned int>((m + kBM - 1) / kBM));
    gemm_2d_blocking_kernel<<<grid, kThreads, 0, stream>>>(
        A, B, C, static_cast<unsigned int>(m), static_cast<unsigned int>(n),
        static_cast<unsigned int>(k), alpha, beta);
    return cudaGetLastError();
}
