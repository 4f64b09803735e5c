// step: 02_reduce/09_vectorized_loads.cu
// emulated: PASS
//
// Correct: float4 loads in a grid-stride loop over the whole packs, the n % 4 tail by the first
// threads, and a block reduction by shuffles.
#include "reduce.cuh"

constexpr unsigned int kBlock = 256;

__device__ float warp_sum(float v) {
    for (int d = 16; d > 0; d >>= 1) v += __shfl_xor_sync(0xffffffffu, v, d);
    return v;
}

__global__ void partials_kernel(const float* __restrict__ in, size_t n, float* __restrict__ out) {
    __shared__ float sums[kBlock / 32];
    const size_t tid = blockIdx.x * size_t{kBlock} + threadIdx.x;
    const size_t stride = size_t{gridDim.x} * kBlock;
    const float4* in4 = reinterpret_cast<const float4*>(in);
    float acc = 0.0f;
    for (size_t p = tid; p < n / 4; p += stride) {
        const float4 v = in4[p];
        acc += (v.x + v.y) + (v.z + v.w);
    }
    if (tid < n % 4) acc += in[n / 4 * 4 + tid];
    acc = warp_sum(acc);
    if (threadIdx.x % 32 == 0) sums[threadIdx.x / 32] = acc;
    __syncthreads();
    if (threadIdx.x < 32) {
        acc = warp_sum(threadIdx.x < kBlock / 32 ? sums[threadIdx.x] : 0.0f);
        if (threadIdx.x == 0) out[blockIdx.x] = acc;
    }
}

extern "C" cudaError_t reduce_sum(const float* in, size_t n, float* out, void* workspace,
                                  size_t workspace_bytes, cudaStream_t stream) {
    (void)workspace_bytes;
    size_t blocks = (n / 4 + kBlock - 1) / kBlock;
    if (blocks < 1) blocks = 1;
    if (blocks > 256) blocks = 256;
    float* partials = static_cast<float*>(workspace);
    partials_kernel<<<static_cast<unsigned int>(blocks), kBlock, 0, stream>>>(in, n, partials);
    partials_kernel<<<1, kBlock, 0, stream>>>(partials, blocks, out);
    return cudaGetLastError();
}
