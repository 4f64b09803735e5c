// Lesson 08, step 4 — the padded tile: no bank conflicts.
//
// Teaches: removing a bank conflict by changing the layout, not the algorithm. In step 3's
// 32 x 32 tile, element (y, x) is word 32y + x, in bank x: a whole column sits in one bank, and
// the store phase reads columns. Give every row one unused word at its end (a pitch of 33) and
// work out which banks a column lands in now. The load phase and the barrier are given; you
// declare the tile and write the store phase (the same as step 3's).
// Read "Step 4" in lessons/08_transpose/README.md first.
//
// Check:  ./cudalings check 08_transpose/04_padded_tile
// Stuck:  ./cudalings hint 08_transpose/04_padded_tile
//
// As given, this file compiles and runs but writes nothing, so every test fails.

#include "transpose.cuh"

constexpr unsigned int kTile = 32;      // a block owns a kTile x kTile tile
constexpr unsigned int kBlockRows = 8;  // the block is kTile x kBlockRows threads ...
constexpr unsigned int kRowsPerThread = kTile / kBlockRows;  // ... so each thread does 4 rows

__global__ void __launch_bounds__(kTile* kBlockRows)
    transpose_padded_tile_kernel(const float* __restrict__ in, float* __restrict__ out, size_t rows,
                                 size_t cols, unsigned int tiles_across) {
    // TODO(1 of 2, ~1 line + a comment): give each row of the tile one extra word, so that it
    //   is kTile x (kTile + 1) floats, and say in a comment which bank element (y, x) is in now.
    __shared__ float tile[kTile][kTile];

    const size_t r0 = static_cast<size_t>(blockIdx.x / tiles_across) * kTile;
    const size_t c0 = static_cast<size_t>(blockIdx.x % tiles_across) * kTile;
    const unsigned int x = threadIdx.x;

    // Load: rows of the input, coalesced; bounds of the input.
#pragma unroll
    for (unsigned int j = 0; j < kRowsPerThread; ++j) {
        const unsigned int y = threadIdx.y + j * kBlockRows;
        if (r0 + y < rows && c0 + x < cols) tile[y][x] = in[(r0 + y) * cols + c0 + x];
    }

    __syncthreads();  // every element of the tile is loaded before anyone reads a column

    // TODO(2 of 2, ~5 lines): the store phase, as in step 3: for each j, y = threadIdx.y +
    //   j * kBlockRows, out[(c0 + y) * rows + r0 + x] = tile[x][y] where c0 + y < cols and
    //   r0 + x < rows. Delete the (void) line when you are done.
    (void)out, (void)&tile;
}

extern "C" cudaError_t transpose(const float* in, float* out, size_t rows, size_t cols,
                                 cudaStream_t stream) {
    const size_t tiles_across = (cols + kTile - 1) / kTile;
    const size_t tiles_down = (rows + kTile - 1) / kTile;
    const dim3 block(kTile, kBlockRows);
    transpose_padded_tile_kernel<<<static_cast<unsigned int>(tiles_across * tiles_down), block, 0,
                                   stream>>>(in, out, rows, cols,
                                             static_cast<unsigned int>(tiles_across));
    return cudaGetLastError();
}
