// Lesson 08, step 4 — the padded tile: no bank conflicts (solution).
//
// Teaches: removing a bank conflict by changing the layout, not the algorithm. Step 3's tile
// is 32 x 32 floats: element (y, x) is word 32y + x, in bank (32y + x) mod 32 = x. A column
// (fixed x, y = 0..31) sits entirely in one bank, so the store phase's column read is a 32-way
// conflict. One unused word at the end of every row changes the pitch to 33:
//
//     word(y, x) = 33y + x,   bank = (33y + x) mod 32 = (y + x) mod 32
//
// Now the 32 elements of a column are in 32 different banks (y runs over 0..31), and the
// rows are still conflict-free (x runs over 0..31). The price: 32 words of 1056 unused (3%).
// Everything else is step 3.
//
// Check:  ./cudalings check 08_transpose/04_padded_tile
// Stuck:  ./cudalings hint 08_transpose/04_padded_tile

#include "transpose.cuh"

constexpr unsigned int kTile = 32;      // a block owns a kTile x kTile tile
constexpr unsigned int kBlockRows = 8;  // the block is kTile x kBlockRows threads ...
constexpr unsigned int kRowsPerThread = kTile / kBlockRows;  // ... so each thread does 4 rows

__global__ void __launch_bounds__(kTile* kBlockRows)
    transpose_padded_tile_kernel(const float* __restrict__ in, float* __restrict__ out, size_t rows,
                                 size_t cols, unsigned int tiles_across) {
    // A pitch of kTile + 1 words: column reads spread over all 32 banks (see the top).
    __shared__ float tile[kTile][kTile + 1];

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

    // Store: rows of the output, coalesced; bounds of the output. tile[x][y] is a column read,
    // now in 32 different banks.
#pragma unroll
    for (unsigned int j = 0; j < kRowsPerThread; ++j) {
        const unsigned int y = threadIdx.y + j * kBlockRows;
        if (c0 + y < cols && r0 + x < rows) out[(c0 + y) * rows + r0 + x] = tile[x][y];
    }
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
