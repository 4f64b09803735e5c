// step: 04_block_reduce/03_block_reduce_ops.cu
// emulated: PASS
//
// Correct: libcu++'s cuda::std::numeric_limits for the identities, cuda::std::plus and a
// templated block reduction, instantiated once per (type, operation).
#include <cuda/std/functional>
#include <cuda/std/limits>

#include "block_reduce.cuh"

struct MaxOp {
    __device__ float operator()(float a, float b) const { return a < b ? b : a; }
};
struct MinOp {
    __device__ float operator()(float a, float b) const { return b < a ? b : a; }
};
struct FirstIndex {
    __device__ unsigned operator()(unsigned a, unsigned b) const { return a < b ? a : b; }
};

template <typename T, typename Op>
__device__ T block_reduce(T v, Op op) {
    __shared__ T partial[kTile / 32];
    for (int d = 16; d > 0; d /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, d));
    if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = v;
    __syncthreads();
    T r = partial[0];
    for (unsigned w = 1; w < kTile / 32; ++w) r = op(r, partial[w]);
    __syncthreads();
    return r;
}

__global__ void ops_kernel(const float* x, size_t n, float* bsum, float* bmax, float* bmin,
                           unsigned* barg) {
    using limits = cuda::std::numeric_limits<float>;
    const size_t i = blockIdx.x * size_t{kTile} + threadIdx.x;
    const bool in = i < n;
    const float v = in ? x[i] : 0.0f;
    const float s = block_reduce(v, cuda::std::plus<float>());
    const float hi = block_reduce(in ? v : -limits::infinity(), MaxOp());
    const float lo = block_reduce(in ? v : limits::infinity(), MinOp());
    const unsigned first = block_reduce(in && v == hi ? static_cast<unsigned>(i) : 0xffffffffu,
                                        FirstIndex());
    if (threadIdx.x == 0) {
        bsum[blockIdx.x] = s;
        bmax[blockIdx.x] = hi;
        bmin[blockIdx.x] = lo;
        barg[blockIdx.x] = first;
    }
}

extern "C" cudaError_t block_reduce_ops(const float* x, size_t n, float* block_sum,
                                        float* block_max, float* block_min,
                                        unsigned int* block_argmax, cudaStream_t stream) {
    ops_kernel<<<static_cast<unsigned int>(tile_count(n)), kTile, 0, stream>>>(
        x, n, block_sum, block_max, block_min, block_argmax);
    return cudaGetLastError();
}
