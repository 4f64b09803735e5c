// step: 04_block_reduce/04_device_sum.cu
// emulated: WRONG
// reason: non-deterministic
//
// Buggy for this step: each block atomicAdds its partial to the sum, so the partials are added
// in the order the blocks finish, which changes from call to call: the sum's last bits change
// (the step asks for the same bits on every call). The emulator starts the blocks in a shuffled
// order, a different one for every launch, as a GPU finishes them in no fixed order.
#include "block_reduce.cuh"

constexpr unsigned int kBlock = 256;

__global__ void sum_kernel(const float* x, size_t n, float* sum) {
    __shared__ float s[kBlock];
    const size_t i = blockIdx.x * size_t{kBlock} + threadIdx.x;
    s[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (unsigned k = kBlock / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(sum, s[0]);
}

extern "C" cudaError_t device_sum_deterministic(const float* x, size_t n, float* sum,
                                                void* workspace, size_t workspace_bytes,
                                                cudaStream_t stream) {
    (void)workspace, (void)workspace_bytes;
    cudaError_t err = cudaMemsetAsync(sum, 0, sizeof(float), stream);
    if (err != cudaSuccess) return err;
    sum_kernel<<<static_cast<unsigned int>((n + kBlock - 1) / kBlock), kBlock, 0, stream>>>(x, n, sum);
    return cudaGetLastError();
}
