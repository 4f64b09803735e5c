// Lesson 07, step 4 — a stable compaction in a single pass (solution).
//
// Teaches: fusion. Predicate, scan and scatter in one kernel that reads the input once and
// writes only the kept elements: 4n + 4pn bytes, against about 26n for step 1. The scan across
// tiles is lesson 05's decoupled look-back, on counts instead of sums:
//
//   1. a block takes the next tile number from a counter (not blockIdx.x: see below);
//   2. it loads its tile (kTile = 8192 elements, 32 per thread, as eight float4); every warp
//      finds its kept elements and their ranks in the warp, and copies them into its own 1024
//      slots of a shared buffer at those ranks: the warp's part of the tile, compacted, in order;
//   3. the warps' counts meet in shared memory; thread 0 publishes the tile's count at once:
//      status[tile] = {AGGREGATE, count};
//   4. warp 0 looks back over the status words of the tiles before it: it adds up their
//      aggregates until it meets an INCLUSIVE prefix, then publishes its own,
//      status[tile] = {INCLUSIVE, prefix + count};
//   5. every warp writes its staged elements to out[prefix + (kept by the warps before it) ..),
//      consecutive lanes to consecutive addresses: coalesced stores, however few were kept;
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
// Why 8192 elements per tile. A block's loads are in flight only while it loads: before that it
// waits for its ticket (an L2 round trip), after that it ranks, stages, looks back and stores.
// So the bytes an SM keeps in flight are about (resident blocks) x (bytes of a tile): too few,
// and the kernel waits on latency instead of using the DRAM bandwidth. Residency is set by
// registers: ptxas gives this kernel 48 per thread, so 65536 / (48 x 256) = 5 blocks of
// 256 threads per SM (__launch_bounds__(256, 5); at 6 blocks, 40 registers, ptxas spills).
// With 4096-element tiles that is 5 x 16 KiB of loads per SM; with 8192, 5 x 32 KiB, and half
// as many tiles: half the tickets, status words and look-backs. (Lesson 05's look-back uses
// 8192-element tiles too.) Two choices keep 32 elements per thread within 48 registers:
//   - each warp stages its kept elements in its own part of `stage` as soon as it has their
//     ranks, with no barrier first, so the 32 loaded values die early. The block meets only
//     for the tile's count; each warp then stores its own run;
//   - the ranks come from two packed warp scans instead of a ballot per element position (32
//     ballots and 64 popcounts per thread): a round's count (0..4 kept) fits in a byte, so one
//     word holds four rounds' counts, and one scan of that word scans all four at once.
// The staging buffer is 32 KiB per block: 5 x 32 KiB of the 228 KiB of shared memory per SM.
// And warp 0 sleeps kLookbackDelayNs after publishing its aggregate, before its first poll:
// the tiles just before it started at about the same time and are still loading (lesson 05's
// step 7 measured that this delay matters more than the one between polls).
//
// Check:  ./cudalings check 07_compact/04_single_pass
// Stuck:  ./cudalings hint 07_compact/04_single_pass

#include "compact.cuh"

constexpr unsigned int kBlockSize = 256;
constexpr unsigned int kWarpSize = 32;
constexpr unsigned int kWarps = kBlockSize / kWarpSize;
constexpr unsigned int kFullMask = 0xffffffffu;
constexpr unsigned int kItems = 32;                     // elements per thread: keep has 32 bits
constexpr unsigned int kVecs = kItems / 4;              // float4 loads per thread: 8 rounds
constexpr unsigned int kPacks = kVecs / 4;              // four rounds' counts per packed word
constexpr unsigned int kTile = kBlockSize * kItems;     // 8192 elements per tile
constexpr unsigned int kRound = 4 * kWarpSize;          // one float4 per lane: 128 elements
constexpr unsigned int kWarpTile = kWarpSize * kItems;  // a warp's part of the tile: 1024
static_assert(kItems <= 32 && kVecs % 4 == 0, "keep is one 32-bit word; rounds pack by four");
// One tile per block: while a block waits (for its ticket, its loads, its look-back) its SM
// can only keep other blocks' loads in flight. 5 blocks of 256 threads fit when a thread needs
// at most 48 registers (65536 per SM), and their staging 5 x 32 KiB of shared memory.
constexpr unsigned int kMinBlocksPerSM = 5;
// After publishing its aggregate, warp 0 sleeps this long before its first poll: the tiles
// just before it started at about the same time and are still loading; reading them now
// would find them unpublished, or only aggregates, and cost more polls. A block lives about
// 12 us on an H100 (5 blocks per SM, 132 SMs, 32768 tiles in about 590 us), so 4 us is a third
// of it: on the H100 1 us gave 1.09x CUB and 3-4 us 1.17-1.19x, while 6 us fell to 1.06x and
// 0.96x (a sleeping block holds its SM's slot: fewer loads in flight). bench/compact_sweep.
constexpr unsigned int kLookbackDelayNs = 4000;
// Between two polls of predecessors that have not published yet, warp 0 sleeps this long,
// rather than hammering L2 with loads that the publishing blocks' stores must queue behind.
constexpr unsigned int kPollDelayNs = 300;

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
    __nanosleep(kLookbackDelayNs);
    // dev: not covered (a second window only past 32 waiting tiles)
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
            __nanosleep(kPollDelayNs);
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
        // dev: not covered (the window moves back only past 32 waiting tiles)
        end -= kWarpSize;
    }
}

