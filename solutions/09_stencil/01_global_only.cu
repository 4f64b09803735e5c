// Lesson 09, step 1 — the stencil from global memory, one thread per element (solution).
//
// Teaches: a stencil's boundary is part of its definition, and it must be written down. Each
// thread computes one output,
//
//     y[i] = w[0] * x[i - R] + ... + w[R] * x[i] + ... + w[2R] * x[i + R],
//
// reading its 2R + 1 inputs straight from global memory through load(), which applies the
// boundary rule to positions outside [0, n). Neighbouring threads read overlapping windows:
// every input is read 2R + 1 times, but only the first read of a 128-byte line goes to DRAM;
// the others find it in the L1 or L2 cache. Several time steps are several launches,
// alternating between the workspace and `out`.
//
// Check:  ./cudalings check 09_stencil/01_global_only
// Stuck:  ./cudalings hint 09_stencil/01_global_only

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

// The weights arrive by value, as a kernel argument. The loop below indexes them with a
// run-time j; for an ordinary argument nvcc would then copy the whole struct into each
// thread's local memory first (an addressable copy), 68 bytes per thread. __grid_constant__
// promises the kernel never writes it, so it is read in place from the constant bank that
// holds kernel arguments, one broadcast per warp.
__global__ void __launch_bounds__(kBlockSize)
    stencil_global_kernel(const float* __restrict__ x, float* __restrict__ y, size_t n,
                          const __grid_constant__ StencilWeights w, int radius, int boundary) {
    const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc = 0.0f;
    // j = -R .. R; w.w[radius + j] is the weight of x[i + j].
    for (int j = -radius; j <= radius; ++j)
        acc += w.w[radius + j] * load(x, static_cast<long long>(i) + j, n, boundary);
    y[i] = acc;
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
        stencil_global_kernel<<<grid, kBlockSize, 0, stream>>>(src, dst, n, w, radius, boundary);
        src = dst;
    }
    return cudaGetLastError();
}
