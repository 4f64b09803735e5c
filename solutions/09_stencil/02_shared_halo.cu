// Lesson 09, step 2 — a shared-memory tile with a halo (solution).
//
// Teaches: the halo layout, and that shared memory is not automatically faster. Each block
// of 256 threads copies its 256 inputs plus R more on each side (the halo) into shared
// memory, once, then computes all 256 outputs from there:
//
//     shared s:  [ R halo cells | 256 cells of the block | R halo cells ]
//                  x[b0 - R ..]   x[b0 .. b0 + 255]        x[b0 + 256 ..]
//
// Every input now comes from DRAM into shared memory once per block (plus 2R halo cells), and
// the 2R + 1 reads per output are shared-memory reads. At radius 1 that buys nothing on an
// H200: step 1's neighbour reads were already L1 hits, and this step adds a barrier and the
// shared stores. At radius 8 (17 reads per output) the shared copy wins; the README shows both.
//
// Check:  ./cudalings check 09_stencil/02_shared_halo
// Stuck:  ./cudalings hint 09_stencil/02_shared_halo

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
        s[radius + kBlockSize + t] = load(x, b0 + kBlockSize + t, n, boundary);
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
