// Lesson 02, step 9 — vectorized loads, several in flight.
//
// Teaches: feeding the memory system. A reduction reads every byte once and does almost no
// arithmetic, so its speed is set by how many bytes it keeps in flight. Each thread now reads
// float4 packs (16 bytes per load instruction, as in lesson 01) and issues kUnroll = 4 of them
// before it adds any: 64 bytes in flight per thread instead of step 8's 8. The tail must be
// right for any n: the packs of the last, partial tile one by one, then the n % 4 floats
// after the last whole pack.
//
// What to do: the accumulation loop of the kernel (step 8's block sum and the launcher,
// sized in tiles of packs, are given).
//   1. Main loop: while all 4 of this thread's packs of the tile exist, load them into
//      float4 v[4] (all four loads first), then add their lanes into sum; jump by the grid.
//   2. The last, partial tile: each of the 4 packs only if it exists.
//   3. The last n % 4 floats: one each for the grid's threads 0, 1, 2.
// Read "Step 9" in lessons/02_reduce/README.md; the layout of a tile is drawn there.
//
// Check:  ./cudalings check 02_reduce/09_vectorized_loads
// Stuck:  ./cudalings hint 02_reduce/09_vectorized_loads
//
// As given, this file compiles and runs but adds nothing (every sum is 0), so every test fails.

#include "reduce.cuh"

constexpr unsigned int kBlockSize = 256;
constexpr unsigned int kUnroll = 4;  // float4 loads in flight per thread
// float4 packs a block reads per trip through the main loop: 1024 packs = 16 KiB.
constexpr size_t kTile = static_cast<size_t>(kBlockSize) * kUnroll;
constexpr unsigned int kFullMask = 0xffffffffu;

// Step 8's warp and block sums, unchanged.
__device__ float warp_reduce_sum(float v) {
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) {
        v += __shfl_down_sync(kFullMask, v, d);
    }
    return v;
}

template <unsigned int kBlock>
__device__ float block_reduce_sum(float v) {
    static_assert(kBlock % 32 == 0 && kBlock <= 1024, "whole warps, at most 1024 threads");
    constexpr unsigned int kWarps = kBlock / 32;
    __shared__ float warp_sums[kWarps];
    const unsigned int lane = threadIdx.x % 32;
    const unsigned int warp = threadIdx.x / 32;
    v = warp_reduce_sum(v);
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < kWarps ? warp_sums[lane] : 0.0f;
        v = warp_reduce_sum(v);
    }
    return v;
}

// The four lanes of a pack, added as two pairs (a little more parallel than a chain).
__device__ __forceinline__ float lane_sum(float4 p) { return (p.x + p.y) + (p.z + p.w); }

// One partial sum per block of the grid. The array is read as n / 4 float4 packs in tiles of
// kTile packs: in a tile, thread t reads packs t, t + 256, t + 512, t + 768, so each of its 4
// loads is one coalesced 512-byte read per warp. Block b takes tiles b, b + G, b + 2G, ...
//
// __launch_bounds__(256): a promise that blocks have at most 256 threads, so the compiler may
// budget registers for exactly that.
__global__ void __launch_bounds__(kBlockSize)
    reduce_kernel(const float* __restrict__ in, size_t n, float* __restrict__ out) {
    float sum = 0.0f;
    // TODO(1 of 3, ~13 lines): the main loop.
    //   const float4* in4 = reinterpret_cast<const float4*>(in);  (every pack is 16-byte aligned)
    //   packs = n / 4; stride = gridDim.x * kTile; i = blockIdx.x * kTile + threadIdx.x (size_t).
    //   for (; i + (kUnroll - 1) * kBlockSize < packs; i += stride): load float4 v[kUnroll] with
    //   v[u] = in4[i + u * kBlockSize] for every u (a #pragma unroll loop), THEN add each
    //   pack's four lanes into sum with lane_sum. Issuing all the loads before the first add is
    //   the point: it puts 4 loads in flight.

    // TODO(2 of 3, ~4 lines): the partial tile the main loop stopped at (i is still this
    //   thread's first pack in it): for each u, if i + u * kBlockSize < packs, add
    //   lane_sum(in4[i + u * kBlockSize]).

    // TODO(3 of 3, ~3 lines): the last n - 4 * packs floats (0 to 3 of them). With t this
    //   thread's index in the grid (blockIdx.x * kBlockSize + threadIdx.x, as a size_t): if
    //   t < n - 4 * packs, add in[4 * packs + t]. Block 0 always exists, so threads 0..2 do.
    //   Delete the (void) line when you are done.
    (void)in, (void)n;

    sum = block_reduce_sum<kBlockSize>(sum);
    if (threadIdx.x == 0) out[blockIdx.x] = sum;
}

// Two passes, as in steps 7 and 8. The grid is one full wave, counted in tiles of packs
// now: at n = 2^28 every block makes ~62 trips through the main loop. The second pass is the
// same kernel with one block over the G partial sums (they sit in the workspace, which is
// 256-byte aligned, so they can be read as packs too).
extern "C" cudaError_t reduce_sum(const float* in, size_t n, float* out, void* workspace,
                                  size_t workspace_bytes, cudaStream_t stream) {
    int device = 0;
    cudaError_t err = cudaGetDevice(&device);
    if (err != cudaSuccess) return err;
    int num_sms = 0;
    err = cudaDeviceGetAttribute(&num_sms, cudaDevAttrMultiProcessorCount, device);
    if (err != cudaSuccess) return err;
    // How many blocks of THIS kernel fit on one SM at once: the occupancy calculator looks at
    // its registers and shared memory. (8 when it needs at most 32 registers per thread, as it
    // does with CUDA 13 on sm_90: 65536 registers / 2048 threads.) Asked once per process, since
    // the answer never changes; a library serving several GPU models would ask per device.
    static const int blocks_per_sm = [] {
        int blocks = 0;
        if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, reduce_kernel, kBlockSize, 0) !=
            cudaSuccess)
            return 0;
        return blocks;
    }();
    if (blocks_per_sm <= 0) return cudaErrorInvalidDeviceFunction;

    const size_t full_gpu = static_cast<size_t>(num_sms) * blocks_per_sm;
    // Tiles of packs needed; at least one block, since n < 4 has no packs but a tail.
    size_t needed = (n / 4 + kTile - 1) / kTile;
    if (needed == 0) needed = 1;
    const size_t capacity = workspace_bytes / sizeof(float);
    size_t grid = needed < full_gpu ? needed : full_gpu;
    if (grid > capacity) grid = capacity;
    if (grid == 0) return cudaErrorInvalidValue;

    if (grid == 1) {
        reduce_kernel<<<1, kBlockSize, 0, stream>>>(in, n, out);
        return cudaGetLastError();
    }
    float* partials = static_cast<float*>(workspace);
    reduce_kernel<<<static_cast<unsigned int>(grid), kBlockSize, 0, stream>>>(in, n, partials);
    reduce_kernel<<<1, kBlockSize, 0, stream>>>(partials, grid, out);
    return cudaGetLastError();
}
