// Lesson 03, step 1 — segment sums with __shfl_down_sync.
//
// Teaches: adding values that live in different threads' registers, with no shared memory.
// __shfl_down_sync(mask, v, offset) hands every lane the v of the lane `offset` above it; five
// rounds (offsets 16, 8, 4, 2, 1) leave the sum of the warp's 32 values in lane 0.
//
// The job: sums[s] = in[32 s] + ... + in[32 s + 31] for every segment s; the last segment may
// be partial (n % 32 elements), see warp_shuffle.cuh.
//
// The layout is given, because it is what makes this kernel as fast as DRAM allows (see
// "Step 1" in the README): each lane loads a float4 (4 consecutive floats), so a 32-float
// segment lies in 8 lanes and one warp-wide load covers a *chunk* of 4 segments. Each lane adds
// its 4 floats, then 3 shuffle rounds (offsets 4, 2, 1) finish each segment's sum in the first
// lane of its group of 8. The partial last segment, if any, uses the plain layout: one float
// per lane and 5 rounds.
//
// What to do:
//   1. warp_sum: the 5-round reduction over 32 lanes.
//   2. group8_sum: the 3-round reduction over each group of 8 lanes.
//   3. sum_chunk: add a lane's 4 floats, reduce, and let each group's first lane write.
//   4. the partial last segment at the end of the kernel.
// Read "Shuffles" and "Step 1" in lessons/03_warp_shuffle/README.md first.
//
// Check:  ./cudalings check 03_warp_shuffle/01_segment_sum
// Stuck:  ./cudalings hint 03_warp_shuffle/01_segment_sum
//
// As given, this file compiles and runs but writes nothing, so every test fails.

#include "warp_shuffle.cuh"

constexpr unsigned int kBlockSize = 256;
constexpr unsigned int kWarpsPerBlock = kBlockSize / 32;
// At most 32 registers per thread, so that 8 blocks of 256 threads fit on an SM (2048 x 32 =
// 65,536 registers): the grid is sized for exactly that many (see the README).
constexpr int kMaxRegisters = 32;
// Independent float4 loads each thread has in flight per iteration of the main loop.
constexpr int kUnroll = 3;

// Lane 0 returns the sum of v over the 32 lanes of the warp (other lanes: partial sums).
__device__ __forceinline__ float warp_sum(float v) {
    // TODO(1 of 4, ~2 lines): for offset = 16, 8, 4, 2, 1:  v += __shfl_down_sync(kFullMask, v,
    //   offset). Every lane must run every round (no `if` around the shuffle): the mask says all
    //   32 lanes take part.
    return v;
}

// Lanes 0, 8, 16 and 24 return the sums of v over lanes 0-7, 8-15, 16-23 and 24-31.
__device__ __forceinline__ float group8_sum(float v) {
    // TODO(2 of 4, ~2 lines): the same rounds with offsets 4, 2, 1. (Lane 8 g reads only lanes
    //   8 g + 4, + 2, + 1 of its own group; what the other lanes compute is not used.)
    return v;
}

// A chunk is 4 consecutive segments = 32 float4 packs, one per lane: lane l holds pack l of the
// chunk, so lanes 8 g .. 8 g + 7 hold segment 4 * chunk + g. Called by all 32 lanes together.
__device__ __forceinline__ void sum_chunk(float4 v, size_t chunk, unsigned int lane,
                                          size_t full_segments, float* __restrict__ sums) {
    // TODO(3 of 4, ~4 lines): s = group8_sum(v.x + v.y + v.z + v.w); the segment of this lane
    //   is chunk * 4 + lane / 8; if lane % 8 == 0 and that segment is < full_segments (the last
    //   chunk may hold fewer than 4 whole segments), write sums[segment] = s.
    //   Delete the (void) line when you are done.
    (void)v, (void)chunk, (void)lane, (void)full_segments, (void)sums;
}

__global__ void __maxnreg__(kMaxRegisters)
    segment_sum_kernel(const float* __restrict__ in, float* __restrict__ sums, size_t n) {
    const unsigned int lane = threadIdx.x % 32;
    const size_t warp = (static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
    const size_t num_warps = static_cast<size_t>(gridDim.x) * kWarpsPerBlock;

    const size_t full_segments = n / 32;  // segments with all 32 elements
    const size_t whole_chunks = full_segments / 4;
    const float4* in4 = reinterpret_cast<const float4*>(in);

    // Main loop: kUnroll whole chunks per warp per iteration (grid-stride), loads first. The
    // loop test depends on the warp alone, so all 32 lanes run the same iterations.
    size_t c = warp;
    for (; c + (kUnroll - 1) * num_warps < whole_chunks; c += kUnroll * num_warps) {
        float4 v[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) v[u] = in4[(c + u * num_warps) * 32 + lane];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u)
            sum_chunk(v[u], c + u * num_warps, lane, full_segments, sums);
    }

    // What is left, one chunk at a time; lanes past the last whole segment bring zeros.
    const size_t packs = full_segments * 8;
    for (; c * 4 < full_segments; c += num_warps) {
        const size_t p = c * 32 + lane;
        sum_chunk(p < packs ? in4[p] : make_float4(0.0f, 0.0f, 0.0f, 0.0f), c, lane, full_segments,
                  sums);
    }

    // TODO(4 of 4, ~5 lines): the partial last segment, when n % 32 != 0. Let one warp do it:
    //   the grid's last one (warp == num_warps - 1). Its lane takes element
    //   i = full_segments * 32 + lane, or 0.0f when i >= n (every lane still calls warp_sum:
    //   0 adds nothing), and lane 0 writes the result to sums[full_segments].
}

extern "C" cudaError_t segment_sum(const float* in, float* sums, size_t n, cudaStream_t stream) {
    // One wave of blocks (one_wave_grid, in warp_shuffle.cuh), but no more warps than chunks.
    const size_t chunks = (n / 32 + 3) / 4;
    unsigned int grid = 0;
    cudaError_t err =
        one_wave_grid(kBlockSize, (chunks + kWarpsPerBlock - 1) / kWarpsPerBlock, &grid);
    if (err != cudaSuccess) return err;
    segment_sum_kernel<<<grid, kBlockSize, 0, stream>>>(in, sums, n);
    return cudaGetLastError();
}
