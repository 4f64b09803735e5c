// Lesson 08, step 3 — a shared-memory tile: both sides coalesced.
//
// Teaches: shared memory as an on-chip reorder buffer. A block reads a 32 x 32 tile of the
// input row by row (coalesced), keeps it in shared memory, and writes it out row by row of the
// *output* (coalesced again). The transposition happens on chip:
//
//     load:   tile[y][x] = in[(r0 + y) * cols + (c0 + x)]      x = threadIdx.x
//     barrier
//     store:  out[(c0 + y) * rows + (r0 + x)] = tile[x][y]     x = threadIdx.x
//
// Time it against step 2, then read about bank conflicts in the README.
// Read "Step 3" in lessons/08_transpose/README.md first.
//
// Check:  ./cudalings check 08_transpose/03_shared_tile
// Stuck:  ./cudalings hint 08_transpose/03_shared_tile
//
// As given, this file compiles and runs but writes nothing, so every test fails.

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

    // TODO(1 of 3, ~4 lines): load the tile. For j = 0 .. kRowsPerThread - 1, with
    //   y = threadIdx.y + j * kBlockRows:
    //       tile[y][x] = in[(r0 + y) * cols + c0 + x];
    //   only where the input element exists: r0 + y < rows and c0 + x < cols.

    // TODO(2 of 3, ~1 line): a barrier. Each thread is about to read elements that other warps
    //   loaded; they must all be in shared memory first.

    // TODO(3 of 3, ~5 lines): store the tile, transposed. For the same j and y:
    //       out[(c0 + y) * rows + r0 + x] = tile[x][y];
    //   only where the *output* element exists: its row c0 + y < cols, its column r0 + x < rows.
    //   (Not the load's test: on a 31 x 33 matrix they differ.)
    //   Delete the (void) line when you are done.
    (void)in, (void)out, (void)rows, (void)cols, (void)r0, (void)c0, (void)x, (void)&tile,
        (void)kRowsPerThread;
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
