// step: 04_block_reduce/03_block_reduce_ops.cu
// emulated: WRONG
//
// Buggy: on ties the argmax keeps the larger index (`>=` where `>` was meant), not the first.
#include <cmath>

#include "block_reduce.cuh"

struct Pair {
    float value;
    unsigned index;
};

__device__ Pair better(Pair a, Pair b) {
    if (b.value > a.value || (b.value == a.value && b.index >= a.index)) return b;  // BUG
    return a;
}

__global__ void ops_kernel(const float* x, size_t n, float* bsum, float* bmax, float* bmin,
                           unsigned* barg) {
    __shared__ float s_sum[kTile], s_min[kTile];
    __shared__ Pair s_max[kTile];
    const unsigned t = threadIdx.x;
    const size_t i = blockIdx.x * size_t{kTile} + t;
    const bool in = i < n;
    s_sum[t] = in ? x[i] : 0.0f;
    s_min[t] = in ? x[i] : INFINITY;
    s_max[t] = {in ? x[i] : -INFINITY, in ? static_cast<unsigned>(i) : 0u};
    __syncthreads();
    for (unsigned s = kTile / 2; s > 0; s >>= 1) {
        if (t < s) {
            s_sum[t] += s_sum[t + s];
            s_min[t] = fminf(s_min[t], s_min[t + s]);
            s_max[t] = better(s_max[t], s_max[t + s]);
        }
        __syncthreads();
    }
    if (t == 0) {
        bsum[blockIdx.x] = s_sum[0];
        bmin[blockIdx.x] = s_min[0];
        bmax[blockIdx.x] = s_max[0].value;
        barg[blockIdx.x] = s_max[0].index;
    }
}

extern "C" cudaError_t block_reduce_ops(const float* x, size_t n, float* block_sum,
                                        float* block_max, float* block_min,
                                        unsigned int* block_argmax, cudaStream_t stream) {
    ops_kernel<<<static_cast<unsigned int>(tile_count(n)), kTile, 0, stream>>>(
        x, n, block_sum, block_max, block_min, block_argmax);
    return cudaGetLastError();
}
