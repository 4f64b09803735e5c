// step: 02_reduce/02_strided_index.cu
// emulated: CRASH
// reason: cudaErrorIllegalAddress
//
// Buggy: the strided index without its bound: `int index = 2 * s * tid; sdata[index] +=
// sdata[index + s];` for every tid, so the upper threads index far past the 256-float array
// (into other shared data, or past the block's shared memory on a GPU). A GPU
// faults on a shared access past the block's shared memory: CRASH, as the emulator (which
// names the array and the element).
#include "reduce.cuh"

constexpr unsigned int kBlock = 256;

__global__ void reduce_kernel(const float* in, size_t n, float* out) {
    __shared__ float sdata[kBlock];
    const unsigned int tid = threadIdx.x;
    const size_t i = static_cast<size_t>(blockIdx.x) * kBlock + tid;
    sdata[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = 1; s < kBlock; s *= 2) {
        const unsigned int index = 2 * s * tid;
        if (index < 2 * kBlock) sdata[index] += sdata[index + s];  // BUG: the bound is 2x too big
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
        reduce_kernel<<<static_cast<unsigned int>(blocks), kBlock, 0, stream>>>(in, n, dst);
        if (blocks == 1) break;
        in = dst;
        n = blocks;
    }
    return cudaGetLastError();
}
