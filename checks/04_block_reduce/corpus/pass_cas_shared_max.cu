// step: 04_block_reduce/03_block_reduce_ops.cu
// emulated: PASS
//
// Correct, with shared-memory atomics: the sum by atomicAdd, the max and min by compare-and-swap
// loops on float bits (a plain read, then atomicCAS), and the argmax by atomicMin over the
// indices that hold the maximum, each phase after a barrier.
#include <cmath>

#include "block_reduce.cuh"

__device__ void atomic_max_float(float* address, float value) {
    unsigned* word = reinterpret_cast<unsigned*>(address);
    unsigned old = *word;
    while (__uint_as_float(old) < value) {
        const unsigned seen = atomicCAS(word, old, __float_as_uint(value));
        if (seen == old) break;
        old = seen;
    }
}

__device__ void atomic_min_float(float* address, float value) {
    unsigned* word = reinterpret_cast<unsigned*>(address);
    unsigned old = *word;
    while (__uint_as_float(old) > value) {
        const unsigned seen = atomicCAS(word, old, __float_as_uint(value));
        if (seen == old) break;
        old = seen;
    }
}

__global__ void ops_kernel(const float* x, size_t n, float* bsum, float* bmax, float* bmin,
                           unsigned* barg) {
    __shared__ float s_sum, s_max, s_min;
    __shared__ unsigned s_arg;
    if (threadIdx.x == 0) {
        s_sum = 0.0f;
        s_max = -INFINITY;
        s_min = INFINITY;
        s_arg = 0xffffffffu;
    }
    __syncthreads();
    const size_t i = blockIdx.x * size_t{kTile} + threadIdx.x;
    if (i < n) {
        const float v = x[i];
        atomicAdd(&s_sum, v);
        atomic_max_float(&s_max, v);
        atomic_min_float(&s_min, v);
    }
    __syncthreads();
    if (i < n && x[i] == s_max) atomicMin(&s_arg, static_cast<unsigned>(i));
    __syncthreads();
    if (threadIdx.x == 0) {
        bsum[blockIdx.x] = s_sum;
        bmax[blockIdx.x] = s_max;
        bmin[blockIdx.x] = s_min;
        barg[blockIdx.x] = s_arg;
    }
}

extern "C" cudaError_t block_reduce_ops(const float* x, size_t n, float* block_sum,
                                        float* block_max, float* block_min,
                                        unsigned int* block_argmax, cudaStream_t stream) {
    ops_kernel<<<static_cast<unsigned int>(tile_count(n)), kTile, 0, stream>>>(
        x, n, block_sum, block_max, block_min, block_argmax);
    return cudaGetLastError();
}
