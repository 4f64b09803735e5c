// Lesson 10, step 3 — 1-D register blocking: several outputs per thread.
//
// Teaches: step 2 does two shared-memory loads per multiply-add. Here each thread owns a
// column of kTM = 8 outputs: per k index it loads one B value into a register and uses it 8
// times. The block computes 64 x 64 of C with 512 threads, k in slices of 8.
// Read "Step 3" in lessons/10_gemm/README.md.
//
// Check:  ./cudalings check 10_gemm/03_1d_blocking
// Stuck:  ./cudalings hint 10_gemm/03_1d_blocking
//
// As given, this file compiles and runs but never writes C, so every test fails ("C still holds
// its input values").

#include "gemm.cuh"

constexpr unsigned int kBM = 64, kBN = 64, kBK = 8;  // the block's tile of C, the k slice
constexpr unsigned int kTM = 8;                      // outputs per thread, down a column
constexpr unsigned int kThreads = kBM * kBN / kTM;   // 512

__global__ void __launch_bounds__(kThreads)
    gemm_1d_blocking_kernel(const float* __restrict__ A, const float* __restrict__ B,
                            float* __restrict__ C, unsigned int m, unsigned int n, unsigned int k,
                            float alpha, float beta) {
    __shared__ float As[kBM][kBK];
    __shared__ float Bs[kBK][kBN];

    const unsigned int t = threadIdx.x;
    const unsigned int row0 = blockIdx.y * kBM, col0 = blockIdx.x * kBN;
    // This thread's outputs: rows row0 + tr * kTM + i (i < kTM), column col0 + tc.
    const unsigned int tc = t % kBN, tr = t / kBN;
    // Its share of the loads: A(row0 + ar, p0 + ac) and B(p0 + br, col0 + bc).
    const unsigned int ar = t / kBK, ac = t % kBK;
    const unsigned int br = t / kBN, bc = t % kBN;

    float acc[kTM] = {};
    for (unsigned int p0 = 0; p0 < k; p0 += kBK) {
        // TODO(1 of 3, ~7 lines): load one element of each tile, 0.0f outside the matrices:
        //   As[ar][ac] = A(row0 + ar, p0 + ac),  Bs[br][bc] = B(p0 + br, col0 + bc),
        //   then a barrier.

        // TODO(2 of 3, ~6 lines): for p < kBK: b = Bs[p][tc] (one shared load), then
        //   acc[i] += As[tr * kTM + i][p] * b for i < kTM; then the second barrier.
        (void)p0;
    }

    // TODO(3 of 3, ~8 lines): for i < kTM, row = row0 + tr * kTM + i, col = col0 + tc: where
    //   row < m and col < n, C(row, col) = alpha * acc[i] + beta * C(row, col).
    //   Delete the (void) line when you are done.
    (void)A, (void)B, (void)C, (void)m, (void)n, (void)alpha, (void)beta, (void)&acc, (void)&As,
        (void)&Bs, (void)ar, (void)ac, (void)br, (void)bc, (void)tr, (void)tc, (void)row0,
        (void)col0;
}

extern "C" cudaError_t gemm(const float* A, const float* B, float* C, size_t m, size_t n, size_t k,
                            float alpha, float beta, cudaStream_t stream) {
    const dim3 grid(static_cast<unsigned int>((n + kBN - 1) / kBN),
                    static_cast<unsigned int>((m + kBM - 1) / kBM));
    gemm_1d_blocking_kernel<<<grid, kThreads, 0, stream>>>(
        A, B, C, static_cast<unsigned int>(m), static_cast<unsigned int>(n),
        static_cast<unsigned int>(k), alpha, beta);
    return cudaGetLastError();
}
