// step: 02_reduce/03_sequential_addressing.cu
// emulated: PASS
//
// Correct: the block size is chosen at run time (the occupancy calculator's suggestion, rounded
// to a power of two) and the shared array is dynamic, sized in the launch.
#include "reduce.cuh"

__global__ void reduce_kernel(const float* in, size_t n, float* out) {
    extern __shared__ float sdata[];
    const unsigned int tid = threadIdx.x;
    const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + tid;
    sdata[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}

extern "C" cudaError_t reduce_sum(const float* in, size_t n, float* out, void* workspace,
                                  size_t workspace_bytes, cudaStream_t stream) {
    int min_grid = 0, suggested = 0;
    cudaError_t err = cudaOccupancyMaxPotentialBlockSize(&min_grid, &suggested, reduce_kernel);
    if (err != cudaSuccess) return err;
    unsigned int block = 64;
    while (block * 2 <= static_cast<unsigned int>(suggested) && block < 512) block *= 2;
    float* buffers[2] = {static_cast<float*>(workspace),
                         static_cast<float*>(workspace) + workspace_bytes / sizeof(float) / 2};
    for (int pass = 0;; ++pass) {
        const size_t blocks = (n + block - 1) / block;
        float* dst = blocks == 1 ? out : buffers[pass % 2];
        reduce_kernel<<<static_cast<unsigned int>(blocks), block, block * sizeof(float), stream>>>(
            in, n, dst);
        if (blocks == 1) break;
        in = dst;
        n = blocks;
    }
    return cudaGetLastError();
}
