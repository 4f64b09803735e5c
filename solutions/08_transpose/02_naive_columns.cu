// Lesson 08, step 2 — the naive transpose, walking the output's rows (solution).
//
// Teaches: which side of a transpose to make coalesced. Step 1 read rows and wrote columns;
// this step does the opposite. Each block owns a 32 x 32 tile of the *output*, and
// neighbouring lanes take neighbouring output columns (= input rows r):
//
//     out[c * rows + r] = in[r * cols + c]     (r follows the lane)
//
// Now the writes are coalesced (32 consecutive floats per warp) and the reads are strided.
// Same work, same bytes, no shared memory, and yet several times faster than step 1 on an
// H200. The likely reason: a strided *load* fetches a 32-byte sector of which it uses 4 bytes,
// but the other 28 are the next 7 columns, which the same block reads a moment later
// (threadIdx.y and the loop over j), so they are found in the L1 cache. A strided *store* has
// no such luck: every 4-byte write goes to the L2 as its own partial-sector write, 32 of them
// per warp instruction instead of 4; the L1 does not gather stores.
//
// Check:  ./cudalings check 08_transpose/02_naive_columns
// Stuck:  ./cudalings hint 08_transpose/02_naive_columns

#include "transpose.cuh"

constexpr unsigned int kTile = 32;      // a block owns a kTile x kTile tile of the output
constexpr unsigned int kBlockRows = 8;  // the block is kTile x kBlockRows threads ...
constexpr unsigned int kRowsPerThread = kTile / kBlockRows;  // ... so each thread does 4 rows

__global__ void __launch_bounds__(kTile* kBlockRows)
    transpose_naive_columns_kernel(const float* __restrict__ in, float* __restrict__ out,
                                   size_t rows, size_t cols, unsigned int tiles_across) {
    // Tiles of the output (cols x rows), numbered row by row: tiles_across = ceil(rows / 32).
    const unsigned int tile_row = blockIdx.x / tiles_across;
    const unsigned int tile_col = blockIdx.x % tiles_across;

    // The output's column is the input's row, and it follows the lane: coalesced stores.
    const size_t r = static_cast<size_t>(tile_col) * kTile + threadIdx.x;
    const size_t c0 = static_cast<size_t>(tile_row) * kTile + threadIdx.y;
    if (r >= rows) return;

#pragma unroll
    for (unsigned int j = 0; j < kRowsPerThread; ++j) {
        const size_t c = c0 + j * kBlockRows;
        if (c < cols) out[c * rows + r] = in[r * cols + c];
    }
}

extern "C" cudaError_t transpose(const float* in, float* out, size_t rows, size_t cols,
                                 cudaStream_t stream) {
    // The grid covers the output, cols x rows: tile columns over its width `rows`, tile rows
    // over its height `cols`. One dimension for all tiles, as in step 1.
    const size_t tiles_across = (rows + kTile - 1) / kTile;
    const size_t tiles_down = (cols + kTile - 1) / kTile;
    const dim3 block(kTile, kBlockRows);
    transpose_naive_columns_kernel<<<static_cast<unsigned int>(tiles_across * tiles_down), block, 0,
                                     stream>>>(in, out, rows, cols,
                                               static_cast<unsigned int>(tiles_across));
    return cudaGetLastError();
}
