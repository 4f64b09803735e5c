// step: 04_block_reduce/01_atomic_sum.cu
// emulated: PASS
//
// Correct: libcu++'s cuda::atomic_ref (device scope, relaxed) instead of atomicAdd.
#include <cuda/atomic>

#include "block_reduce.cuh"

__global__ void sum_kernel(const float* x, size_t n, float* sum) {
    const size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x;
    if (i < n) {
        cuda::atomic_ref<float, cuda::thread_scope_device> total(*sum);
        total.fetch_add(x[i], cuda::std::memory_order_relaxed);
    }
}

extern "C" cudaError_t atomic_sum(const float* x, size_t n, float* sum, cudaStream_t stream) {
    cudaError_t err = cudaMemsetAsync(sum, 0, sizeof(float), stream);
    if (err != cudaSuccess) return err;
    sum_kernel<<<static_cast<unsigned int>((n + 255) / 256), 256, 0, stream>>>(x, n, sum);
    return cudaGetLastError();
}
