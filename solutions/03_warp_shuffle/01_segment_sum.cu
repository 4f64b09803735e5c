// Lesson 03, step 1 — segment sums with __shfl_down_sync (solution).
//
// Teaches: adding values that live in different threads' registers without shared memory.
// __shfl_down_sync(mask, v, offset) hands every lane the v of the lane `offset` above it; five
// rounds (offsets 16, 8, 4, 2, 1) leave the sum of 32 lanes in lane 0.
//
// The fast layout: the input is read with float4 loads, so one lane holds 4 consecutive floats
// and a 32-float segment is spread over 8 lanes. One warp-wide load covers 4 segments
// (32 lanes x 16 bytes = 512 bytes), each lane adds its 4 floats in registers, and 3 shuffle
// rounds (offsets 4, 2, 1) finish each segment's sum in the first lane of its group of 8.
// The partial last segment (n % 32 elements, when n is not a multiple of 32) takes the plain
// route: one float per lane, zero past n, 5 rounds.
//
// Why this layout: the sum of 2^28 floats in 32-wide segments reads 1 GiB and writes 32 MiB,
// so its floor is set by DRAM; what separates a kernel at the floor from one 10% above it is
// how many bytes each thread keeps in flight and how few instructions it spends per byte.
// Here each thread issues kUnroll independent 16-byte loads before it uses any of them, and
// does 3 shuffles per 16 bytes instead of 5 per 4 bytes.
//
// Check:  ./cudalings check 03_warp_shuffle/01_segment_sum
// Stuck:  ./cudalings hint 03_warp_shuffle/01_segment_sum

#include "warp_shuffle.cuh"

constexpr unsigned int kBlockSize = 256;
constexpr unsigned int kWarpsPerBlock = kBlockSize / 32;
// At most 32 registers per thread: 2048 threads x 32 = 65,536, the register file of one SM, so
// a full SM of blocks (8 of 256 threads) really fits. The grid below is sized for exactly that
// many; a kernel that needed more registers would fit fewer blocks per SM, and a grid sized
// for 8 would then run in more than one wave: a slow tail of late blocks.
constexpr int kMaxRegisters = 32;
// Independent float4 loads each thread has in flight per iteration of the main loop: 48 bytes
// per thread, about 96 KB per SM, several times what it takes to keep HBM busy.
constexpr int kUnroll = 3;

// After this, lane 0 holds the sum of v over the 32 lanes. (The other lanes hold partial sums
// that nobody uses.) Every lane must execute every round: a lane that skipped one would not
// deliver its value, and the mask promises that all 32 arrive.
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(kFullMask, v, offset);
    return v;
}

// The same over each aligned group of 8 lanes: lanes 0, 8, 16 and 24 get the sums of lanes
// 0-7, 8-15, 16-23 and 24-31. No `width` argument is needed: a group's first lane only ever
// reads lanes of its own group (g + 4, then g + 2, then g + 1); the lanes that read across a
// group boundary produce values nobody uses.
__device__ __forceinline__ float group8_sum(float v) {
#pragma unroll
    for (int offset = 4; offset > 0; offset /= 2) v += __shfl_down_sync(kFullMask, v, offset);
    return v;
}

// A chunk is 4 consecutive segments = 128 floats = 32 float4 packs: exactly one float4 per
// lane. Lane l of the warp holds pack l of the chunk, so lanes 8 g .. 8 g + 7 hold segment g of
// the chunk, and lane 8 g finishes its sum. Called by all 32 lanes of a warp together.
__device__ __forceinline__ void sum_chunk(float4 v, size_t chunk, unsigned int lane,
                                          size_t full_segments, float* __restrict__ sums) {
    // 4 floats in registers first (no communication needed), then 3 shuffle rounds.
    const float s = group8_sum((v.x + v.y) + (v.z + v.w));
    const size_t segment = chunk * 4 + lane / 8;
    if (lane % 8 == 0 && segment < full_segments) sums[segment] = s;
}

__global__ void __maxnreg__(kMaxRegisters)
    segment_sum_kernel(const float* __restrict__ in, float* __restrict__ sums, size_t n) {
    const unsigned int lane = threadIdx.x % 32;
    const size_t warp = (static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
    const size_t num_warps = static_cast<size_t>(gridDim.x) * kWarpsPerBlock;

    // Segment s starts at byte 128 s, so every pack is 16-byte aligned.
    const size_t full_segments = n / 32;  // segments with all 32 elements
    const size_t whole_chunks = full_segments / 4;
    const float4* in4 = reinterpret_cast<const float4*>(in);

    // Main loop: kUnroll whole chunks per warp per iteration, grid-stride, no bounds tests.
    // The loop test depends only on the warp's index, never on the lane: all 32 lanes run the
    // same iterations, as the shuffles inside require.
    size_t c = warp;
    for (; c + (kUnroll - 1) * num_warps < whole_chunks; c += kUnroll * num_warps) {
        // First issue every load, then use them: kUnroll x 16 bytes in flight per thread.
        float4 v[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) v[u] = in4[(c + u * num_warps) * 32 + lane];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u)
            sum_chunk(v[u], c + u * num_warps, lane, full_segments, sums);
    }

    // What is left: fewer than kUnroll chunks for this warp, one at a time; the last chunk may
    // hold only 1 to 3 whole segments. Lanes past the last whole segment load nothing and bring
    // 0, but they still take part in the shuffles.
    const size_t packs = full_segments * 8;
    for (; c * 4 < full_segments; c += num_warps) {
        const size_t p = c * 32 + lane;
        sum_chunk(p < packs ? in4[p] : make_float4(0.0f, 0.0f, 0.0f, 0.0f), c, lane, full_segments,
                  sums);
    }

    // The partial last segment, if any: the grid's last warp (it has at most as many chunks as
    // any other) sums its n % 32 elements with one float per lane. Lanes past n bring 0, the
    // neutral element of +, instead of dropping out: the mask still names all 32 lanes.
    if (n % 32 != 0 && warp == num_warps - 1) {
        const size_t i = full_segments * 32 + lane;
        const float s = warp_sum(i < n ? in[i] : 0.0f);
        if (lane == 0) sums[full_segments] = s;
    }
}

extern "C" cudaError_t segment_sum(const float* in, float* sums, size_t n, cudaStream_t stream) {
    // One wave of blocks, but no more warps than there are chunks; one block, at least, also
    // serves n < 128, which may have no whole chunk.
    const size_t chunks = (n / 32 + 3) / 4;
    unsigned int grid = 0;
    cudaError_t err =
        one_wave_grid(kBlockSize, (chunks + kWarpsPerBlock - 1) / kWarpsPerBlock, &grid);
    if (err != cudaSuccess) return err;
    segment_sum_kernel<<<grid, kBlockSize, 0, stream>>>(in, sums, n);
    return cudaGetLastError();
}
