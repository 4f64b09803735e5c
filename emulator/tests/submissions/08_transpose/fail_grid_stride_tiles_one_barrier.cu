// step: 08_transpose/04_padded_tile.cu
// emulated: MEMORY_ERROR
// reason: race
//
// Buggy: pass_2d_grid_stride_tiles.cu without the barrier at the end of the loop body. One
// barrier per tile looks enough (it is, with one tile per block), but a block here walks several
// tiles: a warp that finishes its store phase starts loading the next tile into cells that
// slower warps are still reading as columns of the previous one.
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
            // BUG: no __syncthreads() here: the next iteration's load overwrites the tile
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
