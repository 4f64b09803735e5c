// Lesson 07, step 3 — a different contract: any order, one atomic per tile.
//
// Teaches: what "stable" costs, and a queue allocation. If the caller does not need the kept
// elements in input order, a block can skip the scan across blocks: it counts its tile's kept
// elements and *reserves* that many slots with one atomicAdd on the counter, which returns
// where its range starts. Blocks reserve in whatever order they get there, so the tiles'
// ranges come out shuffled: this is compact_unordered, a weaker contract than compact.
//
//   tile 0: 3 kept   atomicAdd(count, 3) -> 0    writes out[0..3)
//   tile 2: 1 kept   atomicAdd(count, 1) -> 3    writes out[3..4)     (tile 2 got there first)
//   tile 1: 2 kept   atomicAdd(count, 2) -> 4    writes out[4..6)
//
// Given: step 2's pack and warp scan, the ranks inside the tile, the memset of the counter.
// Read "Step 3" in lessons/07_compact/README.md first.
//
// Check:  ./cudalings check 07_compact/03_unordered
// Stuck:  ./cudalings hint 07_compact/03_unordered
//
// As given, this file compiles and runs but writes nothing into out: every test that keeps an
// element fails.

#include "compact.cuh"

constexpr unsigned int kBlockSize = 256;
constexpr unsigned int kWarpSize = 32;
constexpr unsigned int kWarps = kBlockSize / kWarpSize;
constexpr unsigned int kFullMask = 0xffffffffu;
constexpr unsigned int kTile = 4 * kBlockSize;  // one float4 per thread

// Step 2's pack: four elements from `first` and which of them are kept.
struct Pack {
    float v[4];
    unsigned int keep;
};

__device__ __forceinline__ Pack load_pack(const float* __restrict__ in, size_t n, size_t first,
                                          float threshold) {
    Pack p;
    if (first + 4 <= n) {
        const float4 q = __ldg(reinterpret_cast<const float4*>(in + first));
        p.v[0] = q.x, p.v[1] = q.y, p.v[2] = q.z, p.v[3] = q.w;
    } else {
        for (unsigned int j = 0; j < 4; ++j) p.v[j] = first + j < n ? in[first + j] : 0.0f;
    }
    p.keep = 0;
    for (unsigned int j = 0; j < 4; ++j)
        if (first + j < n && p.v[j] > threshold) p.keep |= 1u << j;
    return p;
}

__device__ __forceinline__ unsigned int warp_inclusive_scan(unsigned int v) {
    const unsigned int lane = threadIdx.x % kWarpSize;
    for (unsigned int d = 1; d < kWarpSize; d *= 2) {
        const unsigned int other = __shfl_up_sync(kFullMask, v, d);
        if (lane >= d) v += other;
    }
    return v;
}

__global__ void __launch_bounds__(kBlockSize)
    compact_unordered_kernel(const float* __restrict__ in, size_t n, float threshold,
                             float* __restrict__ out, unsigned int* count) {
    __shared__ unsigned int warp_totals[kWarps];
    const unsigned int lane = threadIdx.x % kWarpSize;
    const unsigned int warp = threadIdx.x / kWarpSize;
    const size_t tiles = (n + kTile - 1) / kTile;

    for (size_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        const Pack p = load_pack(in, n, tile * kTile + 4 * threadIdx.x, threshold);
        // The rank of this thread's first kept element inside the tile, as in step 2.
        const unsigned int mine = __popc(p.keep);
        const unsigned int inclusive = warp_inclusive_scan(mine);
        if (lane == kWarpSize - 1) warp_totals[warp] = inclusive;
        __syncthreads();
        unsigned int warp_offset = 0, tile_total = 0;
        for (unsigned int w = 0; w < kWarps; ++w) {
            const unsigned int t = warp_totals[w];
            if (w < warp) warp_offset += t;
            tile_total += t;
        }
        // TODO(1 of 2, ~3 lines): declare `__shared__ unsigned int base;` at the top of the
        //   kernel (the start of this tile's range), then reserve tile_total slots: thread 0 (and
        //   only when tile_total is
        //   not 0) does base = atomicAdd(count, tile_total), the start of this tile's range.
        //   Then __syncthreads(), so every thread sees base.

        // TODO(2 of 2, ~5 lines): if this thread keeps anything (mine != 0): pos = base +
        //   warp_offset + inclusive - mine, and for j = 0..3, if bit j of p.keep is set,
        //   out[pos++] = p.v[j]. Delete the (void) line when you are done.
        (void)out, (void)count, (void)warp_offset, (void)tile_total;

        // The next tile overwrites warp_totals and base: everyone must have read them.
        __syncthreads();
    }
}

extern "C" cudaError_t compact_unordered(const float* in, float* out, unsigned int* count, size_t n,
                                         float threshold, void* workspace, size_t workspace_bytes,
                                         cudaStream_t stream) {
    (void)workspace, (void)workspace_bytes;  // the counter is *count itself
    // The counter starts at 0: the atomics add into it.
    cudaError_t err = cudaMemsetAsync(count, 0, sizeof(unsigned int), stream);
    if (err != cudaSuccess) return err;
    const size_t tiles = (n + kTile - 1) / kTile;
    if (tiles == 0) return cudaGetLastError();
    unsigned int grid = 0;
    err = one_wave_grid(kBlockSize, tiles, &grid);
    if (err != cudaSuccess) return err;
    compact_unordered_kernel<<<grid, kBlockSize, 0, stream>>>(in, n, threshold, out, count);
    return cudaGetLastError();
}
