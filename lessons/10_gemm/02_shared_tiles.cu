// Lesson 10, step 2 — shared-memory tiles and the barrier pair.
//
// Teaches: reuse through shared memory. A block computes a 32 x 32 tile of C and walks k in
// slices of 32: it loads a 32 x 32 tile of A and one of B into shared memory (one float of each
// per thread), waits, does 32 multiply-adds per thread from shared memory, and waits again
// before the next slice overwrites the tiles. Read "Step 2" in lessons/10_gemm/README.md.
//
// Check:  ./cudalings check 10_gemm/02_shared_tiles
// Stuck:  ./cudalings hint 10_gemm/02_shared_tiles
//
// As given, this file compiles and runs but never writes C, so every test fails ("C still holds
// its input values").

#include "gemm.cuh"

constexpr unsigned int kTile = 32;  // a block owns a kTile x kTile tile of C, one thread each

__global__ void __launch_bounds__(kTile* kTile)
    gemm_shared_tiles_kernel(const float* __restrict__ A, const float* __restrict__ B,
                             float* __restrict__ C, unsigned int m, unsigned int n, unsigned int k,
                             float alpha, float beta) {
    __shared__ float As[kTile][kTile];  // As[r][p]: row r of the block's rows, k index p
    __shared__ float Bs[kTile][kTile];  // Bs[p][c]

    const unsigned int tx = threadIdx.x, ty = threadIdx.y;
    const unsigned int row = blockIdx.y * kTile + ty;
    const unsigned int col = blockIdx.x * kTile + tx;

    float acc = 0.0f;
    for (unsigned int p0 = 0; p0 < k; p0 += kTile) {
        // TODO(1 of 4, ~2 lines): load the slice's tiles, 0.0f where the element does not exist:
        //   As[ty][tx] = A(row, p0 + tx)   if row < m and p0 + tx < k
        //   Bs[ty][tx] = B(p0 + ty, col)   if p0 + ty < k and col < n
        //   (A(i, p) is A[i * k + p], B(p, j) is B[p * n + j]; offsets in size_t)

        // TODO(2 of 4, ~1 line): a barrier: the tiles must be complete before anyone reads them.

        // TODO(3 of 4, ~3 lines): acc += As[ty][p] * Bs[p][tx] for p < kTile, then a second
        //   barrier, so that no warp loads the next slice over a tile another warp still reads.
        (void)p0;
    }

    // TODO(4 of 4, ~3 lines): if row < m and col < n: C(row, col) = alpha * acc + beta * C(row,
    //   col). Delete the (void) line when you are done.
    (void)A, (void)B, (void)C, (void)m, (void)n, (void)alpha, (void)beta, (void)&acc, (void)&As,
        (void)&Bs, (void)row, (void)col, (void)tx, (void)ty;
}

extern "C" cudaError_t gemm(const float* A, const float* B, float* C, size_t m, size_t n, size_t k,
                            float alpha, float beta, cudaStream_t stream) {
    const dim3 block(kTile, kTile);
    const dim3 grid(static_cast<unsigned int>((n + kTile - 1) / kTile),
                    static_cast<unsigned int>((m + kTile - 1) / kTile));
    gemm_shared_tiles_kernel<<<grid, block, 0, stream>>>(A, B, C, static_cast<unsigned int>(m),
                                                         static_cast<unsigned int>(n),
                                                         static_cast<unsigned int>(k), alpha, beta);
    return cudaGetLastError();
}
