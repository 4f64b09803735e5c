// step: 08_transpose/03_shared_tile.cu
// emulated: PASS
//
// Correct: the shared tile as a template on its side (16 here, blocks of 16 x 16 threads, one
// element per thread), held in dynamic shared memory whose pitch, kTile + 1 words, is chosen by
// the launcher (third launch parameter), and a cooperative-groups block barrier
// (cg::this_thread_block().sync()) between the coalesced load and the coalesced store. The grid
// is 1-D, tiles numbered row by row, as in the lesson.
#include <cooperative_groups.h>

#include "transpose.cuh"

namespace cg = cooperative_groups;

template <unsigned int kTile>
__global__ void __launch_bounds__(kTile* kTile)
    transpose_tile_kernel(const float* __restrict__ in, float* __restrict__ out, size_t rows,
                          size_t cols, unsigned int tiles_across, unsigned int pitch) {
    extern __shared__ float tile[];  // kTile rows of `pitch` floats
    const cg::thread_block block = cg::this_thread_block();
    const size_t r0 = static_cast<size_t>(blockIdx.x / tiles_across) * kTile;
    const size_t c0 = static_cast<size_t>(blockIdx.x % tiles_across) * kTile;
    const unsigned int x = block.thread_index().x, y = block.thread_index().y;

    if (r0 + y < rows && c0 + x < cols) tile[y * pitch + x] = in[(r0 + y) * cols + c0 + x];
    block.sync();
    if (c0 + y < cols && r0 + x < rows) out[(c0 + y) * rows + r0 + x] = tile[x * pitch + y];
}

template <unsigned int kTile>
cudaError_t launch(const float* in, float* out, size_t rows, size_t cols, cudaStream_t stream) {
    const size_t tiles_across = (cols + kTile - 1) / kTile;
    const size_t tiles_down = (rows + kTile - 1) / kTile;
    const unsigned int pitch = kTile + 1;
    transpose_tile_kernel<kTile><<<static_cast<unsigned int>(tiles_across * tiles_down),
                                   dim3(kTile, kTile), kTile * pitch * sizeof(float), stream>>>(
        in, out, rows, cols, static_cast<unsigned int>(tiles_across), pitch);
    return cudaGetLastError();
}

extern "C" cudaError_t transpose(const float* in, float* out, size_t rows, size_t cols,
                                 cudaStream_t stream) {
    return launch<16>(in, out, rows, cols, stream);
}
