// Lesson 07, step 2 — a stable compaction by hand: count, scan, scatter.
//
// Teaches: reduce-then-scan on integers (lesson 05), with the ranks of lesson 03. The array is
// cut into at most kMaxChunks chunks of whole tiles (a tile is 1024 elements: one float4 per
// thread of a 256-thread block); each chunk belongs to one block.
//
//   pass 1  block c counts the kept elements of chunk c               -> counts[c]
//   pass 2  one block scans the counts (exclusive) in place            -> counts[c] = offset
//           and writes *count = the total
//   pass 3  block c walks chunk c tile by tile; a kept element goes to
//           offset[c] + carry + (kept elements before it in the tile),
//           carry += the tile's total
//
// Given: load_pack (four elements and their keep bits), the warp scan of lesson 03, the block
// sum of lesson 04, and the launcher. Read "Step 2" in lessons/07_compact/README.md first.
//
// Check:  ./cudalings check 07_compact/02_two_pass
// Stuck:  ./cudalings hint 07_compact/02_two_pass
//
// As given, this file compiles and runs but writes neither out nor *count, so every test fails.

#include "compact.cuh"

constexpr unsigned int kBlockSize = 256;
constexpr unsigned int kWarpSize = 32;
constexpr unsigned int kWarps = kBlockSize / kWarpSize;
constexpr unsigned int kFullMask = 0xffffffffu;
constexpr unsigned int kTile = 4 * kBlockSize;  // one float4 per thread
constexpr unsigned int kMaxChunks = 1024;       // pass 2 scans them with one 1024-thread block

// Four consecutive elements starting at `first` (a multiple of 4), and which of them are kept
// (bit j for element first + j). Elements at or past n are never kept.
struct Pack {
    float v[4];
    unsigned int keep;
};

__device__ __forceinline__ Pack load_pack(const float* __restrict__ in, size_t n, size_t first,
                                          float threshold) {
    Pack p;
    if (first + 4 <= n) {  // a whole float4: one 16-byte load (first is a multiple of 4)
        const float4 q = __ldg(reinterpret_cast<const float4*>(in + first));
        p.v[0] = q.x, p.v[1] = q.y, p.v[2] = q.z, p.v[3] = q.w;
    } else {  // the end of the array: element by element
        for (unsigned int j = 0; j < 4; ++j) p.v[j] = first + j < n ? in[first + j] : 0.0f;
    }
    p.keep = 0;
    for (unsigned int j = 0; j < 4; ++j)
        if (first + j < n && p.v[j] > threshold) p.keep |= 1u << j;
    return p;
}

// Lesson 03, step 3: the inclusive scan of v over the 32 lanes of a warp.
__device__ __forceinline__ unsigned int warp_inclusive_scan(unsigned int v) {
    const unsigned int lane = threadIdx.x % kWarpSize;
    for (unsigned int d = 1; d < kWarpSize; d *= 2) {
        const unsigned int other = __shfl_up_sync(kFullMask, v, d);
        if (lane >= d) v += other;
    }
    return v;
}

// Lesson 04: the sum of v over the block, in thread 0.
__device__ unsigned int block_sum(unsigned int v) {
    __shared__ unsigned int warp_sums[kWarpSize];
    const unsigned int lane = threadIdx.x % kWarpSize;
    const unsigned int warp = threadIdx.x / kWarpSize;
    for (unsigned int d = kWarpSize / 2; d > 0; d /= 2) v += __shfl_down_sync(kFullMask, v, d);
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < blockDim.x / kWarpSize ? warp_sums[lane] : 0;
        for (unsigned int d = kWarpSize / 2; d > 0; d /= 2) v += __shfl_down_sync(kFullMask, v, d);
    }
    return v;
}

// Pass 1: counts[c] = the number of kept elements in chunk c (tiles [c * tiles_per_chunk, ...)).
__global__ void __launch_bounds__(kBlockSize)
    count_kernel(const float* __restrict__ in, size_t n, float threshold,
                 unsigned int tiles_per_chunk, size_t tiles, unsigned int* __restrict__ counts) {
    const size_t begin = static_cast<size_t>(blockIdx.x) * tiles_per_chunk;
    const size_t end = begin + tiles_per_chunk < tiles ? begin + tiles_per_chunk : tiles;
    unsigned int mine = 0;
    // TODO(1 of 3, ~4 lines): for every tile of the chunk (tile = begin .. end - 1), load this
    //   thread's pack with load_pack(in, n, tile * kTile + 4 * threadIdx.x, threshold) and add
    //   the number of its keep bits (__popc) to mine. Delete the (void) line when you are done.
    (void)in, (void)n, (void)threshold, (void)end;
    const unsigned int total = block_sum(mine);
    if (threadIdx.x == 0) counts[blockIdx.x] = total;
}

