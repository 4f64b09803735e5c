// step: 04_block_reduce/04_device_sum.cu
// emulated: SKIPPED
//
// Correct on a GPU, declined by the emulator: one cooperative launch (every block resident at
// once) with a grid-wide barrier, cg::this_grid().sync(), between the partial sums and their
// sum. The emulator cannot run a grid-wide barrier (its blocks are not all resident): the step
// is SKIPPED with the reason, never judged. (Excluded from the differential test.)
#include <cooperative_groups.h>

#include "block_reduce.cuh"

namespace cg = cooperative_groups;

constexpr unsigned int kBlock = 256;
constexpr unsigned int kGrid = 32;

__device__ float block_sum(float v) {
    __shared__ float s[kBlock];
    s[threadIdx.x] = v;
    __syncthreads();
    for (unsigned k = kBlock / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
        __syncthreads();
    }
    const float total = s[0];
    __syncthreads();
    return total;
}

__global__ void sum_kernel(const float* x, size_t n, float* partials, float* sum) {
    float v = 0.0f;
    for (size_t i = blockIdx.x * size_t{kBlock} + threadIdx.x; i < n; i += size_t{kGrid} * kBlock)
        v += x[i];
    v = block_sum(v);
    if (threadIdx.x == 0) partials[blockIdx.x] = v;
    cg::this_grid().sync();
    if (blockIdx.x == 0) {
        const float total = block_sum(threadIdx.x < kGrid ? partials[threadIdx.x] : 0.0f);
        if (threadIdx.x == 0) *sum = total;
    }
}

extern "C" cudaError_t device_sum_deterministic(const float* x, size_t n, float* sum,
                                                void* workspace, size_t workspace_bytes,
                                                cudaStream_t stream) {
    (void)workspace_bytes;
    float* partials = static_cast<float*>(workspace);
    void* args[] = {&x, &n, &partials, &sum};
    return cudaLaunchCooperativeKernel(sum_kernel, dim3(kGrid), dim3(kBlock), args, 0, stream);
}
