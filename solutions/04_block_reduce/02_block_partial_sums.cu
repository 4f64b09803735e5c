// Lesson 04, step 2 — a block reduce: warp shuffles, then shared memory (solution).
//
// Teaches: reducing 256 values to 1 inside one block with almost no shared memory and one
// __syncthreads(). Each block owns one tile of kTile = 256 elements, one per thread.
//   1. Each warp reduces its 32 values in registers with __shfl_down_sync: 5 steps, no memory.
//   2. Lane 0 of each warp writes the warp's sum to shared memory: 8 floats per block.
//   3. One barrier, then the first warp reduces those 8 values the same way (step 1 again).
//   4. Thread 0 writes the block's sum: one partial per block, partials[blockIdx.x].
// Combining the partials of different blocks is the next problem (steps 4 and 5): blocks cannot
// wait for each other inside a kernel.
//
// Check:  ./cudalings check 04_block_reduce/02_block_partial_sums
// Stuck:  ./cudalings hint 04_block_reduce/02_block_partial_sums

#include "block_reduce.cuh"

constexpr unsigned int kWarpSize = 32;
constexpr unsigned int kWarps = kTile / kWarpSize;  // 8 warps in a 256-thread block
constexpr unsigned int kFullMask = 0xffffffffu;     // every lane of the warp takes part

// The sum of v over the 32 lanes of the warp, in lane 0 (the other lanes hold partial sums).
__device__ __forceinline__ float warp_sum(float v) {
    // Each step adds the value 'offset' lanes higher: after offsets 16, 8, 4, 2, 1, lane 0 has
    // seen all 32 values. A shuffle moves registers between lanes directly, no shared memory
    // and no barrier: the 32 lanes of a warp exchange values in one instruction. The mask says
    // which lanes take part; all 32 must reach the shuffle (none may have returned early).
    for (unsigned int offset = kWarpSize / 2; offset > 0; offset /= 2)
        v += __shfl_down_sync(kFullMask, v, offset);
    return v;
}

__global__ void __launch_bounds__(kTile)
    block_partial_sums_kernel(const float* __restrict__ x, size_t n, float* __restrict__ partials) {
    // Shared memory is per block: these 8 floats are this block's, invisible to other blocks.
    __shared__ float warp_sums[kWarps];

    const unsigned int lane = threadIdx.x % kWarpSize;
    const unsigned int warp = threadIdx.x / kWarpSize;
    const size_t i = static_cast<size_t>(blockIdx.x) * kTile + threadIdx.x;

    // Threads past the end of the last tile add 0, the identity of +: they must still take part
    // in the shuffles below (no early return), so they carry a value that changes nothing.
    float v = i < n ? x[i] : 0.0f;
    v = warp_sum(v);
    if (lane == 0) warp_sums[warp] = v;

    // Every warp's sum must be in shared memory before warp 0 reads them. A block-wide barrier
    // is cheap: the block lives on one SM, and the hardware tracks its warps there.
    __syncthreads();

    if (warp == 0) {
        v = lane < kWarps ? warp_sums[lane] : 0.0f;  // 8 values; lanes 8..31 add 0
        v = warp_sum(v);
        if (lane == 0) partials[blockIdx.x] = v;
    }
}

extern "C" cudaError_t block_partial_sums(const float* x, size_t n, float* partials,
                                          cudaStream_t stream) {
    // One block per tile: the contract fixes the tiles, so the grid follows n.
    const size_t grid = tile_count(n);
    block_partial_sums_kernel<<<static_cast<unsigned int>(grid), kTile, 0, stream>>>(x, n,
                                                                                     partials);
    return cudaGetLastError();
}
