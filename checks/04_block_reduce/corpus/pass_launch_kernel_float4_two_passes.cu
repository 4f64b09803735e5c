// step: 04_block_reduce/05_fast_device_sum.cu
// emulated: PASS
//
// Correct: two passes launched with cudaLaunchKernel; pass 1 reads float4 packs and handles the
// n % 4 tail separately; pass 2 adds the partials in a fixed order (the same bits every call).
#include "block_reduce.cuh"

constexpr unsigned int kBlock = 256;
constexpr unsigned int kGrid = 96;

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
    const size_t tid = blockIdx.x * size_t{kBlock} + threadIdx.x;
    float s = 0.0f;
    for (size_t p = tid; p < n / 4; p += size_t{kGrid} * kBlock) {
        const float4 v = x4[p];
        s += (v.x + v.y) + (v.z + v.w);
    }
    if (tid < n % 4) s += x[n - n % 4 + tid];
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
    void* first[] = {&x, &n, &partials};
    cudaError_t err = cudaLaunchKernel(partials_kernel, dim3(kGrid), dim3(kBlock), first, 0, stream);
    if (err != cudaSuccess) return err;
    const float* p = partials;
    void* second[] = {&p, &sum};
    return cudaLaunchKernel(final_kernel, dim3(1), dim3(kBlock), second, 0, stream);
}
