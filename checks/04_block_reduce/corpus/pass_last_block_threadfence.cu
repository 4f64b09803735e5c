// step: 04_block_reduce/04_device_sum.cu
// emulated: PASS
//
// Correct, in one launch (the CUDA samples' threadFenceReduction): each block stores its partial,
// __threadfence() publishes it, an atomicInc counts the finished blocks, and the block that
// finishes last adds all partials in index order (the same bits on every call). It resets the
// counter for the next call.
#include "block_reduce.cuh"

constexpr unsigned int kBlock = 256;
constexpr unsigned int kGrid = 64;

__device__ float block_sum(float v) {
    __shared__ float s[kBlock];
    s[threadIdx.x] = v;
    __syncthreads();
    for (unsigned int k = kBlock / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
        __syncthreads();
    }
    const float total = s[0];
    __syncthreads();
    return total;
}

__global__ void sum_kernel(const float* x, size_t n, float* partials, unsigned* finished,
                           float* sum) {
    __shared__ bool last;
    float v = 0.0f;
    for (size_t i = blockIdx.x * size_t{kBlock} + threadIdx.x; i < n; i += size_t{kGrid} * kBlock)
        v += x[i];
    v = block_sum(v);
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = v;
        __threadfence();
        last = atomicInc(finished, kGrid) == kGrid - 1;
    }
    __syncthreads();
    if (last) {
        __threadfence();
        const float total = block_sum(threadIdx.x < kGrid ? partials[threadIdx.x] : 0.0f);
        if (threadIdx.x == 0) {
            *sum = total;
            *finished = 0;
        }
    }
}

__global__ void clear(unsigned* finished) { *finished = 0; }

extern "C" cudaError_t device_sum_deterministic(const float* x, size_t n, float* sum,
                                                void* workspace, size_t workspace_bytes,
                                                cudaStream_t stream) {
    (void)workspace_bytes;
    float* partials = static_cast<float*>(workspace);
    unsigned* finished = reinterpret_cast<unsigned*>(partials + kMaxBlocks);
    clear<<<1, 1, 0, stream>>>(finished);
    sum_kernel<<<kGrid, kBlock, 0, stream>>>(x, n, partials, finished, sum);
    return cudaGetLastError();
}
