// step: 09_stencil/02_shared_halo.cu
// emulated: PASS
//
// Correct: a fixed grid of at most 8 blocks of 512 threads walks the tiles (grid-stride over
// tile numbers). Tile and halo, 512 + 2R cells, are filled by one strided loop over the cells
// (k = t, t + 512, ...: the first 2R threads load a second cell each), so no thread is singled
// out for the halo. A block reuses its tile, so each iteration has two barriers: one after the
// fill, one after the outputs are computed (the next fill must not overwrite cells that slower
// warps still read). The loop bound is the same for the whole block, so every thread reaches
// both barriers.
#include "stencil.cuh"

constexpr unsigned int kBlock = 512;
constexpr unsigned int kMaxGrid = 8;

__device__ __forceinline__ float load(const float* __restrict__ x, long long i, size_t n,
                                      int boundary) {
    const long long len = static_cast<long long>(n);
    if (i >= 0 && i < len) return x[i];
    if (boundary == kZero) return 0.0f;
    if (boundary == kClamp) return x[i < 0 ? 0 : len - 1];
    return x[((i % len) + len) % len];
}

__global__ void __launch_bounds__(kBlock)
    stencil_tiles_kernel(const float* __restrict__ x, float* __restrict__ y, size_t n,
                         const __grid_constant__ StencilWeights w, int radius, int boundary) {
    __shared__ float s[kBlock + 2 * kMaxRadius];
    const unsigned int cells = kBlock + 2 * radius;
    const size_t tiles = (n + kBlock - 1) / kBlock;
    for (size_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        const long long first = static_cast<long long>(tile * kBlock) - radius;  // s[0]
        for (unsigned int k = threadIdx.x; k < cells; k += blockDim.x)
            s[k] = load(x, first + k, n, boundary);
        __syncthreads();
        const size_t i = tile * kBlock + threadIdx.x;
        if (i < n) {
            float acc = 0.0f;
            for (int k = 0; k <= 2 * radius; ++k) acc += w.w[k] * s[threadIdx.x + k];
            y[i] = acc;
        }
        __syncthreads();
    }
}

extern "C" cudaError_t stencil_1d(const float* in, float* out, size_t n, const float* weights,
                                  int radius, int boundary, int steps, void* workspace,
                                  size_t workspace_bytes, cudaStream_t stream) {
    if (!stencil_arguments_valid(n, weights, radius, boundary, steps, workspace, workspace_bytes))
        return cudaErrorInvalidValue;
    const StencilWeights w = stencil_weights(weights, radius);
    const size_t tiles = (n + kBlock - 1) / kBlock;
    const unsigned int grid = static_cast<unsigned int>(tiles < kMaxGrid ? tiles : kMaxGrid);
    float* scratch = static_cast<float*>(workspace);
    const float* src = in;
    for (int s = 0; s < steps; ++s) {
        float* dst = (steps - 1 - s) % 2 == 0 ? out : scratch;
        stencil_tiles_kernel<<<grid, kBlock, 0, stream>>>(src, dst, n, w, radius, boundary);
        src = dst;
    }
    return cudaGetLastError();
}