// Pass 2, one block of kMaxChunks threads: counts[c] <- counts[0] + ... + counts[c - 1], and
// *count = the sum of all of them.
__global__ void __launch_bounds__(kMaxChunks)
    scan_kernel(unsigned int* __restrict__ counts, unsigned int chunks,
                unsigned int* __restrict__ count) {
    const unsigned int lane = threadIdx.x % kWarpSize;
    const unsigned int warp = threadIdx.x / kWarpSize;
    const unsigned int mine = threadIdx.x < chunks ? counts[threadIdx.x] : 0;

    // TODO(2 of 3, ~11 lines): the exclusive scan of `mine` over the block, in three levels:
    //   - declare __shared__ unsigned int warp_totals[kMaxChunks / kWarpSize] (one per warp);
    //   - inclusive = warp_inclusive_scan(mine); lane 31 writes it to warp_totals[warp];
    //     __syncthreads();
    //   - warp 0 scans the 32 warp totals in place (warp_inclusive_scan of warp_totals[lane]);
    //     __syncthreads();
    //   - before = the totals of the warps before mine (warp_totals[warp - 1], 0 for warp 0);
    //     if threadIdx.x < chunks, counts[threadIdx.x] = before + inclusive - mine (exclusive);
    //   - thread kMaxChunks - 1 writes *count = before + inclusive (the total of all chunks).
    //   Delete the (void) line when you are done.
    (void)lane, (void)warp, (void)mine, (void)count;
}

// Pass 3: every kept element of chunk c to its place, tile by tile, in input order.
__global__ void __launch_bounds__(kBlockSize)
    scatter_kernel(const float* __restrict__ in, size_t n, float threshold,
                   unsigned int tiles_per_chunk, size_t tiles,
                   const unsigned int* __restrict__ offsets, float* __restrict__ out) {
    const unsigned int lane = threadIdx.x % kWarpSize;
    const unsigned int warp = threadIdx.x / kWarpSize;
    const size_t begin = static_cast<size_t>(blockIdx.x) * tiles_per_chunk;
    const size_t end = begin + tiles_per_chunk < tiles ? begin + tiles_per_chunk : tiles;

    // TODO(3 of 3, ~22 lines): declare __shared__ unsigned int warp_totals[kWarps] and
    //   carry = offsets[blockIdx.x] (the kept elements before this chunk), then for every tile
    //   of the chunk:
    //   - p = load_pack(...) as in pass 1; mine = __popc(p.keep);
    //   - inclusive = warp_inclusive_scan(mine); lane 31 writes it to warp_totals[warp];
    //     __syncthreads();
    //   - from the kWarps totals: warp_offset = the sum of those before my warp, tile_total =
    //     the sum of all of them;
    //   - pos = carry + warp_offset + (inclusive - mine); for j = 0..3, if bit j of p.keep is
    //     set, out[pos++] = p.v[j] (in order: that is what keeps the output stable);
    //   - carry += tile_total; and __syncthreads() before the next tile overwrites warp_totals.
    //   Delete the (void) line when you are done.
    (void)in, (void)n, (void)threshold, (void)out, (void)lane, (void)warp, (void)end, (void)offsets,
        (void)kWarps;
}

extern "C" cudaError_t compact(const float* in, float* out, unsigned int* count, size_t n,
                               float threshold, void* workspace, size_t workspace_bytes,
                               cudaStream_t stream) {
    if (workspace_bytes < kMaxChunks * sizeof(unsigned int)) return cudaErrorInvalidValue;
    unsigned int* counts = static_cast<unsigned int*>(workspace);
    const size_t tiles = (n + kTile - 1) / kTile;
    if (tiles == 0) {  // n == 0: nothing is kept
        cudaError_t err = cudaMemsetAsync(count, 0, sizeof(unsigned int), stream);
        if (err != cudaSuccess) return err;
        return cudaGetLastError();
    }

    // At most kMaxChunks chunks of whole tiles, every chunk non-empty.
    const size_t first_try = tiles < kMaxChunks ? tiles : kMaxChunks;
    const unsigned int tiles_per_chunk =
        static_cast<unsigned int>((tiles + first_try - 1) / first_try);
    const unsigned int chunks =
        static_cast<unsigned int>((tiles + tiles_per_chunk - 1) / tiles_per_chunk);

    count_kernel<<<chunks, kBlockSize, 0, stream>>>(in, n, threshold, tiles_per_chunk, tiles,
                                                    counts);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) return err;
    scan_kernel<<<1, kMaxChunks, 0, stream>>>(counts, chunks, count);
    err = cudaGetLastError();
    if (err != cudaSuccess) return err;
    scatter_kernel<<<chunks, kBlockSize, 0, stream>>>(in, n, threshold, tiles_per_chunk, tiles,
                                                      counts, out);
    return cudaGetLastError();
}
