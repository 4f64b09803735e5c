// step: 04_block_reduce/01_atomic_sum.cu
// emulated: MEMORY_ERROR
// reason: race
//
// Buggy: the sum is set to 0 by the first thread of the grid, inside the kernel, while threads
// of other blocks may already have added to it.
#include "block_reduce.cuh"

__global__ void sum_kernel(const float* x, size_t n, float* sum) {
    const size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x;
    if (i == 0) *sum = 0.0f;  // BUG: other blocks run at the same time
    __syncthreads();
    if (i < n) atomicAdd(sum, x[i]);
}

extern "C" cudaError_t atomic_sum(const float* x, size_t n, float* sum, cudaStream_t stream) {
    sum_kernel<<<static_cast<unsigned int>((n + 127) / 128), 128, 0, stream>>>(x, n, sum);
    return cudaGetLastError();
}
