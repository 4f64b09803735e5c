// Lesson 10, step 1 — one thread per output element.
//
// Teaches: the loop order and thread mapping that coalesce. Thread (row, col) walks row `row`
// of A and column `col` of B, k multiply-adds, and writes C(row, col). Lanes of a warp take
// consecutive *columns* (threadIdx.x -> col): at every p the warp reads 32 consecutive floats
// of a row of B and one float of A (a broadcast). Read "Step 1" in lessons/10_gemm/README.md.
//
// Check:  ./cudalings check 10_gemm/01_naive
// Stuck:  ./cudalings hint 10_gemm/01_naive
//
// As given, this file compiles and runs but never writes C, so every test fails ("C still holds
// its input values").

#include "gemm.cuh"

constexpr unsigned int kBlockX = 32;  // lanes: consecutive columns of C
constexpr unsigned int kBlockY = 8;   // warps: consecutive rows of C

__global__ void __launch_bounds__(kBlockX* kBlockY)
    gemm_naive_kernel(const float* __restrict__ A, const float* __restrict__ B,
                      float* __restrict__ C, unsigned int m, unsigned int n, unsigned int k,
                      float alpha, float beta) {
    const unsigned int col = blockIdx.x * kBlockX + threadIdx.x;
    const unsigned int row = blockIdx.y * kBlockY + threadIdx.y;
    if (row >= m || col >= n) return;  // a partial block at the right or bottom edge

    // TODO(1 of 2, ~3 lines): the dot product of row `row` of A and column `col` of B:
    //   acc += A[row * k + p] * B[p * n + col]   for p = 0 .. k - 1
    //   (compute the offsets in size_t: row * k can pass 2^32).
    float acc = 0.0f;

    // TODO(2 of 2, ~2 lines): C[row * n + col] = alpha * acc + beta * C[row * n + col]
    //   (read C once, then overwrite it). Delete the (void) line when you are done.
    (void)A, (void)B, (void)C, (void)k, (void)alpha, (void)beta, (void)&acc;
}

extern "C" cudaError_t gemm(const float* A, const float* B, float* C, size_t m, size_t n, size_t k,
                            float alpha, float beta, cudaStream_t stream) {
    const dim3 block(kBlockX, kBlockY);
    const dim3 grid(static_cast<unsigned int>((n + kBlockX - 1) / kBlockX),
                    static_cast<unsigned int>((m + kBlockY - 1) / kBlockY));
    gemm_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, static_cast<unsigned int>(m),
                                                  static_cast<unsigned int>(n),
                                                  static_cast<unsigned int>(k), alpha, beta);
    return cudaGetLastError();
}
