// step: 04_block_reduce/04_device_sum.cu
// emulated: MEMORY_ERROR
// reason: race
//
// Buggy: threadFenceReduction without the __threadfence() between a block's partial and its
// atomicInc: the last block may count every other block as finished and still read a partial
// whose store is not yet visible to it. Usually right on a GPU; a race all the same.
#include "block_reduce.cuh"

constexpr unsigned int kBlock = 256;
constexpr unsigned int kGrid = 32;

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

__global__ void sum_kernel(const float* x, size_t n, float* partials, unsigned* finished, float* sum) {
    __shared__ bool last;
    float v = 0.0f;
    for (size_t i = blockIdx.x * size_t{kBlock} + threadIdx.x; i < n; i += size_t{kGrid} * kBlock)
        v += x[i];
    v = block_sum(v);
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = v;  // BUG: no __threadfence() before the count
        last = atomicInc(finished, kGrid) == kGrid - 1;
    }
    __syncthreads();
    if (last) {
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
