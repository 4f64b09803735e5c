// step: 04_block_reduce/05_fast_device_sum.cu
// emulated: MEMORY_ERROR
// reason: bounds
//
// Buggy: the float4 loop runs over ceil(n / 4) packs and masks the components past n after the
// load, so the last pack is read whole: up to 3 floats past the end of x.
#include "block_reduce.cuh"

constexpr unsigned int kBlock = 256;
constexpr unsigned int kGrid = 128;

__device__ float block_sum(float v) {
    __shared__ float sums[kBlock / 32];
    for (int d = 16; d > 0; d /= 2) v += __shfl_down_sync(0xffffffffu, v, d);
    if (threadIdx.x % 32 == 0) sums[threadIdx.x / 32] = v;
    __syncthreads();
    v = threadIdx.x < kBlock / 32 ? sums[threadIdx.x] : 0.0f;
    if (threadIdx.x < 32)
        for (int d = 16; d > 0; d /= 2) v += __shfl_down_sync(0xffffffffu, v, d);
    return v;
}

__global__ void partials_kernel(const float* x, size_t n, float* partials) {
    const float4* x4 = reinterpret_cast<const float4*>(x);
    float s = 0.0f;
    for (size_t p = blockIdx.x * size_t{kBlock} + threadIdx.x; p < (n + 3) / 4;
         p += size_t{kGrid} * kBlock) {
        const float4 v = x4[p];  // BUG: the last pack may stick out past n
        const size_t i = 4 * p;
        s += v.x + (i + 1 < n ? v.y : 0.0f) + (i + 2 < n ? v.z : 0.0f) + (i + 3 < n ? v.w : 0.0f);
    }
    s = block_sum(s);
    if (threadIdx.x == 0) partials[blockIdx.x] = s;
}

__global__ void final_kernel(const float* partials, float* sum) {
    const float s = block_sum(threadIdx.x < kGrid ? partials[threadIdx.x] : 0.0f);
    if (threadIdx.x == 0) *sum = s;
}

extern "C" cudaError_t device_sum_fast(const float* x, size_t n, float* sum, void* workspace,
                                       size_t workspace_bytes, cudaStream_t stream) {
    (void)workspace_bytes;
    float* partials = static_cast<float*>(workspace);
    partials_kernel<<<kGrid, kBlock, 0, stream>>>(x, n, partials);
    final_kernel<<<1, kBlock, 0, stream>>>(partials, sum);
    return cudaGetLastError();
}
