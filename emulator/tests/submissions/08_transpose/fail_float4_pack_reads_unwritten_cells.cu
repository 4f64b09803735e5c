// step: 08_transpose/05_wide_tiles.cu
// emulated: MEMORY_ERROR
// reason: uninitialised-shared
//
// Right numbers, reported anyway: the reference's 64 x 64 float4 kernel, written load-all-then-store on both sides:
// the load phase stores into the tile only the cells inside the matrix (no zero fill), and the
// store phase packs the four floats of an output quad from the tile *before* its bounds test,
// then stores the pack only if the quad lies inside the output. In a partial edge tile the pack
// of an outside quad reads tile cells that no thread wrote; those values are discarded, never
// stored, and every value that is stored was loaded before the barrier. The emulator reports
// every read of a shared cell no thread wrote (it cannot tell a discarded value from a used one),
// on a GPU too through the hazard pass: zero-fill the tile, or test the bounds before the read.
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
    const float4* in4 = reinterpret_cast<const float4*>(in);
    float4* out4 = reinterpret_cast<float4*>(out);

    // Load phase: all four loads first, into registers; only the cells inside the matrix are
    // then stored into the tile.
    float4 v[kPasses];
#pragma unroll
    for (unsigned int k = 0; k < kPasses; ++k) {
        const size_t r = r0 + pass_row(t, k);
        const size_t q = c0 / 4 + pass_quad(t, k);
        if (r < rows && q < cols4) v[k] = in4[r * cols4 + q];
    }
#pragma unroll
    for (unsigned int k = 0; k < kPasses; ++k) {
        const size_t r = r0 + pass_row(t, k);
        const size_t q = c0 / 4 + pass_quad(t, k);
        if (r < rows && q < cols4) {
            const unsigned int y = pass_row(t, k), x = 4 * pass_quad(t, k);
            tile[y][x + 0] = v[k].x;
            tile[y][x + 1] = v[k].y;
            tile[y][x + 2] = v[k].z;
            tile[y][x + 3] = v[k].w;
        }
    }

    __syncthreads();  // the whole tile is loaded before any column is read

    // Store phase: the four floats down column y of the tile are packed first, then stored
    // where the output quad lies inside the matrix. In a partial tile the pack may hold cells
    // outside the matrix, which no thread loaded: they are never stored.
#pragma unroll
    for (unsigned int k = 0; k < kPasses; ++k) {
        const unsigned int y = pass_row(t, k), q = pass_quad(t, k);
        const float4 w = make_float4(tile[4 * q][y], tile[4 * q + 1][y], tile[4 * q + 2][y],
                                     tile[4 * q + 3][y]);
        const size_t orow = c0 + y, oq = r0 / 4 + q;
        if (orow < cols && oq < rows4) out4[orow * rows4 + oq] = w;
    }
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
