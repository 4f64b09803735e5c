// Lesson 07, step 4 — a stable compaction in a single pass (solution).
//
// Teaches: fusion. Predicate, scan and scatter in one kernel that reads the input once and
// writes only the kept elements: 4n + 4pn bytes, against about 26n for step 1. The scan across
// tiles is lesson 05's decoupled look-back, on counts instead of sums:
//
//   1. a block takes the next tile number from a counter (not blockIdx.x: see below);
//   2. it loads its tile (kTile = 4096 elements, 16 per thread, as float4), finds the kept
//      elements and their ranks in the tile (ballots inside a warp, shared memory across warps);
//   3. thread 0 publishes the tile's count at once: status[tile] = {AGGREGATE, count};
//   4. every warp copies its kept elements into shared memory at their ranks (the tile,
//      compacted, in input order), while warp 0 looks back over the status words of the
//      tiles before it: it adds up their aggregates until it meets an INCLUSIVE prefix, then
//      publishes its own, status[tile] = {INCLUSIVE, prefix + count};
//   5. the block writes the staged elements to out[prefix ..), consecutive threads to
//      consecutive addresses: coalesced stores, however few elements were kept;
//   6. the last tile writes *count.
//
// Three rules make the look-back safe:
//   - one 64-bit word per tile holds the flag *and* the count, written with one store and read
//     with one load: a reader can never see a flag with a stale count;
//   - the status words are read through a `volatile` pointer, so every poll is a real load
//     (a plain load in a loop may be hoisted out of it: a hang);
//   - tile numbers come from an atomic counter in the order blocks *start*, so a tile only ever
//     waits for tiles whose blocks are already running. With tile = blockIdx.x a block could
//     wait for a lower-numbered block that the GPU has not started yet (nothing promises that
//     blocks start in index order), and wait forever.
// The status words and the counter live in the workspace, which holds garbage when we are
// called: one cudaMemsetAsync clears them (flag 0 = nothing published yet).
//
// Check:  ./cudalings check 07_compact/04_single_pass
// Stuck:  ./cudalings hint 07_compact/04_single_pass

#include "compact.cuh"

constexpr unsigned int kBlockSize = 256;
constexpr unsigned int kWarpSize = 32;
constexpr unsigned int kWarps = kBlockSize / kWarpSize;
constexpr unsigned int kFullMask = 0xffffffffu;
constexpr unsigned int kItems = 16;                     // elements per thread
constexpr unsigned int kVecs = kItems / 4;              // float4 loads per thread
constexpr unsigned int kTile = kBlockSize * kItems;     // 4096 elements per tile
constexpr unsigned int kRound = 4 * kWarpSize;          // one float4 per lane: 128 elements
constexpr unsigned int kWarpTile = kWarpSize * kItems;  // a warp's part of the tile: 512
// Between two polls of predecessors that have not published yet, warp 0 sleeps this long,
// rather than hammering L2 with loads that the publishing blocks' stores must queue behind.
constexpr unsigned int kPollSleepNs = 600;

// A status word: the flag in the high half, the tile's count (or inclusive prefix) in the low.
constexpr unsigned long long kAggregate = 1ull << 32;  // low half: this tile's count
constexpr unsigned long long kInclusive = 2ull << 32;  // low half: count of tiles 0..this one
__device__ __forceinline__ unsigned int flag_of(unsigned long long w) {
    return static_cast<unsigned int>(w >> 32);
}
// The workspace: the tile counter, then (256 bytes on) one status word per tile.
constexpr size_t kStatusOffset = 256;

