// step: 04_block_reduce/03_block_reduce_ops.cu
// emulated: PASS
//
// Correct: sum, max and min by shuffles; the argmax as the smallest index holding the block's
// maximum, found with __reduce_min_sync (sm_80 and later) over the candidates' indices.
#include <cmath>

#include "block_reduce.cuh"

constexpr unsigned int kWarps = kTile / 32;

__device__ float warp_op(float v, int op) {
    for (int d = 16; d > 0; d /= 2) {
        const float o = __shfl_xor_sync(0xffffffffu, v, d);
        v = op == 0 ? v + o : op == 1 ? fmaxf(v, o) : fminf(v, o);
    }
    return v;
}

__device__ float block_op(float v, int op, float* scratch) {
    v = warp_op(v, op);
    if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
    __syncthreads();
    const float identity = op == 0 ? 0.0f : op == 1 ? -INFINITY : INFINITY;
    v = warp_op(threadIdx.x % 32 < kWarps ? scratch[threadIdx.x % 32] : identity, op);
    __syncthreads();
    return v;
}

__global__ void ops_kernel(const float* x, size_t n, float* bsum, float* bmax, float* bmin,
                           unsigned* barg) {
    __shared__ float scratch[kWarps];
    __shared__ unsigned candidates[kWarps];
    const size_t i = blockIdx.x * size_t{kTile} + threadIdx.x;
    const bool in = i < n;
    const float v = in ? x[i] : 0.0f;
    const float s = block_op(v, 0, scratch);
    const float hi = block_op(in ? v : -INFINITY, 1, scratch);
    const float lo = block_op(in ? v : INFINITY, 2, scratch);
    const unsigned mine = in && v == hi ? static_cast<unsigned>(i) : 0xffffffffu;
    const unsigned warp_first = __reduce_min_sync(0xffffffffu, mine);
    if (threadIdx.x % 32 == 0) candidates[threadIdx.x / 32] = warp_first;
    __syncthreads();
    if (threadIdx.x < 32) {
        const unsigned c = threadIdx.x < kWarps ? candidates[threadIdx.x] : 0xffffffffu;
        const unsigned first = __reduce_min_sync(0xffffffffu, c);
        if (threadIdx.x == 0) {
            bsum[blockIdx.x] = s;
            bmax[blockIdx.x] = hi;
            bmin[blockIdx.x] = lo;
            barg[blockIdx.x] = first;
        }
    }
}

extern "C" cudaError_t block_reduce_ops(const float* x, size_t n, float* block_sum,
                                        float* block_max, float* block_min,
                                        unsigned int* block_argmax, cudaStream_t stream) {
    ops_kernel<<<static_cast<unsigned int>(tile_count(n)), kTile, 0, stream>>>(
        x, n, block_sum, block_max, block_min, block_argmax);
    return cudaGetLastError();
}
