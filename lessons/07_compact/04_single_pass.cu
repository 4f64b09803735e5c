// Lesson 07, step 4 — a stable compaction in a single pass.
//
// Teaches: fusion. Predicate, scan and scatter in one kernel that reads the input once and
// writes only the kept elements. The scan across tiles is lesson 05's decoupled look-back, on
// counts instead of sums:
//
//   1. a block takes the next tile number from a counter (given);
//   2. it loads its tile (8192 elements, 32 per thread, as eight float4) and every warp finds
//      its kept elements and their ranks in the warp (given: two packed warp scans); the warp
//      copies them into its own 1024 slots of a shared buffer at those ranks (TODO 1);
//   3. the warps' counts meet in shared memory, and thread 0 publishes the tile's count at
//      once: status[tile] = {AGGREGATE, count} (given);
//   4. warp 0 looks back over the status words of the tiles before it and publishes
//      status[tile] = {INCLUSIVE, prefix + count} (TODO 2: the look-back);
//   5. every warp writes its staged elements to out[prefix + (kept by the warps before it) ..),
//      coalesced (TODO 3);
//   6. the last tile writes *count (TODO 4).
//
// One 64-bit status word per tile holds the flag and the count, written with one store and
// read with one load through a `volatile` pointer; the launcher (given) clears them and the
// counter with one cudaMemsetAsync. Why tiles of 8192 and a staging area per warp: the
// constants below, and "Step 4" in lessons/07_compact/README.md (read it first).
//
// Check:  ./cudalings check 07_compact/04_single_pass
// Stuck:  ./cudalings hint 07_compact/04_single_pass
//
// As given, this file compiles and runs but writes neither out nor *count, so every test fails.

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
// would find them unpublished, or only aggregates, and cost more polls. (4 us: measured best on
// an H100, where 1 us cost 8% and 6 us much more: the README's step 4 says why.)
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
    // TODO(2 of 4, ~25 lines): the decoupled look-back, in warp 0 (all 32 lanes run this).
    //   - __nanosleep(kLookbackDelayNs) first: the predecessors are probably still loading.
    //   - The window: tiles end - 32 .. end - 1, starting with end = tile; lane l reads
    //     status[end - 1 - l] (a tile before 0 reads as {INCLUSIVE, 0}). Repeat:
    //   - poll: read the lane's word; ready = __ballot_sync(kFullMask, flag_of(word) != 0),
    //     inclusive = __ballot_sync(kFullMask, flag_of(word) == 2). The window is usable when
    //     every lane below the lowest inclusive lane has published (or all 32 have); otherwise
    //     __nanosleep(kPollDelayNs) and read again. (status is volatile: every read is a load.)
    //   - the nearest inclusive prefix is the lowest lane in `inclusive` (__ffs(inclusive) - 1);
    //     sum the low halves (the counts) of the lanes up to and including it, or of all 32
    //     lanes when there is none (a warp sum with __shfl_xor_sync, so every lane has it);
    //   - prefix += that sum; if there was an inclusive prefix, return prefix; otherwise slide
    //     the window 32 tiles back (end -= 32) and repeat.
    //   Delete the (void) line and the placeholder return when you are done.
    (void)status, (void)tile, (void)kLookbackDelayNs, (void)kPollDelayNs;
    return 0;  // placeholder: as if no earlier tile kept anything
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
    [[maybe_unused]] unsigned int before[kPacks], totals[kPacks];  // used by TODO 1
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

    //    Stage at once, in the warp's own part of the buffer: no other warp reads or writes
    //    it, so no barrier is needed first, and x is dead as soon as it is staged.
    unsigned int warp_count = 0;  // kept by this warp in the rounds so far (same in all lanes)
    // TODO(1 of 4, ~10 lines): declare __shared__ float stage[kTile] at the top of the kernel
    //   (every element may be kept) and give this warp its 1024 slots:
    //   float* const warp_stage = stage + warp * kWarpTile. Then, for every round r = 0 ..
    //   kVecs - 1, with b = r % 4 the round's byte in before[r / 4] and totals[r / 4]:
    //   - pos = warp_count + byte b of before[r / 4], that is (before[r / 4] >> 8 b) & 0xff:
    //     the warp's kept elements of the earlier rounds, then this round's of the lanes
    //     before mine;
    //   - for j = 0..3: if bit 4 r + j of keep is set, warp_stage[pos++] = x[4 r + j];
    //   - warp_count += byte b of totals[r / 4] (this round's count in the whole warp).
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

    // 5. TODO(3 of 4, ~2 lines): coalesced stores, warp by warp. The warp's staged elements go
    //    to out[prefix + warp_offset ..): lane l writes warp_stage[k] to
    //    out[prefix + warp_offset + k] for k = l, l + 32, ... below warp_count. Consecutive
    //    lanes, consecutive addresses. (The reference stores with __stcs(&dst, value), a
    //    streaming store: about 1% at p = 0.5 on an H100; a plain store passes the goal too.)
    //    Delete the (void) line when you are done.
    (void)out, (void)prefix, (void)warp_offset;

    // 6. TODO(4 of 4, ~2 lines): the last tile (tile == tiles - 1) knows the total: thread 0
    //    writes *count = prefix + tile_total. Delete the (void) line when you are done.
    (void)count, (void)tiles;
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
