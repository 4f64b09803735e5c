// step: 09_stencil/03_float4.cu
// emulated: PASS
//
// Correct: float4 through a shared tile instead of registers. A block of 256 threads owns 1024
// cells; thread t loads quad t of the tile with one float4 when the whole quad lies inside the
// array, and cell by cell through the boundary rule otherwise (the scalar tail of the last
// tile). The tile sits at offset kMaxRadius = 8 floats of a 16-byte-aligned shared array, so
// its quads are 16-byte aligned whatever the radius; the halos are loaded by subsets of
// threads: the first R threads the left one, the last R threads the right one. After the
// barrier each thread computes its four outputs from shared memory and stores them with one
// float4 where all four are inside the array, one by one otherwise. Any radius 1..8 runs the
// same kernel (the radius is a run-time value).
#include "stencil.cuh"

constexpr unsigned int kBlock = 256;
constexpr unsigned int kCells = 4 * kBlock;  // a tile
constexpr int kOff = kMaxRadius;             // s[kOff + k] = x[b0 + k]

__device__ __forceinline__ float load(const float* __restrict__ x, long long i, size_t n,
                                      int boundary) {
    const long long len = static_cast<long long>(n);
    if (i >= 0 && i < len) return x[i];
    if (boundary == kZero) return 0.0f;
    if (boundary == kClamp) return x[i < 0 ? 0 : len - 1];
    return x[((i % len) + len) % len];
}

__global__ void __launch_bounds__(kBlock)
    stencil_quad_kernel(const float* __restrict__ x, float* __restrict__ y, size_t n,
                        const __grid_constant__ StencilWeights w, int radius, int boundary) {
    __shared__ __align__(16) float s[kOff + kCells + kMaxRadius];
    const int t = static_cast<int>(threadIdx.x);
    const long long b0 = static_cast<long long>(blockIdx.x) * kCells;
    const long long len = static_cast<long long>(n);
    const long long q0 = b0 + 4 * t;  // this thread's quad: cells q0 .. q0 + 3

    if (q0 + 3 < len) {
        reinterpret_cast<float4*>(s + kOff)[t] = reinterpret_cast<const float4*>(x)[q0 / 4];
    } else {
        for (int e = 0; e < 4; ++e) s[kOff + 4 * t + e] = load(x, q0 + e, n, boundary);
    }
    if (t < radius) s[kOff - radius + t] = load(x, b0 - radius + t, n, boundary);
    const int r = t - (static_cast<int>(kBlock) - radius);  // 0 .. radius - 1 for the last threads
    if (r >= 0) s[kOff + kCells + r] = load(x, b0 + kCells + r, n, boundary);
    __syncthreads();

    float o[4];
    for (int e = 0; e < 4; ++e) {
        float acc = 0.0f;
        for (int j = -radius; j <= radius; ++j)
            acc += w.w[radius + j] * s[kOff + 4 * t + e + j];
        o[e] = acc;
    }
    if (q0 + 3 < len) {
        reinterpret_cast<float4*>(y)[q0 / 4] = make_float4(o[0], o[1], o[2], o[3]);
    } else {
        for (int e = 0; e < 4; ++e)
            if (q0 + e < len) y[q0 + e] = o[e];
    }
}

extern "C" cudaError_t stencil_1d(const float* in, float* out, size_t n, const float* weights,
                                  int radius, int boundary, int steps, void* workspace,
                                  size_t workspace_bytes, cudaStream_t stream) {
    if (!stencil_arguments_valid(n, weights, radius, boundary, steps, workspace, workspace_bytes))
        return cudaErrorInvalidValue;
    const StencilWeights w = stencil_weights(weights, radius);
    const unsigned int grid = static_cast<unsigned int>((n + kCells - 1) / kCells);
    float* scratch = static_cast<float*>(workspace);
    const float* src = in;
    for (int s = 0; s < steps; ++s) {
        float* dst = (steps - 1 - s) % 2 == 0 ? out : scratch;
        stencil_quad_kernel<<<grid, kBlock, 0, stream>>>(src, dst, n, w, radius, boundary);
        src = dst;
    }
    return cudaGetLastError();
}
