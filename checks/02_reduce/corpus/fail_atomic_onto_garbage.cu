// step: 02_reduce/08_warp_shuffle.cu
// emulated: WRONG
//
// Buggy: each block atomicAdds its sum to *out, which nobody set to 0: the checker's NaN plus
// anything is NaN (a NaN the kernel wrote: on a GPU and on the emulator the atomic's result is
// the canonical NaN, so the report says "NaN", not "never written").
#include "reduce.cuh"

constexpr unsigned int kBlock = 256;

__device__ float warp_sum(float v) {
    for (int d = 16; d > 0; d >>= 1) v += __shfl_down_sync(0xffffffffu, v, d);
    return v;
}

__global__ void reduce_kernel(const float* in, size_t n, float* out) {
    const size_t i = blockIdx.x * size_t{kBlock} + threadIdx.x;
    const float v = warp_sum(i < n ? in[i] : 0.0f);
    if (threadIdx.x % 32 == 0) atomicAdd(out, v);  // BUG: *out is never zeroed
}

extern "C" cudaError_t reduce_sum(const float* in, size_t n, float* out, void* workspace,
                                  size_t workspace_bytes, cudaStream_t stream) {
    (void)workspace, (void)workspace_bytes;
    reduce_kernel<<<static_cast<unsigned int>((n + kBlock - 1) / kBlock), kBlock, 0, stream>>>(
        in, n, out);
    return cudaGetLastError();
}
