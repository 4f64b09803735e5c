// step: 09_stencil/03_float4.cu
// emulated: PASS
//
// Correct: the README's shuffle variant of step 3 at radius 1 (other radii take step 1's
// kernel). Each lane loads one float4 pack; its left neighbour is the .w of lane - 1's pack
// (__shfl_up_sync), its right one the .x of lane + 1's (__shfl_down_sync). Lane 0, lane 31, and
// a lane whose neighbour holds no pack (past the last whole pack) read theirs from memory
// through the boundary rule. The pack loop is warp-uniform (a warp walks 32 consecutive packs,
// lanes past the last pack join with zeros and store nothing), so every lane reaches the
// full-mask shuffles. The last n % 4 outputs are done one by one by the first threads.
#include "stencil.cuh"

constexpr unsigned int kBlock = 256;
constexpr unsigned int kFull = 0xffffffffu;

__device__ __forceinline__ float load(const float* __restrict__ x, long long i, size_t n,
                                      int boundary) {
    const long long len = static_cast<long long>(n);
    if (i >= 0 && i < len) return x[i];
    if (boundary == kZero) return 0.0f;
    if (boundary == kClamp) return x[i < 0 ? 0 : len - 1];
    return x[((i % len) + len) % len];
}

__global__ void __launch_bounds__(kBlock)
    stencil_global_kernel(const float* __restrict__ x, float* __restrict__ y, size_t n,
                          const __grid_constant__ StencilWeights w, int radius, int boundary) {
    const size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x;
    if (i >= n) return;
    float acc = 0.0f;
    for (int j = -radius; j <= radius; ++j)
        acc += w.w[radius + j] * load(x, static_cast<long long>(i) + j, n, boundary);
    y[i] = acc;
}

__global__ void __launch_bounds__(kBlock)
    stencil_shfl_kernel(const float* __restrict__ x, float* __restrict__ y, size_t n,
                        StencilWeights w, int boundary) {
    const unsigned int lane = threadIdx.x % 32;
    const size_t tid = blockIdx.x * size_t{blockDim.x} + threadIdx.x;
    const size_t n4 = n / 4;
    const size_t stride = size_t{gridDim.x} * blockDim.x;  // packs per grid step
    const float4* x4 = reinterpret_cast<const float4*>(x);
    float4* y4 = reinterpret_cast<float4*>(y);
    const float a = w.w[0], b = w.w[1], c = w.w[2];

    for (size_t base = tid - lane; base < n4; base += stride) {  // base: the warp's first pack
        const size_t p = base + lane;
        const bool mine = p < n4;
        const float4 v = mine ? x4[p] : make_float4(0.f, 0.f, 0.f, 0.f);
        float left = __shfl_up_sync(kFull, v.w, 1);
        float right = __shfl_down_sync(kFull, v.x, 1);
        if (!mine) continue;  // after the shuffles: nothing to store
        if (lane == 0) left = load(x, 4 * static_cast<long long>(p) - 1, n, boundary);
        if (lane == 31 || p + 1 >= n4)
            right = load(x, 4 * static_cast<long long>(p) + 4, n, boundary);
        y4[p] = make_float4(a * left + b * v.x + c * v.y, a * v.x + b * v.y + c * v.z,
                            a * v.y + b * v.z + c * v.w, a * v.z + b * v.w + c * right);
    }

    const size_t i = 4 * n4 + tid;  // the tail: at most 3 outputs
    if (i < n) {
        const long long k = static_cast<long long>(i);
        y[i] = a * load(x, k - 1, n, boundary) + b * x[i] + c * load(x, k + 1, n, boundary);
    }
}

extern "C" cudaError_t stencil_1d(const float* in, float* out, size_t n, const float* weights,
                                  int radius, int boundary, int steps, void* workspace,
                                  size_t workspace_bytes, cudaStream_t stream) {
    if (!stencil_arguments_valid(n, weights, radius, boundary, steps, workspace, workspace_bytes))
        return cudaErrorInvalidValue;
    const StencilWeights w = stencil_weights(weights, radius);
    float* scratch = static_cast<float*>(workspace);
    const float* src = in;
    for (int s = 0; s < steps; ++s) {
        float* dst = (steps - 1 - s) % 2 == 0 ? out : scratch;
        if (radius == 1) {
            size_t blocks = (n / 4 + kBlock - 1) / kBlock;
            if (blocks == 0) blocks = 1;  // n < 4: only the tail
            if (blocks > 1024) blocks = 1024;
            stencil_shfl_kernel<<<static_cast<unsigned int>(blocks), kBlock, 0, stream>>>(
                src, dst, n, w, boundary);
        } else {
            stencil_global_kernel<<<static_cast<unsigned int>((n + kBlock - 1) / kBlock), kBlock,
                                    0, stream>>>(src, dst, n, w, radius, boundary);
        }
        src = dst;
    }
    return cudaGetLastError();
}
