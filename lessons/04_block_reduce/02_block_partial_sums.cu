// Lesson 04, step 2 — a block reduce: warp shuffles, then shared memory.
//
// Teaches: reducing the 256 values of a block to one, with registers first and shared memory
// only where warps have to meet. Each block owns one tile of kTile = 256 elements (one per
// thread) and writes that tile's sum to partials[blockIdx.x]:
//   1. each warp adds up its 32 values with __shfl_down_sync (registers only, no barrier);
//   2. lane 0 of each warp stores its warp's sum in shared memory (8 floats per block);
//   3. __syncthreads(), then the first warp adds those 8 values with the same shuffles;
//   4. thread 0 writes the block's sum.
// Read "Step 2" in lessons/04_block_reduce/README.md first.
//
// Check:  ./cudalings check 04_block_reduce/02_block_partial_sums
// Stuck:  ./cudalings hint 04_block_reduce/02_block_partial_sums
//
// As given, this file compiles and runs but writes nothing, so every test fails.

#include "block_reduce.cuh"

constexpr unsigned int kWarpSize = 32;
constexpr unsigned int kWarps = kTile / kWarpSize;  // 8 warps in a 256-thread block
static_assert(kWarps * kWarpSize == kTile, "a block is made of whole warps");

// The sum of v over the 32 lanes of the warp, returned in lane 0.
__device__ __forceinline__ float warp_sum(float v) {
    // TODO(1 of 3, ~2 lines): a loop over offset = 16, 8, 4, 2, 1 doing
    //     v += __shfl_down_sync(0xffffffffu, v, offset);
    //   Each step adds the value held `offset` lanes higher; after the five steps lane 0 has all
    //   32. The mask 0xffffffffu says all 32 lanes take part, so every lane must execute the
    //   shuffle: no lane may skip this function.
    return v;
}

__global__ void __launch_bounds__(kTile)
    block_partial_sums_kernel(const float* __restrict__ x, size_t n, float* __restrict__ partials) {
    // TODO(2 of 3, ~7 lines): each warp's sum, in shared memory.
    //   - declare __shared__ float warp_sums[kWarps]; (one slot per warp, seen by this block only)
    //   - lane = threadIdx.x % kWarpSize, warp = threadIdx.x / kWarpSize;
    //   - i = blockIdx.x * kTile + threadIdx.x (as a size_t); v = x[i] if i < n, else 0.0f.
    //     Threads past the end keep going with 0 (it changes no sum): they must still reach
    //     the shuffles and the barrier, so do not return early;
    //   - v = warp_sum(v); lane 0 stores it in warp_sums[warp].

    // TODO(3 of 3, ~6 lines): combine the warps.
    //   - __syncthreads(): every warp's sum must be in shared memory before anyone reads it;
    //   - in warp 0 only: v = warp_sums[lane] for lane < kWarps, else 0.0f; v = warp_sum(v);
    //     lane 0 writes partials[blockIdx.x] = v.
    //   Delete the (void) line when you are done.
    (void)x, (void)n, (void)partials;
}

extern "C" cudaError_t block_partial_sums(const float* x, size_t n, float* partials,
                                          cudaStream_t stream) {
    // One block per tile (given): the contract fixes the tiles, so the grid follows n.
    const size_t grid = tile_count(n);
    block_partial_sums_kernel<<<static_cast<unsigned int>(grid), kTile, 0, stream>>>(x, n,
                                                                                     partials);
    return cudaGetLastError();
}
