// Lesson 04, step 3 — one block reduce for any operator: sum, max, min and argmax (solution).
//
// Teaches: that the block reduce of step 2 never used anything about + except two facts: it is
// associative (the grouping does not matter) and it has an identity (a value that changes
// nothing, for the threads past the end). Write the reduce once as a template over the value
// type T and an operator Op, and sum, max, min and argmax are each a few-line functor:
//   Sum: a + b,     identity 0
//   Max: max(a, b), identity -inf
//   Min: min(a, b), identity +inf
//   ArgMax on (value, index) pairs: the larger value, and on a tie the smaller index;
//        identity (-inf, UINT_MAX).
// The tie rule makes ArgMax a well-defined operator: without it, the winner between equal
// values would depend on which lanes happened to meet, and so on the reduction's shape.
//
// Check:  ./cudalings check 04_block_reduce/03_block_reduce_ops
// Stuck:  ./cudalings hint 04_block_reduce/03_block_reduce_ops

#include <cmath>

#include "block_reduce.cuh"

constexpr unsigned int kWarpSize = 32;
constexpr unsigned int kWarps = kTile / kWarpSize;
constexpr unsigned int kFullMask = 0xffffffffu;

// ---------------------------------------------------------------- the operators
struct Sum {
    __device__ float operator()(float a, float b) const { return a + b; }
    __device__ static float identity() { return 0.0f; }
};

struct Max {
    __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
    __device__ static float identity() { return -INFINITY; }  // every float is >= -inf
};

struct Min {
    __device__ float operator()(float a, float b) const { return fminf(a, b); }
    __device__ static float identity() { return INFINITY; }
};

// A value and where it came from. Reducing pairs carries the index along with the winner.
struct ValueIndex {
    float value;
    unsigned int index;
};

struct ArgMax {
    __device__ ValueIndex operator()(ValueIndex a, ValueIndex b) const {
        // A total order: larger value first, then smaller index. So the result is the same for
        // any grouping and any order of the pairs, and it is the *first* maximum.
        if (a.value > b.value) return a;
        if (b.value > a.value) return b;
        return a.index < b.index ? a : b;
    }
    // The index of the identity is the largest possible, so it loses every tie.
    __device__ static ValueIndex identity() { return {-INFINITY, 0xffffffffu}; }
};

// ---------------------------------------------------------------- shuffles for each value type
__device__ __forceinline__ float shfl_down(float v, unsigned int offset) {
    return __shfl_down_sync(kFullMask, v, offset);
}

// A shuffle moves 32 bits; a struct moves field by field.
__device__ __forceinline__ ValueIndex shfl_down(ValueIndex v, unsigned int offset) {
    return {__shfl_down_sync(kFullMask, v.value, offset),
            __shfl_down_sync(kFullMask, v.index, offset)};
}

// ---------------------------------------------------------------- the generic reduce
// The reduction of v over the warp, in lane 0. The same tree as step 2's warp_sum, with op in
// place of +.
template <typename T, typename Op>
__device__ __forceinline__ T warp_reduce(T v, Op op) {
    for (unsigned int offset = kWarpSize / 2; offset > 0; offset /= 2)
        v = op(v, shfl_down(v, offset));
    return v;
}

// The reduction of v over the block (kTile threads), valid in thread 0.
template <typename T, typename Op>
__device__ T block_reduce(T v, Op op) {
    // One array per template instantiation: block_reduce<float, Sum> and block_reduce<float, Max>
    // each have their own, so the kernel's four calls use four arrays. Two calls of the same
    // instantiation (a loop) would share one, hence the barrier at the end.
    __shared__ T warp_results[kWarps];
    const unsigned int lane = threadIdx.x % kWarpSize;
    const unsigned int warp = threadIdx.x / kWarpSize;

    v = warp_reduce(v, op);
    if (lane == 0) warp_results[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < kWarps ? warp_results[lane] : Op::identity();
        v = warp_reduce(v, op);
    }
    // Warp 0 must have read warp_results before a next call of this instantiation overwrites it.
    __syncthreads();
    return v;
}

// ---------------------------------------------------------------- the kernel
__global__ void __launch_bounds__(kTile)
    block_reduce_ops_kernel(const float* __restrict__ x, size_t n, float* __restrict__ block_sum,
                            float* __restrict__ block_max, float* __restrict__ block_min,
                            unsigned int* __restrict__ block_argmax) {
    const size_t i = static_cast<size_t>(blockIdx.x) * kTile + threadIdx.x;
    const bool inside = i < n;
    const float v = inside ? x[i] : 0.0f;

    // Threads past the end hold each operator's identity, so they change no result.
    const float sum = block_reduce(inside ? v : Sum::identity(), Sum());
    const float max = block_reduce(inside ? v : Max::identity(), Max());
    const float min = block_reduce(inside ? v : Min::identity(), Min());
    const ValueIndex arg = block_reduce(
        inside ? ValueIndex{v, static_cast<unsigned int>(i)} : ArgMax::identity(), ArgMax());

    if (threadIdx.x == 0) {
        block_sum[blockIdx.x] = sum;
        block_max[blockIdx.x] = max;
        block_min[blockIdx.x] = min;
        block_argmax[blockIdx.x] = arg.index;
    }
}

extern "C" cudaError_t block_reduce_ops(const float* x, size_t n, float* block_sum,
                                        float* block_max, float* block_min,
                                        unsigned int* block_argmax, cudaStream_t stream) {
    const size_t grid = tile_count(n);
    block_reduce_ops_kernel<<<static_cast<unsigned int>(grid), kTile, 0, stream>>>(
        x, n, block_sum, block_max, block_min, block_argmax);
    return cudaGetLastError();
}
