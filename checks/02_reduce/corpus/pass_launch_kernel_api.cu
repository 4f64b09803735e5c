// step: 02_reduce/08_warp_shuffle.cu
// emulated: PASS
//
// Correct: the kernels are launched with cudaLaunchKernel and an argument array, not <<<>>>.
#include "reduce.cuh"

constexpr unsigned int kBlock = 256;

__device__ float warp_sum(float v) {
    for (int d = 16; d > 0; d >>= 1) v += __shfl_down_sync(0xffffffffu, v, d);
    return v;
}

__global__ void partials_kernel(const float* in, size_t n, float* out) {
    __shared__ float warp_sums[kBlock / 32];
    float sum = 0.0f;
    for (size_t i = blockIdx.x * size_t{kBlock} + threadIdx.x; i < n; i += size_t{gridDim.x} * kBlock)
        sum += in[i];
    sum = warp_sum(sum);
    if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = sum;
    __syncthreads();
    if (threadIdx.x < 32) {
        sum = threadIdx.x < kBlock / 32 ? warp_sums[threadIdx.x] : 0.0f;
        sum = warp_sum(sum);
        if (threadIdx.x == 0) out[blockIdx.x] = sum;
    }
}

extern "C" cudaError_t reduce_sum(const float* in, size_t n, float* out, void* workspace,
                                  size_t workspace_bytes, cudaStream_t stream) {
    (void)workspace_bytes;
    unsigned int blocks = static_cast<unsigned int>((n + kBlock - 1) / kBlock);
    if (blocks > 512) blocks = 512;
    float* partials = static_cast<float*>(workspace);
    size_t count = blocks;
    void* first[] = {&in, &n, &partials};
    cudaError_t err = cudaLaunchKernel(partials_kernel, dim3(blocks), dim3(kBlock), first, 0, stream);
    if (err != cudaSuccess) return err;
    const float* partials_in = partials;
    void* second[] = {&partials_in, &count, &out};
    return cudaLaunchKernel(partials_kernel, dim3(1), dim3(kBlock), second, 0, stream);
}