// Lesson 03's inclusive warp scan (lane l gets v of lanes 0..l), on a word that packs four
// counts in its four bytes: the additions never carry from one byte into the next, so it scans
// the four counts at once.
__device__ __forceinline__ unsigned int warp_inclusive_scan(unsigned int v, unsigned int lane) {
#pragma unroll
    for (unsigned int d = 1; d < kWarpSize; d *= 2) {
        const unsigned int other = __shfl_up_sync(kFullMask, v, d);
        if (lane >= d) v += other;
    }
    return v;
}

__global__ void __launch_bounds__(kBlockSize, kMinBlocksPerSM)
    compact_kernel(const float* __restrict__ in, size_t n, float threshold, float* __restrict__ out,
                   unsigned int* __restrict__ count, unsigned int* ticket,
                   volatile unsigned long long* status, unsigned int tiles) {
    // Warp w's kept elements, compacted, in stage[w * 1024 ..): all 1024 may be kept.
    __shared__ float stage[kTile];
    __shared__ unsigned int warp_totals[kWarps];
    __shared__ unsigned int tile_shared, prefix_shared;
    const unsigned int lane = threadIdx.x % kWarpSize;
    const unsigned int warp = threadIdx.x / kWarpSize;

    // 1. The next tile in the order blocks start.
    if (threadIdx.x == 0) tile_shared = atomicAdd(ticket, 1u);
    __syncthreads();
    const unsigned int tile = tile_shared;

    // 2. Load. Warp w owns elements [w * 1024, (w + 1) * 1024) of the tile, in kVecs rounds of
    //    128: in round r, lane l holds the 4 elements 128 r + 4 l .. + 3 (every load is 512
    //    contiguous bytes per warp). keep has bit 4 r + j for element j of round r.
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

    //    Ranks inside the warp. Input order is round by round, lane by lane, element by
    //    element, so an element's rank is: the warp's kept elements of the earlier rounds, plus
    //    those of the lanes before me in this round, plus mine before it. The middle term, for
    //    four rounds at once: byte b of `packed` is my count in round 4 p + b, and a warp scan
    //    of it gives every byte's running sum over the lanes.
    unsigned int before[kPacks], totals[kPacks];
#pragma unroll
    for (unsigned int p = 0; p < kPacks; ++p) {
        unsigned int packed = 0;
#pragma unroll
        for (unsigned int b = 0; b < 4; ++b)
            packed |= __popc((keep >> (16 * p + 4 * b)) & 0xfu) << (8 * b);
        const unsigned int inclusive = warp_inclusive_scan(packed, lane);
        before[p] = inclusive - packed;  // per byte: the lanes before mine (no byte borrows)
        totals[p] = __shfl_sync(kFullMask, inclusive, kWarpSize - 1);  // per byte: the warp's
    }

    //    Stage at once, in the warp's own part of `stage` (so no barrier is needed first): x is
    //    dead after this loop.
    float* const warp_stage = stage + warp * kWarpTile;
    unsigned int warp_count = 0;  // kept by this warp in the rounds so far (same in all lanes)
#pragma unroll
    for (unsigned int r = 0; r < kVecs; ++r) {
        const unsigned int shift = 8 * (r % 4);
        unsigned int pos = warp_count + ((before[r / 4] >> shift) & 0xffu);
#pragma unroll
        for (unsigned int j = 0; j < 4; ++j)
            if ((keep >> (4 * r + j)) & 1u) warp_stage[pos++] = x[4 * r + j];
        warp_count += (totals[r / 4] >> shift) & 0xffu;
    }
    if (lane == 0) warp_totals[warp] = warp_count;
    __syncthreads();

    // 3. The tile's count, and where this warp's elements go in the tile.
    unsigned int warp_offset = 0, tile_total = 0;
#pragma unroll
    for (unsigned int w = 0; w < kWarps; ++w) {
        const unsigned int t = warp_totals[w];
        if (w < warp) warp_offset += t;
        tile_total += t;
    }
    //    Publish the count at once: successors can use it before we know our prefix. Tile 0's
    //    count is already its inclusive prefix.
    if (warp == 0) {
        if (lane == 0) status[tile] = (tile == 0 ? kInclusive : kAggregate) | tile_total;
        // 4. Warp 0 finds how many elements all earlier tiles kept, and publishes the
        //    inclusive prefix.
        const unsigned int prefix = tile == 0 ? 0u : look_back(status, tile);
        if (lane == 0) {
            if (tile != 0) status[tile] = kInclusive | (prefix + tile_total);
            prefix_shared = prefix;
        }
    }
    __syncthreads();
    const unsigned int prefix = prefix_shared;

    // 5. Coalesced stores, warp by warp: lane l writes the warp's staged elements l, l + 32, ...
    //    __stcs: a streaming store (evict first). Nothing here reads `out` again, so its lines
    //    need not push the status words and the input still on its way out of L2.
    float* const warp_out = out + prefix + warp_offset;
    for (unsigned int k = lane; k < warp_count; k += kWarpSize) __stcs(&warp_out[k], warp_stage[k]);

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
    // One block per tile (n < 2^32, so at most 2^19 tiles). 32 KiB of static shared memory:
    // under the 48 KiB a kernel may declare without opting in.
    compact_kernel<<<static_cast<unsigned int>(tiles), kBlockSize, 0, stream>>>(
        in, n, threshold, out, count, ticket, status, static_cast<unsigned int>(tiles));
    return cudaGetLastError();
}
