// Lesson 08, step 2 — the naive transpose, walking the output's rows.
//
// Teaches: which side of a transpose to make coalesced. Step 1 read rows and wrote columns;
// this step does the opposite. Each block owns a 32 x 32 tile of the *output*, and
// neighbouring lanes take neighbouring output columns, which are input rows r:
//
//     out[c * rows + r] = in[r * cols + c]     (r follows the lane)
//
// The writes are now coalesced and the reads strided. Time it against step 1: same work,
// same bytes, very different times. Read "Step 2" in lessons/08_transpose/README.md first.
//
// Check:  ./cudalings check 08_transpose/02_naive_columns
// Stuck:  ./cudalings hint 08_transpose/02_naive_columns
//
// As given, this file compiles and runs but writes nothing, so every test fails.

#include "transpose.cuh"

constexpr unsigned int kTile = 32;      // a block owns a kTile x kTile tile of the output
constexpr unsigned int kBlockRows = 8;  // the block is kTile x kBlockRows threads ...
constexpr unsigned int kRowsPerThread = kTile / kBlockRows;  // ... so each thread does 4 rows

__global__ void __launch_bounds__(kTile* kBlockRows)
    transpose_naive_columns_kernel(const float* __restrict__ in, float* __restrict__ out,
                                   size_t rows, size_t cols, unsigned int tiles_across) {
    // Tiles of the output (cols x rows), numbered row by row.
    const unsigned int tile_row = blockIdx.x / tiles_across;
    const unsigned int tile_col = blockIdx.x % tiles_across;

    // TODO(1 of 2, ~6 lines): copy this thread's four elements, the lane walking an output row.
    //   - r = tile_col * kTile + threadIdx.x      (output column = input row: follows the lane)
    //     c0 = tile_row * kTile + threadIdx.y     (output row = input column), both size_t;
    //   - for j = 0 .. kRowsPerThread - 1, c = c0 + j * kBlockRows:
    //         out[c * rows + r] = in[r * cols + c];
    //   - bounds: r < rows and c < cols.
    //   Delete the (void) line when you are done.
    (void)in, (void)out, (void)rows, (void)cols, (void)tile_row, (void)tile_col,
        (void)kRowsPerThread;
}

extern "C" cudaError_t transpose(const float* in, float* out, size_t rows, size_t cols,
                                 cudaStream_t stream) {
    // TODO(2 of 2, ~2 lines): the grid now covers the output, a cols x rows matrix. Set
    //   tiles_across to the number of tiles over the output's width (rows) and tiles_down to
    //   the number over its height (cols). One dimension for all tiles, as in step 1.
    const size_t tiles_across = 1;
    const size_t tiles_down = 1;
    const dim3 block(kTile, kBlockRows);
    transpose_naive_columns_kernel<<<static_cast<unsigned int>(tiles_across * tiles_down), block, 0,
                                     stream>>>(in, out, rows, cols,
                                               static_cast<unsigned int>(tiles_across));
    return cudaGetLastError();
}
