// Lesson 08, step 3 — a shared-memory tile: both sides coalesced (solution).
//
// Teaches: shared memory as an on-chip reorder buffer. Steps 1 and 2 had to choose which side
// of the transpose is coalesced. Here a block reads a 32 x 32 tile of the input row by row
// (coalesced), keeps it in shared memory, and writes it out row by row of the *output*
// (coalesced again). The transposition happens on chip, where reading a column is allowed:
//
//     load:   tile[y][x] = in[(r0 + y) * cols + (c0 + x)]      x = threadIdx.x: a row per warp
//     barrier
//     store:  out[(c0 + y) * rows + (r0 + x)] = tile[x][y]     x = threadIdx.x: a row per warp
//
// The catch: tile[x][y] with x = lane reads a *column* of the tile, words 32 apart, and
// shared memory has 32 banks of 4-byte words (bank = word address mod 32): all 32 lanes hit
// the same bank, a 32-way bank conflict, 32 shared-memory passes for one instruction. On the
// H200 that makes this step slower than step 2. Step 4 fixes it with one number.
//
// Check:  ./cudalings check 08_transpose/03_shared_tile
// Stuck:  ./cudalings hint 08_transpose/03_shared_tile

#include "transpose.cuh"

constexpr unsigned int kTile = 32;      // a block owns a kTile x kTile tile
constexpr unsigned int kBlockRows = 8;  // the block is kTile x kBlockRows threads ...
constexpr unsigned int kRowsPerThread = kTile / kBlockRows;  // ... so each thread does 4 rows

__global__ void __launch_bounds__(kTile* kBlockRows)
    transpose_shared_tile_kernel(const float* __restrict__ in, float* __restrict__ out, size_t rows,
                                 size_t cols, unsigned int tiles_across) {
    __shared__ float tile[kTile][kTile];  // 4 KiB; row y, column x

    // Tiles of the input, numbered row by row (tiles_across = ceil(cols / 32)).
    const size_t r0 = static_cast<size_t>(blockIdx.x / tiles_across) * kTile;
    const size_t c0 = static_cast<size_t>(blockIdx.x % tiles_across) * kTile;
    const unsigned int x = threadIdx.x;

    // Load: the warp with threadIdx.y = y reads rows y, y + 8, y + 16, y + 24 of the tile, each
    // as 32 consecutive floats. Bounds of the *input*: rows and cols.
#pragma unroll
    for (unsigned int j = 0; j < kRowsPerThread; ++j) {
        const unsigned int y = threadIdx.y + j * kBlockRows;
        if (r0 + y < rows && c0 + x < cols) tile[y][x] = in[(r0 + y) * cols + c0 + x];
    }

    // Every element of the tile must be in shared memory before any thread reads it: each
    // thread reads values that other warps loaded.
    __syncthreads();

    // Store: the same block now writes the tile's place in the output, rows c0 .. c0 + 31 of
    // the output and columns r0 .. r0 + 31. Lane x writes output column r0 + x, so a warp
    // writes 32 consecutive floats of output row c0 + y. Bounds of the *output*: its rows are
    // the input's columns, its columns the input's rows. Cells of a partial tile that the load
    // skipped are never read here: the two tests exclude the same cells, transposed.
#pragma unroll
    for (unsigned int j = 0; j < kRowsPerThread; ++j) {
        const unsigned int y = threadIdx.y + j * kBlockRows;
        if (c0 + y < cols && r0 + x < rows) out[(c0 + y) * rows + r0 + x] = tile[x][y];
    }
}

extern "C" cudaError_t transpose(const float* in, float* out, size_t rows, size_t cols,
                                 cudaStream_t stream) {
    // Tiles of the input on one grid dimension, as in step 1.
    const size_t tiles_across = (cols + kTile - 1) / kTile;
    const size_t tiles_down = (rows + kTile - 1) / kTile;
    const dim3 block(kTile, kBlockRows);
    transpose_shared_tile_kernel<<<static_cast<unsigned int>(tiles_across * tiles_down), block, 0,
                                   stream>>>(in, out, rows, cols,
                                             static_cast<unsigned int>(tiles_across));
    return cudaGetLastError();
}
