// step: 08_transpose/04_padded_tile.cu
// emulated: PASS
//
// Correct: the padded tile on a 2-D grid, the way most blog posts write it (blockIdx.x over tile
// columns, blockIdx.y over tile rows), made safe for any shape by a 2-D grid-stride loop: the
// grid is at most 16 x 16 blocks and each block walks the tiles (tx, ty), (tx + gridDim.x, ty),
// ... so 2^22 x 4 needs no gridDim.y above 65,535. A block now reuses its tile, so every
// iteration has two barriers: after the load (columns are read that other warps stored) and
// after the store phase (the next load must not overwrite cells that slower warps still read).
#include "transpose.cuh"

constexpr unsigned int kTile = 32;
constexpr unsigned int kRows = 8;      // 32 x 8 threads, four rows each
constexpr unsigned int kMaxGrid = 16;  // per dimension

__global__ void __launch_bounds__(kTile* kRows)
    transpose_2d_kernel(const float* __restrict__ in, float* __restrict__ out, size_t rows,
                        size_t cols) {
    __shared__ float tile[kTile][kTile + 1];  // element (y, x) in bank (x + y) % 32
    const size_t tiles_across = (cols + kTile - 1) / kTile;
    const size_t tiles_down = (rows + kTile - 1) / kTile;
    const unsigned int x = threadIdx.x;
    for (size_t ty = blockIdx.y; ty < tiles_down; ty += gridDim.y) {
        for (size_t tx = blockIdx.x; tx < tiles_across; tx += gridDim.x) {
            const size_t r0 = ty * kTile, c0 = tx * kTile;
            for (unsigned int y = threadIdx.y; y < kTile; y += kRows)
                if (r0 + y < rows && c0 + x < cols) tile[y][x] = in[(r0 + y) * cols + c0 + x];
            __syncthreads();
            for (unsigned int y = threadIdx.y; y < kTile; y += kRows)
                if (c0 + y < cols && r0 + x < rows) out[(c0 + y) * rows + r0 + x] = tile[x][y];
            __syncthreads();  // the tile is free again
        }
    }
}

extern "C" cudaError_t transpose(const float* in, float* out, size_t rows, size_t cols,
                                 cudaStream_t stream) {
    const size_t tiles_across = (cols + kTile - 1) / kTile;
    const size_t tiles_down = (rows + kTile - 1) / kTile;
    const dim3 grid(static_cast<unsigned int>(tiles_across < kMaxGrid ? tiles_across : kMaxGrid),
                    static_cast<unsigned int>(tiles_down < kMaxGrid ? tiles_down : kMaxGrid));
    transpose_2d_kernel<<<grid, dim3(kTile, kRows), 0, stream>>>(in, out, rows, cols);
    return cudaGetLastError();
}
