// Lesson 04, step 3 — one block reduce for any operator: sum, max, min and argmax.
//
// Teaches: step 2's block reduce used only two facts about +: it is associative (the grouping
// of the additions does not matter) and it has an identity (0, which the threads past the end
// contribute). Any operator with those two properties reduces the same way. Write the reduce
// once, as a template over a value type T and an operator Op, and each reduction is a functor:
//   Sum: a + b,     identity 0          (given, as the example)
//   Max: max(a, b), identity -inf
//   Min: min(a, b), identity +inf
//   ArgMax over (value, index) pairs: the larger value; on a tie, the smaller index;
//          identity (-inf, 0xffffffff).
// The kernel writes, for each tile of kTile = 256 elements, its sum, max, min and the index in
// x of its largest element (the smallest such index when several elements share the maximum).
// Read "Step 3" in lessons/04_block_reduce/README.md first.
//
// Check:  ./cudalings check 04_block_reduce/03_block_reduce_ops
// Stuck:  ./cudalings hint 04_block_reduce/03_block_reduce_ops
//
// As given, this file compiles and runs but writes nothing, so every test fails.

#include <cmath>

#include "block_reduce.cuh"

constexpr unsigned int kWarpSize = 32;
constexpr unsigned int kWarps = kTile / kWarpSize;
constexpr unsigned int kFullMask = 0xffffffffu;
static_assert(kWarps * kWarpSize == kTile && kWarps <= kWarpSize,
              "whole warps, and few enough that one warp can combine them");

// ---------------------------------------------------------------- the operators
struct Sum {
    __device__ float operator()(float a, float b) const { return a + b; }
    __device__ static float identity() { return 0.0f; }
};

// TODO(1 of 6, ~4 lines): the bodies of Max and Min: fmaxf / fminf, and identities that change
//   nothing: -INFINITY for Max (every float is >= -inf), INFINITY for Min.
struct Max {
    __device__ float operator()(float a, float b) const {
        (void)b;
        return a;  // placeholder
    }
    __device__ static float identity() { return 0.0f; }  // placeholder
};

struct Min {
    __device__ float operator()(float a, float b) const {
        (void)b;
        return a;  // placeholder
    }
    __device__ static float identity() { return 0.0f; }  // placeholder
};

// A value and the index in x it came from.
struct ValueIndex {
    float value;
    unsigned int index;
};

// TODO(2 of 6, ~4 lines): the ArgMax operator. Return the pair with the larger value; when the
//   values are equal, the pair with the smaller index (this makes the result the same for every
//   grouping: the *first* maximum). Identity: {-INFINITY, 0xffffffffu}, which loses every
//   comparison, ties included.
struct ArgMax {
    __device__ ValueIndex operator()(ValueIndex a, ValueIndex b) const {
        (void)b;
        return a;  // placeholder
    }
    __device__ static ValueIndex identity() { return {0.0f, 0u}; }  // placeholder
};

// ---------------------------------------------------------------- shuffles for each value type
__device__ __forceinline__ float shfl_down(float v, unsigned int offset) {
    return __shfl_down_sync(kFullMask, v, offset);
}

// TODO(3 of 6, ~2 lines): a shuffle moves one 32-bit value, so move a pair field by field:
//   return {__shfl_down_sync(kFullMask, v.value, offset), ... v.index ...};
__device__ __forceinline__ ValueIndex shfl_down(ValueIndex v, unsigned int offset) {
    (void)offset;
    return v;  // placeholder
}

// ---------------------------------------------------------------- the generic reduce
// The reduction of v over the warp, in lane 0.
template <typename T, typename Op>
__device__ __forceinline__ T warp_reduce(T v, Op op) {
    // TODO(4 of 6, ~2 lines): step 2's warp_sum with op in place of +:
    //   for offset = 16, 8, 4, 2, 1:  v = op(v, shfl_down(v, offset));
    (void)op;
    return v;
}

// The reduction of v over the block (kTile threads), valid in thread 0.
template <typename T, typename Op>
__device__ T block_reduce(T v, Op op) {
    // TODO(5 of 6, ~10 lines): step 2's block reduce with op and T.
    //   - __shared__ T warp_results[kWarps];
    //   - v = warp_reduce(v, op); lane 0 of each warp stores it in warp_results[warp];
    //   - __syncthreads(); warp 0 reads warp_results[lane] (Op::identity() for lane >= kWarps)
    //     and reduces them with warp_reduce;
    //   - a second __syncthreads() before returning. Each instantiation (each T *and* Op) has
    //     its own warp_results, so this kernel's four calls use four arrays; but a second call
    //     of the same instantiation (in a loop, say) would reuse its array: warp 0 must finish
    //     reading before that call's lane 0s write.
    (void)op;
    return v;
}

// ---------------------------------------------------------------- the kernel
__global__ void __launch_bounds__(kTile)
    block_reduce_ops_kernel(const float* __restrict__ x, size_t n, float* __restrict__ block_sum,
                            float* __restrict__ block_max, float* __restrict__ block_min,
                            unsigned int* __restrict__ block_argmax) {
    // TODO(6 of 6, ~12 lines): the four reductions of this block's tile.
    //   - i = blockIdx.x * kTile + threadIdx.x (size_t); the element is x[i] when i < n;
    //   - each reduction gets the element, or its operator's identity when i >= n:
    //       sum = block_reduce(i < n ? x[i] : Sum::identity(), Sum());   and the same for
    //       Max and Min; for ArgMax, the pair ValueIndex{x[i], (unsigned int)i};
    //   - every thread calls every block_reduce (they contain barriers);
    //   - thread 0 writes block_sum, block_max, block_min and block_argmax (the pair's index)
    //     at [blockIdx.x].
    //   Delete the (void) line when you are done.
    (void)x, (void)n, (void)block_sum, (void)block_max, (void)block_min, (void)block_argmax;
}

extern "C" cudaError_t block_reduce_ops(const float* x, size_t n, float* block_sum,
                                        float* block_max, float* block_min,
                                        unsigned int* block_argmax, cudaStream_t stream) {
    const size_t grid = tile_count(n);  // one block per tile (given)
    block_reduce_ops_kernel<<<static_cast<unsigned int>(grid), kTile, 0, stream>>>(
        x, n, block_sum, block_max, block_min, block_argmax);
    return cudaGetLastError();
}
