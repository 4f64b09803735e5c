// Lesson 08, step 1 — the naive transpose, walking the input's rows.
//
// Teaches: a 2-D problem on a grid of tiles, and what a strided store costs. Each block owns a
// 32 x 32 tile of the input; its 32 x 8 threads walk the tile's rows, four rows per thread:
//
//     out[c * rows + r] = in[r * cols + c]
//
// Neighbouring lanes get neighbouring columns c, so a warp reads 32 consecutive floats and
// writes 32 floats that lie `rows` floats apart. Time it, then compare with step 2.
// Read "Step 1" in lessons/08_transpose/README.md first.
//
// Check:  ./cudalings check 08_transpose/01_naive_rows
// Stuck:  ./cudalings hint 08_transpose/01_naive_rows
//
// As given, this file compiles and runs but writes nothing, so every test fails.

#include "transpose.cuh"

constexpr unsigned int kTile = 32;      // a block owns a kTile x kTile tile of the input
constexpr unsigned int kBlockRows = 8;  // the block is kTile x kBlockRows threads ...
constexpr unsigned int kRowsPerThread = kTile / kBlockRows;  // ... so each thread does 4 rows

__global__ void __launch_bounds__(kTile* kBlockRows)
    transpose_naive_rows_kernel(const float* __restrict__ in, float* __restrict__ out, size_t rows,
                                size_t cols, unsigned int tiles_across) {
    // The grid is one-dimensional: block b owns tile (b / tiles_across, b % tiles_across), the
    // tiles numbered row by row. (Why not a 2-D grid: see the launcher.)
    const unsigned int tile_row = blockIdx.x / tiles_across;
    const unsigned int tile_col = blockIdx.x % tiles_across;

    // TODO(1 of 1, ~6 lines): copy this thread's four elements.
    //   - c = tile_col * kTile + threadIdx.x       (the column, one per lane)
    //     r0 = tile_row * kTile + threadIdx.y      (the first of the thread's rows)
    //     as size_t: with int, r * cols would overflow from 2^31 elements (8 GiB);
    //   - for j = 0 .. kRowsPerThread - 1, row r = r0 + j * kBlockRows:
    //         out[c * rows + r] = in[r * cols + c];
    //   - test both bounds, c < cols and r < rows: the tiles on the right and bottom edges are
    //     partial when a side is not a multiple of 32. (No barrier here: a thread outside the
    //     matrix may simply return.)
    //   Delete the (void) line when you are done.
    (void)in, (void)out, (void)rows, (void)cols, (void)tile_row, (void)tile_col,
        (void)kRowsPerThread;
}

extern "C" cudaError_t transpose(const float* in, float* out, size_t rows, size_t cols,
                                 cudaStream_t stream) {
    // A 2-D grid (x over tile columns, y over tile rows) would be the natural shape, but
    // gridDim.y is limited to 65,535 blocks, and a 2^22 x 4 matrix has 131,072 rows of tiles.
    // gridDim.x may reach 2^31 - 1, so all tiles go on x and the kernel splits the number.
    const size_t tiles_across = (cols + kTile - 1) / kTile;
    const size_t tiles_down = (rows + kTile - 1) / kTile;
    const dim3 block(kTile, kBlockRows);
    transpose_naive_rows_kernel<<<static_cast<unsigned int>(tiles_across * tiles_down), block, 0,
                                  stream>>>(in, out, rows, cols,
                                            static_cast<unsigned int>(tiles_across));
    return cudaGetLastError();
}
