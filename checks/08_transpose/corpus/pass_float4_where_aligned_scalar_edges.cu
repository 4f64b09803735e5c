// step: 08_transpose/05_wide_tiles.cu
// emulated: PASS
//
// Correct: one kernel for every shape, float4 wherever a side allows it. A block of 8 x 32
// threads owns a 32 x 32 tile; thread (q, y) moves floats 4q .. 4q + 3 of tile row y. The load
// uses one float4 when the input rows are 16-byte aligned (cols % 4 == 0) and the whole quad
// lies inside the matrix (then it does: c0 + 4q < cols and cols % 4 == 0 give c0 + 4q + 3 <
// cols); otherwise it falls back to four scalar loads, each with its own bounds test. The store
// does the same on the output side (rows % 4 == 0), reading four floats down a column of the
// tile. The tile has step 4's pitch of 33 words and scalar shared accesses.
#include "transpose.cuh"

constexpr unsigned int kTile = 32;
constexpr unsigned int kQuads = kTile / 4;  // threadIdx.x: float4 column of the tile

__global__ void __launch_bounds__(kQuads* kTile)
    transpose_quads_kernel(const float* __restrict__ in, float* __restrict__ out, size_t rows,
                           size_t cols, unsigned int tiles_across) {
    __shared__ float tile[kTile][kTile + 1];
    const size_t r0 = static_cast<size_t>(blockIdx.x / tiles_across) * kTile;
    const size_t c0 = static_cast<size_t>(blockIdx.x % tiles_across) * kTile;
    const unsigned int q = threadIdx.x, y = threadIdx.y, x = 4 * q;

    // Load: input row r0 + y, columns c0 + x .. c0 + x + 3.
    if (r0 + y < rows) {
        const size_t base = (r0 + y) * cols + c0 + x;
        if (cols % 4 == 0 && c0 + x < cols) {
            const float4 v = *reinterpret_cast<const float4*>(in + base);
            tile[y][x] = v.x;
            tile[y][x + 1] = v.y;
            tile[y][x + 2] = v.z;
            tile[y][x + 3] = v.w;
        } else {
            for (unsigned int e = 0; e < 4; ++e)
                if (c0 + x + e < cols) tile[y][x + e] = in[base + e];
        }
    }
    __syncthreads();

    // Store: output row c0 + y (input column), columns r0 + x .. r0 + x + 3 (input rows).
    if (c0 + y < cols) {
        const size_t base = (c0 + y) * rows + r0 + x;
        if (rows % 4 == 0 && r0 + x < rows) {
            *reinterpret_cast<float4*>(out + base) =
                make_float4(tile[x][y], tile[x + 1][y], tile[x + 2][y], tile[x + 3][y]);
        } else {
            for (unsigned int e = 0; e < 4; ++e)
                if (r0 + x + e < rows) out[base + e] = tile[x + e][y];
        }
    }
}

extern "C" cudaError_t transpose(const float* in, float* out, size_t rows, size_t cols,
                                 cudaStream_t stream) {
    const size_t tiles_across = (cols + kTile - 1) / kTile;
    const size_t tiles_down = (rows + kTile - 1) / kTile;
    transpose_quads_kernel<<<static_cast<unsigned int>(tiles_across * tiles_down),
                             dim3(kQuads, kTile), 0, stream>>>(
        in, out, rows, cols, static_cast<unsigned int>(tiles_across));
    return cudaGetLastError();
}
