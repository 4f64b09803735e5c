// step: 09_stencil/02_shared_halo.cu
// emulated: PASS
//
// Correct: the shared tile with its halo, 128-thread blocks, the tile in dynamic shared memory
// sized for the radius at launch (128 + 2R floats), and the two halos loaded by different
// subsets of threads: the first R threads load the left halo (the R cells before the block),
// the last R threads the right one (thread t, t >= 128 - R, loads x[i + R] into s[t + 2R]).
// Threads past n still store their cell (the boundary's value) and reach the barrier: the last
// R threads of the last block are such threads when n is not a multiple of 128.
#include "stencil.cuh"

constexpr unsigned int kBlock = 128;

__device__ __forceinline__ float load(const float* __restrict__ x, long long i, size_t n,
                                      int boundary) {
    const long long len = static_cast<long long>(n);
    if (i >= 0 && i < len) return x[i];
    if (boundary == kZero) return 0.0f;
    if (boundary == kClamp) return x[i < 0 ? 0 : len - 1];
    return x[((i % len) + len) % len];
}

__global__ void __launch_bounds__(kBlock)
    stencil_halo_kernel(const float* __restrict__ x, float* __restrict__ y, size_t n,
                        const __grid_constant__ StencilWeights w, int radius, int boundary) {
    extern __shared__ float s[];  // s[radius + t] = x[b0 + t], t in [-radius, kBlock + radius)
    const int t = static_cast<int>(threadIdx.x);
    const long long i = static_cast<long long>(blockIdx.x) * kBlock + t;

    s[radius + t] = load(x, i, n, boundary);
    if (t < radius) s[t] = load(x, i - radius, n, boundary);
    if (t >= static_cast<int>(kBlock) - radius) s[t + 2 * radius] = load(x, i + radius, n, boundary);
    __syncthreads();

    if (i < static_cast<long long>(n)) {
        float acc = 0.0f;
        for (int k = 0; k <= 2 * radius; ++k) acc += w.w[k] * s[t + k];
        y[i] = acc;
    }
}

extern "C" cudaError_t stencil_1d(const float* in, float* out, size_t n, const float* weights,
                                  int radius, int boundary, int steps, void* workspace,
                                  size_t workspace_bytes, cudaStream_t stream) {
    if (!stencil_arguments_valid(n, weights, radius, boundary, steps, workspace, workspace_bytes))
        return cudaErrorInvalidValue;
    const StencilWeights w = stencil_weights(weights, radius);
    const unsigned int grid = static_cast<unsigned int>((n + kBlock - 1) / kBlock);
    const size_t shared_bytes = (kBlock + 2 * radius) * sizeof(float);
    float* scratch = static_cast<float*>(workspace);
    const float* src = in;
    for (int s = 0; s < steps; ++s) {
        float* dst = (steps - 1 - s) % 2 == 0 ? out : scratch;
        stencil_halo_kernel<<<grid, kBlock, shared_bytes, stream>>>(src, dst, n, w, radius,
                                                                   boundary);
        src = dst;
    }
    return cudaGetLastError();
}
