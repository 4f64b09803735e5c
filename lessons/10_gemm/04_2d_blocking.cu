// Lesson 10, step 4 — 2-D register blocking: an outer product per k.
//
// Teaches: each thread owns an 8 x 8 square of C. Per k index it loads 8 A values (a column
// of its rows) and 8 B values (a row of its columns) into registers and does their outer
// product: 64 multiply-adds for 16 shared loads. The block computes 128 x 128 with 256
// threads, k in slices of 8. As has one spare column per row so that the two half-warps'
// A loads fall in different banks. Read "Step 4" in lessons/10_gemm/README.md.
//
// Check:  ./cudalings check 10_gemm/04_2d_blocking
// Stuck:  ./cudalings hint 10_gemm/04_2d_blocking
//
// As given, this file compiles and runs but never writes C, so every test fails ("C still holds
// its input values").

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
        // TODO(1 of 3, ~10 lines): load the tiles, 0.0f outside the matrices:
        //   As[r][ac] = A(row0 + r, p0 + ac) for r = ar, ar + kARows, ... < kBM
        //   Bs[r][bc] = B(p0 + r, col0 + bc) for r = br, br + kBRows, ... < kBK
        //   then a barrier.

        // TODO(2 of 3, ~10 lines): for p < kBK: a[i] = As[tr * kTM + i][p] (i < kTM),
        //   b[j] = Bs[p][tc * kTN + j] (j < kTN), acc[i][j] += a[i] * b[j]; then a barrier.
        (void)p0;
    }

    // TODO(3 of 3, ~10 lines): for every i, j: row = row0 + tr * kTM + i, col = col0 + tc * kTN
    //   + j; where row < m and col < n, C(row, col) = alpha * acc[i][j] + beta * C(row, col).
    //   Delete the (void) line when you are done.
    (void)A, (void)B, (void)C, (void)m, (void)n, (void)alpha, (void)beta, (void)&acc, (void)&a,
        (void)&b, (void)&As, (void)&Bs, (void)ar, (void)ac, (void)br, (void)bc, (void)tr, (void)tc,
        (void)row0, (void)col0, (void)kARows, (void)kBRows;
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
