// Lesson 08, step 5 — 64 x 64 tiles with float4 on both sides.
//
// Teaches: the lessons of 01 and 02 again, on a transpose: bytes in flight and 16-byte
// accesses. A block of 256 threads owns a 64 x 64 tile:
//   - load phase: each thread issues four float4 loads (64 bytes) before it stores any of them
//     into shared memory. A group of 16 lanes reads 256 contiguous bytes of one input row;
//   - store phase: each thread reads four floats down a column of the tile, packs them into a
//     float4 and writes 16 bytes of an output row.
// The tile keeps step 4's padding. Shapes whose sides are not multiples of 4 cannot use
// float4 (rows would start unaligned) and take step 4's kernel, which is given.
// Read "Step 5" in lessons/08_transpose/README.md first.
//
// Check:  ./cudalings check 08_transpose/05_wide_tiles
// Stuck:  ./cudalings hint 08_transpose/05_wide_tiles
//
// As given, this file compiles and runs but writes nothing on shapes whose sides are multiples
// of 4, so most tests fail.

#include "transpose.cuh"

// ---------------------------------------------------------------- the float4 path
constexpr unsigned int kWide = 64;      // a block owns a kWide x kWide tile
constexpr unsigned int kThreads = 256;  // 1-D blocks
constexpr unsigned int kGroup = 16;     // lanes per 256-byte row of the tile (16 x float4)
constexpr unsigned int kPasses = kWide * kWide / 4 / kThreads;  // 4 float4 per thread per side
static_assert(kPasses == 4, "the index arithmetic below assumes four passes");

// Pass k of thread t covers tile row (t / 16) + 16 * k and float4 column t % 16: 16 lanes read
// one whole 256-byte row of the tile, a warp two rows, and the four passes cover rows 0..15,
// 16..31, 32..47 and 48..63. The same map is used for the output tile in the store phase.
__device__ __forceinline__ unsigned int pass_row(unsigned int t, unsigned int k) {
    return t / kGroup + (kThreads / kGroup) * k;
}
__device__ __forceinline__ unsigned int pass_quad(unsigned int t, unsigned int /*k*/) {
    return t % kGroup;
}

__global__ void __launch_bounds__(kThreads)
    transpose_wide_kernel(const float* __restrict__ in, float* __restrict__ out, size_t rows,
                          size_t cols, unsigned int tiles_across) {
    // Pitch 65: element (y, x) is in bank (y + x) mod 32.
    //   Load phase, one store instruction per component e: a warp has rows y0, y0 + 1 (one per
    //   group of 16 lanes) and columns 4q + e for q = 0..15, so banks y0 + g + 4q + e mod 32:
    //   q and q + 8 land in the same bank, a 2-way conflict.
    //   Store phase: the warp reads tile[4q + e][x] for q = 0..15 and two columns x0, x0 + 1:
    //   the same 2-way conflict. (8 lanes per row would have none, and measures slower: see
    //   "Step 5" in the README.)
    __shared__ float tile[kWide][kWide + 1];

    const size_t r0 = static_cast<size_t>(blockIdx.x / tiles_across) * kWide;
    const size_t c0 = static_cast<size_t>(blockIdx.x % tiles_across) * kWide;
    const unsigned int t = threadIdx.x;
    const size_t cols4 = cols / 4, rows4 = rows / 4;  // float4 per input row, per output row

    // TODO(1 of 2, ~11 lines): the load phase.
    //   - in4 = reinterpret_cast<const float4*>(in): the input as float4 (cudaMalloc aligned
    //     it; cols % 4 == 0 keeps every row aligned too);
    //   - float4 v[kPasses]; for each pass k: r = r0 + pass_row(t, k), q = c0 / 4 +
    //     pass_quad(t, k) (a float4 index within the row); v[k] = in4[r * cols4 + q] if
    //     r < rows and q < cols4, else zeros. All four loads first, under #pragma unroll, so
    //     that they are in flight together;
    //   - then, for each k: y = pass_row(t, k), x = 4 * pass_quad(t, k), and the four
    //     components into tile[y][x], tile[y][x + 1], ... (scalar stores: with a pitch of 65
    //     words most rows are not 16-byte aligned).

    __syncthreads();  // the whole tile is loaded before any column is read

    // TODO(2 of 2, ~9 lines): the store phase, through out4 = reinterpret_cast<float4*>(out).
    //   For each pass k: y = pass_row(t, k),
    //   q = pass_quad(t, k); the output row is orow = c0 + y (an input column) and its float4
    //   oq = r0 / 4 + q covers input rows r0 + 4q .. r0 + 4q + 3. If orow < cols and
    //   oq < rows4:  out4[orow * rows4 + oq] = the float4 of tile[4q][y], tile[4q + 1][y],
    //   tile[4q + 2][y], tile[4q + 3][y].
    //   Delete the (void) line when you are done.
    (void)in, (void)out, (void)r0, (void)c0, (void)t, (void)cols4, (void)rows4, (void)&tile;
}

// ---------------------------------------------------------------- shapes float4 cannot take
// Step 4's kernel, unchanged: 32 x 32 tiles, pitch 33, scalar accesses.
constexpr unsigned int kTile = 32;
constexpr unsigned int kBlockRows = 8;
constexpr unsigned int kRowsPerThread = kTile / kBlockRows;

__global__ void __launch_bounds__(kTile* kBlockRows)
    transpose_padded_tile_kernel(const float* __restrict__ in, float* __restrict__ out, size_t rows,
                                 size_t cols, unsigned int tiles_across) {
    __shared__ float tile[kTile][kTile + 1];
    const size_t r0 = static_cast<size_t>(blockIdx.x / tiles_across) * kTile;
    const size_t c0 = static_cast<size_t>(blockIdx.x % tiles_across) * kTile;
    const unsigned int x = threadIdx.x;
#pragma unroll
    for (unsigned int j = 0; j < kRowsPerThread; ++j) {
        const unsigned int y = threadIdx.y + j * kBlockRows;
        if (r0 + y < rows && c0 + x < cols) tile[y][x] = in[(r0 + y) * cols + c0 + x];
    }
    __syncthreads();
#pragma unroll
    for (unsigned int j = 0; j < kRowsPerThread; ++j) {
        const unsigned int y = threadIdx.y + j * kBlockRows;
        if (c0 + y < cols && r0 + x < rows) out[(c0 + y) * rows + r0 + x] = tile[x][y];
    }
}

extern "C" cudaError_t transpose(const float* in, float* out, size_t rows, size_t cols,
                                 cudaStream_t stream) {
    if (rows % 4 == 0 && cols % 4 == 0) {
        const size_t tiles_across = (cols + kWide - 1) / kWide;
        const size_t tiles_down = (rows + kWide - 1) / kWide;
        transpose_wide_kernel<<<static_cast<unsigned int>(tiles_across * tiles_down), kThreads, 0,
                                stream>>>(in, out, rows, cols,
                                          static_cast<unsigned int>(tiles_across));
    } else {
        const size_t tiles_across = (cols + kTile - 1) / kTile;
        const size_t tiles_down = (rows + kTile - 1) / kTile;
        const dim3 block(kTile, kBlockRows);
        transpose_padded_tile_kernel<<<static_cast<unsigned int>(tiles_across * tiles_down), block,
                                       0, stream>>>(in, out, rows, cols,
                                                    static_cast<unsigned int>(tiles_across));
    }
    return cudaGetLastError();
}
