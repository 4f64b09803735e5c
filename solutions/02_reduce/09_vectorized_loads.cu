// Lesson 02, step 9 — vectorized loads, several in flight (solution).
//
// Teaches: feeding the memory system. A reduction reads every byte once and does almost no
// arithmetic, so its speed is set by how many bytes it keeps in flight. Each thread now loads
// float4 packs (16 bytes per load instruction, as in lesson 01) and issues kUnroll = 4 of them
// before it adds any: 64 bytes in flight per thread, 8x step 8's two 4-byte loads, with 4x
// the bytes per load instruction. The tail is handled for any n: the packs of a last, partial
// tile one by one, then the n % 4 floats after the last pack.
//
// Why 4 independent loads: a load's data arrives several hundred nanoseconds after it is
// issued. Little's law says the bytes that must be in flight to sustain a bandwidth B with
// latency L are B x L: at 4.2 TB/s and, say, 500 ns that is about 2 MB across the GPU, 16 KB
// per SM. A full SM runs 2048 threads; with 64 bytes each in flight that is 128 KB, plenty.
// Loads that do not depend on each other are issued back to back; the adds wait only for the
// data they use.
//
// Check:  ./cudalings check 02_reduce/09_vectorized_loads
// Stuck:  ./cudalings hint 02_reduce/09_vectorized_loads

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
    // cudaMalloc'd pointers (and the workspace) are 256-byte aligned: every pack is aligned.
    const float4* in4 = reinterpret_cast<const float4*>(in);
    const size_t packs = n / 4;
    const size_t stride = static_cast<size_t>(gridDim.x) * kTile;
    size_t i = static_cast<size_t>(blockIdx.x) * kTile + threadIdx.x;

    float sum = 0.0f;
    // Main loop: while this thread's 4 packs of the tile all exist. All 4 loads are issued
    // before any add: that is what puts 64 bytes per thread in flight.
    for (; i + (kUnroll - 1) * kBlockSize < packs; i += stride) {
        float4 v[kUnroll];
#pragma unroll
        for (unsigned int u = 0; u < kUnroll; ++u) v[u] = in4[i + u * kBlockSize];
#pragma unroll
        for (unsigned int u = 0; u < kUnroll; ++u) sum += lane_sum(v[u]);
    }
    // The last, partial tile (only the block that reaches it has anything to do): each of
    // this thread's packs in it, if it exists.
#pragma unroll
    for (unsigned int u = 0; u < kUnroll; ++u) {
        if (i + u * kBlockSize < packs) sum += lane_sum(in4[i + u * kBlockSize]);
    }
    // The last n % 4 floats (0 to 3 of them), after the last whole pack: threads 0..2 of the
    // grid take one each. Every launch has a block 0 of 256 threads, so they exist.
    const size_t t = static_cast<size_t>(blockIdx.x) * kBlockSize + threadIdx.x;
    if (t < n - 4 * packs) sum += in[4 * packs + t];

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