// Warp 0 of tile `tile` (> 0): the number of kept elements in tiles 0 .. tile - 1. Returned in
// every lane.
__device__ unsigned int look_back(const volatile unsigned long long* status, unsigned int tile) {
    const unsigned int lane = threadIdx.x % kWarpSize;
    unsigned int prefix = 0;
    long long end = tile;  // the window: tiles end - 32 .. end - 1; lane l reads end - 1 - l
    while (true) {
        const long long pred = end - 1 - static_cast<long long>(lane);
        unsigned long long word;
        unsigned int inclusive;
        while (true) {
            // Before tile 0 there is nothing: an inclusive prefix of 0.
            word = pred >= 0 ? status[pred] : kInclusive;
            const unsigned int ready = __ballot_sync(kFullMask, flag_of(word) != 0);
            inclusive = __ballot_sync(kFullMask, flag_of(word) == 2);
            // Usable when every lane up to the nearest inclusive prefix has published (or all
            // 32 have): lanes further back do not matter then.
            const unsigned int waiting = ~ready;
            const unsigned int first_waiting = waiting & (0u - waiting);  // its lowest bit
            if (waiting == 0 || (inclusive & (first_waiting - 1)) != 0) break;
            __nanosleep(kPollSleepNs);
        }
        // The nearest inclusive prefix is the lowest such lane (the closest predecessor); the
        // lanes below it contribute their aggregates. No inclusive prefix in the window: all 32
        // aggregates, and the window slides 32 tiles back.
        const unsigned int stop = inclusive != 0 ? __ffs(inclusive) - 1 : kWarpSize - 1;
        unsigned int add = lane <= stop ? static_cast<unsigned int>(word) : 0u;
        for (unsigned int d = kWarpSize / 2; d > 0; d /= 2)
            add += __shfl_xor_sync(kFullMask, add, d);
        prefix += add;
        if (inclusive != 0) return prefix;
        end -= kWarpSize;
    }
}

