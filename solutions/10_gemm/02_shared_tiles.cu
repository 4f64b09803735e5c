// Lesson 10, step 2 — shared-memory tiles (solution).
//
// Teaches: reuse through shared memory, and the barrier pair. A block computes a 32 x 32 tile
// of C. It walks k in slices of 32: the block loads a 32 x 32 tile of A and one of B into
// shared memory (one float per thread each, coalesced), waits, and every thread does 32
// multiply-adds from shared memory. Each float loaded from global memory is now used by 32
// threads: global traffic falls 32-fold, and the arithmetic intensity of the global loads rises
// from 0.25 to 8 flop/byte (2 * 32 flops per 2 loaded floats per thread per slice).
//
// Two barriers per slice, and both are needed:
//   1. after the loads: a thread reads tile elements that other warps loaded;
//   2. after the math: the next slice's loads overwrite the tiles, and a fast warp must not
//      overwrite what a slow warp is still reading.
//
// Edges: a tile may hang over C's right or bottom edge, and the last slice over k's end. Out-
// of-range tile elements are loaded as 0, so they add nothing, and every thread reaches both
// barriers (a barrier inside an `if` that some threads skip is undefined behaviour).
//
// Check:  ./cudalings check 10_gemm/02_shared_tiles
// Stuck:  ./cudalings hint 10_gemm/02_shared_tiles

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
        // Lane tx reads A(row, p0 + tx) and B(p0 + ty, col): a warp reads 32 consecutive floats
        // of one row of each matrix.
        As[ty][tx] = (row < m && p0 + tx < k) ? A[static_cast<size_t>(row) * k + p0 + tx] : 0.0f;
        Bs[ty][tx] = (p0 + ty < k && col < n) ? B[static_cast<size_t>(p0 + ty) * n + col] : 0.0f;
        __syncthreads();  // 1: the tiles are complete

        // As[ty][p] is one word for the whole warp (a broadcast), Bs[p][tx] 32 consecutive
        // words (32 banks): no bank conflict.
#pragma unroll
        for (unsigned int p = 0; p < kTile; ++p) acc += As[ty][p] * Bs[p][tx];
        __syncthreads();  // 2: everyone is done with the tiles before they are overwritten
    }

    if (row < m && col < n) {
        float* c = C + static_cast<size_t>(row) * n + col;
        *c = alpha * acc + beta * *c;
    }
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
