// step: 09_stencil/02_shared_halo.cu
// emulated: MEMORY_ERROR
// reason: race
//
// Buggy: the right halo is stored at s[kBlockSize + t] instead of s[radius + kBlockSize + t]
// (the tile's offset forgotten on one side). The halo loaders then overwrite the tile's last
// `radius` cells, which threads kBlockSize - radius .. kBlockSize - 1 store too (two threads,
// one element, no order), and the real halo cells are never written: the last outputs of every
// block read a neighbour that is the wrong cell, or garbage.
#include "stencil.cuh"

constexpr unsigned int kBlockSize = 256;

// x[i] for any position i, inside [0, n) or not, by the boundary rule. i is signed: windows
// reach below 0.
__device__ __forceinline__ float load(const float* __restrict__ x, long long i, size_t n,
                                      int boundary) {
    const long long len = static_cast<long long>(n);
    if (i >= 0 && i < len) return x[i];  // the common case: one compare pair, one load
    if (boundary == kZero) return 0.0f;
    if (boundary == kClamp) return x[i < 0 ? 0 : len - 1];
    // kWrap: C++'s % keeps the sign of i (-1 % 5 == -1), so add len and take % again. Adding len
    // once (i + len) is not enough: with n = 3 and a halo of 8, i = -8 + 3 is still negative.
    return x[((i % len) + len) % len];
}

__global__ void __launch_bounds__(kBlockSize)
    stencil_shared_kernel(const float* __restrict__ x, float* __restrict__ y, size_t n,
                          const __grid_constant__ StencilWeights w, int radius, int boundary) {
    // Room for the largest radius; s[radius + t] holds x[b0 + t].
    __shared__ float s[kBlockSize + 2 * kMaxRadius];
    const unsigned int t = threadIdx.x;
    const long long b0 = static_cast<long long>(blockIdx.x) * kBlockSize;
    const long long i = b0 + t;

    // Every thread loads its own cell, including threads past n in the last block: load()
    // gives them the boundary's value, which the halo of the last real cell may need. The
    // first `radius` threads also load one halo cell on each side, through load() too: the
    // halo of the first and last blocks lies outside [0, n).
    s[radius + t] = load(x, i, n, boundary);
    if (t < static_cast<unsigned int>(radius)) {
        s[t] = load(x, b0 - radius + t, n, boundary);
        s[kBlockSize + t] = load(x, b0 + kBlockSize + t, n, boundary);  // BUG: radius + missing
    }
    // Every thread reads cells that other threads stored. No thread may return before this
    // barrier, not even one past n: all threads of the block must reach it.
    __syncthreads();

    if (i < static_cast<long long>(n)) {
        float acc = 0.0f;
        for (int j = -radius; j <= radius; ++j) acc += w.w[radius + j] * s[radius + t + j];
        y[i] = acc;
    }
}

extern "C" cudaError_t stencil_1d(const float* in, float* out, size_t n, const float* weights,
                                  int radius, int boundary, int steps, void* workspace,
                                  size_t workspace_bytes, cudaStream_t stream) {
    if (!stencil_arguments_valid(n, weights, radius, boundary, steps, workspace, workspace_bytes))
        return cudaErrorInvalidValue;
    const StencilWeights w = stencil_weights(weights, radius);  // host -> kernel argument
    const unsigned int grid = static_cast<unsigned int>((n + kBlockSize - 1) / kBlockSize);

    // `steps` launches. A step cannot write the array it reads (a thread would read a neighbour
    // that another thread already overwrote), so they alternate between two arrays. The last
    // one must write `out`: counting back from it, the targets are out, workspace, out, ...
    // The end of a kernel is the grid-wide barrier between two time steps.
    float* scratch = static_cast<float*>(workspace);
    const float* src = in;
    for (int s = 0; s < steps; ++s) {
        float* dst = (steps - 1 - s) % 2 == 0 ? out : scratch;
        stencil_shared_kernel<<<grid, kBlockSize, 0, stream>>>(src, dst, n, w, radius, boundary);
        src = dst;
    }
    return cudaGetLastError();
}
