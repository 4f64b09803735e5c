// Lesson 10, step 1 — one thread per output element (solution).
//
// Teaches: the loop order and thread mapping that coalesce. Thread (row, col) walks row `row`
// of A and column `col` of B, k multiply-adds, and writes C(row, col). Which index follows
// threadIdx.x decides everything: here consecutive lanes of a warp take consecutive *columns*,
// so at every p the warp reads B[p * n + col .. col + 31], 128 consecutive bytes (one
// transaction), and all 32 lanes read the same A[row * k + p] (one broadcast). With the roles
// swapped (lanes on rows) each lane reads its own row of A, k floats apart: 32 transactions
// per load, and the README's table shows what that costs.
//
// Arithmetic intensity: each multiply-add reads two floats from memory (or from cache): 2
// flops per 8 bytes, 0.25 flop/byte. The GPU can do ~60 flops per byte its DRAM delivers, so
// this kernel lives on what the caches give it.
//
// Check:  ./cudalings check 10_gemm/01_naive
// Stuck:  ./cudalings hint 10_gemm/01_naive

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

    // size_t for the products: a row offset i * k can pass 2^32 when k is large.
    const float* a = A + static_cast<size_t>(row) * k;  // row `row` of A
    const float* b = B + col;                           // column `col` of B, stride n
    float acc = 0.0f;
    for (unsigned int p = 0; p < k; ++p) acc += a[p] * b[static_cast<size_t>(p) * n];

    // The sum of products first, then the scaling: C is read once, for beta * C.
    float* c = C + static_cast<size_t>(row) * n + col;
    *c = alpha * acc + beta * *c;
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
