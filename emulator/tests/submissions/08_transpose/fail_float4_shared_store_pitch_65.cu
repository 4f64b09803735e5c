// step: 08_transpose/05_wide_tiles.cu
// emulated: CRASH
// reason: MisalignedAddress
//
// Buggy: the reference's wide kernel with the four scalar shared stores of the load phase
// replaced by one float4 store "to match the float4 load". The tile keeps its pitch of 65
// words, so tile[y][x] is 16-byte aligned only in every fourth row: the store to row 1 faults
// with a misaligned address, on a GPU as in the emulator. (Shapes that are not multiples of 4
// take the scalar kernel and pass.)
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

    // Load phase: all four loads first, into registers, so that 64 bytes per thread are in
    // flight together; only then the shared stores (which would otherwise wait for each load).
    float4 v[kPasses];
#pragma unroll
    for (unsigned int k = 0; k < kPasses; ++k) {
        const size_t r = r0 + pass_row(t, k);
        const size_t q = c0 / 4 + pass_quad(t, k);  // float4 index within the row
        v[k] = r < rows && q < cols4 ? in4[r * cols4 + q] : make_float4(0.f, 0.f, 0.f, 0.f);
    }
#pragma unroll
    for (unsigned int k = 0; k < kPasses; ++k) {
        const unsigned int y = pass_row(t, k), x = 4 * pass_quad(t, k);
        // BUG: a 16-byte shared store into a tile whose rows are 65 words apart: row y starts
        // at byte 260 y, a multiple of 16 only when y % 4 == 0.
        *reinterpret_cast<float4*>(&tile[y][x]) = v[k];
    }

    __syncthreads();  // the whole tile is loaded before any column is read

    // Store phase: output row c0 + y (= input column), float4 q of it (= input rows r0 + 4q ..
    // r0 + 4q + 3): four floats down column y of the tile, one 16-byte store.
#pragma unroll
    for (unsigned int k = 0; k < kPasses; ++k) {
        const unsigned int y = pass_row(t, k), q = pass_quad(t, k);
        const size_t orow = c0 + y, oq = r0 / 4 + q;
        if (orow < cols && oq < rows4)
            out4[orow * rows4 + oq] = make_float4(tile[4 * q][y], tile[4 * q + 1][y],
                                                  tile[4 * q + 2][y], tile[4 * q + 3][y]);
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
