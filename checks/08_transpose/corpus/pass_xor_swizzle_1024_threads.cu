// step: 08_transpose/04_padded_tile.cu
// emulated: PASS
//
// Correct: no padding at all, a swizzled tile instead (the layout CUTLASS-style kernels use):
// element (y, x) of the 32 x 32 tile is stored at tile[y][x ^ y]. A row (fixed y) is still a
// permutation of the 32 banks, and a column (fixed x, y = 0..31) lands in banks x ^ y, 32
// different ones: no conflict on either side, and not a word wasted. The block is 32 x 32
// threads (1024), one element per thread and phase; the grid stays 1-D (tiles numbered row by
// row) so that 2^22 x 4 fits.
#include "transpose.cuh"

constexpr unsigned int kTile = 32;

__global__ void __launch_bounds__(kTile* kTile)
    transpose_swizzled_kernel(const float* __restrict__ in, float* __restrict__ out, size_t rows,
                              size_t cols, unsigned int tiles_across) {
    __shared__ float tile[kTile][kTile];
    const size_t r0 = static_cast<size_t>(blockIdx.x / tiles_across) * kTile;
    const size_t c0 = static_cast<size_t>(blockIdx.x % tiles_across) * kTile;
    const unsigned int x = threadIdx.x, y = threadIdx.y;

    if (r0 + y < rows && c0 + x < cols) tile[y][x ^ y] = in[(r0 + y) * cols + c0 + x];
    __syncthreads();
    // Output row c0 + y, column r0 + x holds input (r0 + x, c0 + y): tile element (x, y).
    if (c0 + y < cols && r0 + x < rows) out[(c0 + y) * rows + r0 + x] = tile[x][y ^ x];
}

extern "C" cudaError_t transpose(const float* in, float* out, size_t rows, size_t cols,
                                 cudaStream_t stream) {
    const size_t tiles_across = (cols + kTile - 1) / kTile;
    const size_t tiles_down = (rows + kTile - 1) / kTile;
    transpose_swizzled_kernel<<<static_cast<unsigned int>(tiles_across * tiles_down),
                                dim3(kTile, kTile), 0, stream>>>(
        in, out, rows, cols, static_cast<unsigned int>(tiles_across));
    return cudaGetLastError();
}
