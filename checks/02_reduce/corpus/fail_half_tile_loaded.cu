// step: 02_reduce/04_first_add_during_load.cu
// emulated: MEMORY_ERROR
// reason: uninitialised
//
// Buggy: the first add during load stores its value in sdata[tid] only for tid < 128 ("the
// upper half was folded in"), but the tree still starts at s = 128 and reads sdata[128..255],
// which nobody wrote: garbage (NaN on the emulator, whatever was there on a GPU).
#include "reduce.cuh"

constexpr unsigned int kBlock = 256;

__global__ void reduce_kernel(const float* in, size_t n, float* out) {
    __shared__ float sdata[kBlock];
    const unsigned int tid = threadIdx.x;
    const size_t i = static_cast<size_t>(blockIdx.x) * (2 * kBlock) + tid;
    float v = (i < n ? in[i] : 0.0f) + (i + kBlock < n ? in[i + kBlock] : 0.0f);
    if (tid < kBlock / 2) sdata[tid] = v;  // BUG: the upper half is never stored
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
        const size_t blocks = (n + 2 * kBlock - 1) / (2 * kBlock);
        float* dst = blocks == 1 ? out : buffers[pass % 2];
        reduce_kernel<<<static_cast<unsigned int>(blocks), kBlock, 0, stream>>>(in, n, dst);
        if (blocks == 1) break;
        in = dst;
        n = blocks;
    }
    return cudaGetLastError();
}
