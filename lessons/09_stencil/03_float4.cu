// Lesson 09, step 3 — float4, several packs in flight, one wave.
//
// Teaches: lessons 01 to 04's recipe for streaming at the memory's speed, on a stencil. Each
// thread of one full wave of blocks walks the array in packs of four outputs (grid-stride):
//   - the pack's four inputs arrive as one float4, its 2R neighbours as scalar loads;
//   - kUnroll packs per iteration, all loads issued before any arithmetic;
//   - a window that reaches outside [0, n) is read cell by cell through load();
//   - the last n % 4 outputs are done one by one by the first threads of the grid.
// The radius is a template parameter (the window is an array in registers); the launcher
// compiles radius 1 and radius 8 and sends other radii to step 1's kernel. load(), step 1's
// kernel, apply() and the launcher are given. Read "Step 3" in lessons/09_stencil/README.md.
//
// Check:  ./cudalings check 09_stencil/03_float4
// Stuck:  ./cudalings hint 09_stencil/03_float4
//
// As given, this file compiles and runs but writes nothing at radius 1 and 8, so most tests
// fail.

#include "stencil.cuh"

constexpr unsigned int kBlockSize = 256;

// Packs per thread per iteration. Wider radii hold more registers per pack (4 + 2R floats),
// so they keep fewer packs in flight.
template <int R>
constexpr int kUnrollFor = R <= 2   ? 4
                           : R <= 4 ? 2
                                    : 1;

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

// Step 1's kernel, for the radii this step does not compile a float4 kernel for.
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

// The 4 + 2R inputs of pack p (outputs 4p .. 4p + 3): c[k] = x[4p - R + k].
template <int R>
__device__ __forceinline__ void load_window(const float* __restrict__ x, size_t n, size_t p,
                                            int boundary, float (&c)[4 + 2 * R]) {
    // TODO(1 of 3, ~16 lines): fill c[0 .. 4 + 2R) with x[4p - R .. 4p + 4 + R).
    //   - first = 4 * (long long)p - R, the position of c[0];
    //   - if the whole window is inside the array (first >= 0 and first + 4 + 2R <= n):
    //     v = reinterpret_cast<const float4*>(x)[p] gives c[R .. R + 3] (v.x, v.y, v.z, v.w),
    //     and R scalar loads on each side: c[j] = x[first + j], c[R + 4 + j] =
    //     x[first + R + 4 + j] for j = 0 .. R - 1 (#pragma unroll);
    //   - otherwise (only near the two ends of the array): c[k] = load(x, first + k, n,
    //     boundary) for every k.
    //   Delete the (void) line when you are done.
    (void)x, (void)n, (void)p, (void)boundary, (void)c;
}

// Output e of a window (0 <= e < 4): the 2R + 1 products, j = -R .. R. With R and e known at
// compile time, each weight is read straight from the kernel's parameters.
template <int R>
__device__ __forceinline__ float apply(const StencilWeights& w, const float (&c)[4 + 2 * R],
                                       int e) {
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k < 2 * R + 1; ++k) acc += w.w[k] * c[e + k];
    return acc;
}

template <int R>
__global__ void __launch_bounds__(kBlockSize)
    stencil_float4_kernel(const float* __restrict__ x, float* __restrict__ y, size_t n,
                          StencilWeights w, int boundary) {
    constexpr int kUnroll = kUnrollFor<R>;
    const size_t tid = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    const size_t n4 = n / 4;  // whole packs
    float4* y4 = reinterpret_cast<float4*>(y);

    // TODO(2 of 3, ~12 lines): the packs. A grid-stride loop, kUnroll packs per iteration, a
    //   grid apart: for (base = tid; base < n4; base += kUnroll * stride), with
    //   float c[kUnroll][4 + 2 * R]:
    //   - first loop over u (#pragma unroll): if base + u * stride < n4, load_window<R>(x, n,
    //     base + u * stride, boundary, c[u]);
    //   - then a second loop over u: if the pack exists, y4[base + u * stride] = make_float4(
    //     apply<R>(w, c[u], 0), ..., apply<R>(w, c[u], 3)).
    //   All loads first, then all sums: that is what keeps kUnroll packs in flight.

    // TODO(3 of 3, ~6 lines): the tail, outputs 4 * n4 .. n - 1 (at most 3): i = 4 * n4 + tid;
    //   if i < n, y[i] = the sum over j = -R .. R of w.w[R + j] * load(x, (long long)i + j, n,
    //   boundary).
    //   Delete the (void) line when you are done.
    (void)x, (void)y4, (void)w, (void)boundary, (void)tid, (void)stride, (void)n4, (void)kUnroll;
}

// `steps` launches of the radius-R kernel, alternating between the workspace and out so that
// the last one writes out (as in step 1). The grid is one wave: as many blocks as the GPU
// holds at once for this kernel (its registers per thread decide how many fit per SM), and
// no more than there are packs of 256.
template <int R>
cudaError_t run_steps(const float* in, float* out, size_t n, const StencilWeights& w, int boundary,
                      int steps, float* scratch, cudaStream_t stream) {
    int device = 0, num_sms = 0, blocks_per_sm = 0;
    cudaError_t err = cudaGetDevice(&device);
    if (err != cudaSuccess) return err;
    err = cudaDeviceGetAttribute(&num_sms, cudaDevAttrMultiProcessorCount, device);
    if (err != cudaSuccess) return err;
    err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, stencil_float4_kernel<R>,
                                                        kBlockSize, 0);
    if (err != cudaSuccess) return err;
    const size_t wave = static_cast<size_t>(num_sms) * blocks_per_sm;
    size_t needed = (n / 4 + kBlockSize - 1) / kBlockSize;
    if (needed == 0) needed = 1;  // n < 4: no packs, but a tail
    const unsigned int grid = static_cast<unsigned int>(needed < wave ? needed : wave);

    const float* src = in;
    for (int s = 0; s < steps; ++s) {
        float* dst = (steps - 1 - s) % 2 == 0 ? out : scratch;
        stencil_float4_kernel<R><<<grid, kBlockSize, 0, stream>>>(src, dst, n, w, boundary);
        src = dst;
    }
    return cudaGetLastError();
}

extern "C" cudaError_t stencil_1d(const float* in, float* out, size_t n, const float* weights,
                                  int radius, int boundary, int steps, void* workspace,
                                  size_t workspace_bytes, cudaStream_t stream) {
    if (!stencil_arguments_valid(n, weights, radius, boundary, steps, workspace, workspace_bytes))
        return cudaErrorInvalidValue;
    const StencilWeights w = stencil_weights(weights, radius);
    float* scratch = static_cast<float*>(workspace);
    if (radius == 1) return run_steps<1>(in, out, n, w, boundary, steps, scratch, stream);
    if (radius == kMaxRadius)
        return run_steps<kMaxRadius>(in, out, n, w, boundary, steps, scratch, stream);
    // Any other radius: step 1's kernel, one thread per element.
    const unsigned int grid = static_cast<unsigned int>((n + kBlockSize - 1) / kBlockSize);
    const float* src = in;
    for (int s = 0; s < steps; ++s) {
        float* dst = (steps - 1 - s) % 2 == 0 ? out : scratch;
        stencil_global_kernel<<<grid, kBlockSize, 0, stream>>>(src, dst, n, w, radius, boundary);
        src = dst;
    }
    return cudaGetLastError();
}
