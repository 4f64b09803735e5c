// step: 02_reduce/03_sequential_addressing.cu
// emulated: CRASH
// reason: cudaErrorIllegalAddress
//
// Buggy: the launch gives the dynamic shared array `kBlock` *bytes*, not kBlock floats: the
// kernel uses four times what it was given. A GPU
// faults on a shared access past the block's shared memory: CRASH, as the emulator (which
// names the array and the element).
#include "reduce.cuh"

constexpr unsigned int kBlock = 256;

__global__ void reduce_kernel(const float* in, size_t n, float* out) {
    extern __shared__ float sdata[];
    const unsigned int tid = threadIdx.x;
    const size_t i = static_cast<size_t>(blockIdx.x) * kBlock + tid;
    sdata[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = kBlock / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}

extern "C" cudaError_t reduce_sum(const float* in, size_t n, float* out, void* workspace,
                                  size_t workspace_bytes, cudaStream_t stream) {
    float* buffers[2] = {static_cast<float*>(workspace),
                         static_cast<float*>(workspace) + workspace_bytes / sizeof(float) / 2};
    for (int pass = 0;; ++pass) {
        const size_t blocks = (n + kBlock - 1) / kBlock;
        float* dst = blocks == 1 ? out : buffers[pass % 2];
        reduce_kernel<<<static_cast<unsigned int>(blocks), kBlock, kBlock, stream>>>(in, n, dst);  // BUG
        if (blocks == 1) break;
        in = dst;
        n = blocks;
    }
    return cudaGetLastError();
}