__global__ void __launch_bounds__(kBlockSize)
    compact_kernel(const float* __restrict__ in, size_t n, float threshold, float* __restrict__ out,
                   unsigned int* __restrict__ count, unsigned int* ticket,
                   volatile unsigned long long* status, unsigned int tiles) {
    __shared__ float stage[kTile];  // the tile's kept elements, compacted: all may be kept
    __shared__ unsigned int warp_totals[kWarps];
    __shared__ unsigned int tile_shared, prefix_shared;
    const unsigned int lane = threadIdx.x % kWarpSize;
    const unsigned int warp = threadIdx.x / kWarpSize;

    // 1. The next tile in the order blocks start.
    if (threadIdx.x == 0) tile_shared = atomicAdd(ticket, 1u);
    __syncthreads();
    const unsigned int tile = tile_shared;

    // 2. Load. Warp w owns elements [w * 512, (w + 1) * 512) of the tile, in kVecs rounds of 128:
    //    in round r, lane l holds the 4 elements 128 r + 4 l .. + 3 (every load is 512 contiguous
    //    bytes per warp). keep has bit 4 r + j for element j of round r.
    const size_t first = static_cast<size_t>(tile) * kTile + warp * kWarpTile + 4 * lane;
    float x[kItems];
    unsigned int keep = 0;
    if (static_cast<size_t>(tile + 1) * kTile <= n) {  // a whole tile: float4 loads
        float4 q[kVecs];
#pragma unroll
        for (unsigned int r = 0; r < kVecs; ++r)
            q[r] = __ldg(reinterpret_cast<const float4*>(in + first + r * kRound));
#pragma unroll
        for (unsigned int r = 0; r < kVecs; ++r) {
            x[4 * r] = q[r].x, x[4 * r + 1] = q[r].y, x[4 * r + 2] = q[r].z, x[4 * r + 3] = q[r].w;
        }
#pragma unroll
        for (unsigned int k = 0; k < kItems; ++k) keep |= (x[k] > threshold ? 1u : 0u) << k;
    } else {  // the last tile, cut by n: element by element, nothing past n is kept
#pragma unroll
        for (unsigned int k = 0; k < kItems; ++k) {
            const size_t i = first + (k / 4) * kRound + k % 4;
            x[k] = i < n ? in[i] : 0.0f;
            keep |= (i < n && x[k] > threshold ? 1u : 0u) << k;
        }
    }

    //    Ranks inside the warp: round by round, lane by lane, element by element (input order).
    //    A ballot per element position gives which lanes keep it; the bits below my lane count
    //    the kept elements of the lanes before me.
    const unsigned int below = (1u << lane) - 1u;
    unsigned int rank[kVecs];  // warp-local rank of my first kept element of round r
    unsigned int warp_count = 0;
#pragma unroll
    for (unsigned int r = 0; r < kVecs; ++r) {
        unsigned int before = 0, round_total = 0;
#pragma unroll
        for (unsigned int j = 0; j < 4; ++j) {
            const unsigned int lanes = __ballot_sync(kFullMask, (keep >> (4 * r + j)) & 1u);
            before += __popc(lanes & below);
            round_total += __popc(lanes);
        }
        rank[r] = warp_count + before;
        warp_count += round_total;
    }
    if (lane == 0) warp_totals[warp] = warp_count;
    __syncthreads();
    unsigned int warp_offset = 0, tile_total = 0;
#pragma unroll
    for (unsigned int w = 0; w < kWarps; ++w) {
        const unsigned int t = warp_totals[w];
        if (w < warp) warp_offset += t;
        tile_total += t;
    }

    // 3. Publish this tile's count at once: successors can use it before we know our prefix.
    //    Tile 0's count is already its inclusive prefix.
    if (threadIdx.x == 0) status[tile] = (tile == 0 ? kInclusive : kAggregate) | tile_total;

#pragma unroll
    for (unsigned int r = 0; r < kVecs; ++r) {
        // 4. Stage the kept elements at their ranks in the tile (this also gives the
        //    predecessors time to publish before warp 0 polls them) ...
        unsigned int pos = warp_offset + rank[r];
#pragma unroll
        for (unsigned int j = 0; j < 4; ++j)
            if ((keep >> (4 * r + j)) & 1u) stage[pos++] = x[4 * r + j];
    }
    //    ... and warp 0 finds how many elements all earlier tiles kept.
    if (warp == 0) {
        const unsigned int prefix = tile == 0 ? 0u : look_back(status, tile);
        if (lane == 0) {
            if (tile != 0) status[tile] = kInclusive | (prefix + tile_total);
            prefix_shared = prefix;
        }
    }
    __syncthreads();
    const unsigned int prefix = prefix_shared;

    // 5. Coalesced stores: thread k writes staged elements k, k + 256, ...
    for (unsigned int k = threadIdx.x; k < tile_total; k += kBlockSize) out[prefix + k] = stage[k];

    // 6. The last tile knows the total.
    if (tile == tiles - 1 && threadIdx.x == 0) *count = prefix + tile_total;
}

extern "C" cudaError_t compact(const float* in, float* out, unsigned int* count, size_t n,
                               float threshold, void* workspace, size_t workspace_bytes,
                               cudaStream_t stream) {
    const size_t tiles = (n + kTile - 1) / kTile;
    if (tiles == 0) {  // n == 0: nothing is kept
        cudaError_t err = cudaMemsetAsync(count, 0, sizeof(unsigned int), stream);
        if (err != cudaSuccess) return err;
        return cudaGetLastError();
    }
    const size_t used = kStatusOffset + tiles * sizeof(unsigned long long);
    if (workspace_bytes < used) return cudaErrorInvalidValue;
    unsigned int* ticket = static_cast<unsigned int*>(workspace);
    auto* status =
        reinterpret_cast<unsigned long long*>(static_cast<char*>(workspace) + kStatusOffset);
    // The counter and every status word start at 0 ("nothing published"): the workspace holds
    // garbage, and a garbage flag could read as a published count.
    cudaError_t err = cudaMemsetAsync(workspace, 0, used, stream);
    if (err != cudaSuccess) return err;
    // One block per tile (n < 2^32, so at most 2^20 tiles).
    compact_kernel<<<static_cast<unsigned int>(tiles), kBlockSize, 0, stream>>>(
        in, n, threshold, out, count, ticket, status, static_cast<unsigned int>(tiles));
    return cudaGetLastError();
}
