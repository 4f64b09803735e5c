// Lesson 05, step 5 — reduce, then scan: a running carry across tiles (solution).
//
// Teaches: saving a pass over the output. Step 4 writes the output, then reads and writes it
// again to add the tile prefixes (16n bytes). Here the input is read twice and the output
// written once (12n bytes):
//
//   pass 1 (reduce):  the array is cut into at most 1024 chunks of whole tiles; block c sums
//                     chunk c (float4 loads, lesson 04's block reduce)  -> sums[c]
//   pass 2 (scan):    one block turns the sums into exclusive prefixes:
//                     prefix[c] = sums[0] + ... + sums[c - 1]          (step 3's register tile)
//   pass 3 (scan):    block c walks its chunk tile by tile with a running carry, starting at
//                     prefix[c]: scan the tile (step 3), write carry + the tile's scan, then
//                     carry += the tile's total
//
//   chunk c:  [ tile | tile | tile | ... ]      carry = prefix[c]
//               scan, +carry, carry += total  ->  scan, +carry, carry += total  ->  ...
//
// Chunks are whole tiles, and at least 4 of them (when n allows), so even a small input walks
// several tiles in a chunk. At 2^28 on an H200, 1024 chunks of 256 tiles: one block per chunk,
// all resident at once (one wave, lesson 04).
//
// The carry's trap: the block scan keeps its warp totals in shared memory, and every tile of the
// loop reuses that array. A warp that runs ahead into the next tile would overwrite a total that
// a slower warp has not read yet; a barrier at the end of each tile stops it.
//
// Check:  ./cudalings check 05_scan/05_reduce_then_scan
// Stuck:  ./cudalings hint 05_scan/05_reduce_then_scan

#include "scan.cuh"

constexpr unsigned int kItemsPerThread = 4;                   // one float4 per thread per tile
constexpr unsigned int kBlockSize = kTile / kItemsPerThread;  // 256 threads
constexpr unsigned int kWarps = kBlockSize / 32;
constexpr unsigned int kMaxChunks = 1024;   // pass 2 scans all chunk sums in one tile
constexpr unsigned int kMinChunkTiles = 4;  // a chunk is at least 4 tiles when n allows
constexpr unsigned int kUnroll = 4;         // float4 loads in flight per thread in pass 1
// 8 blocks of 256 per SM (2048 threads, a full SM): the second argument of __launch_bounds__
// makes the compiler keep the kernel within 32 registers per thread so that they fit. The
// chunks are then one wave of blocks (lesson 04, step 5), all resident from the start.
constexpr int kMinBlocksPerSm = 8;
constexpr unsigned int kFullMask = 0xffffffffu;
static_assert(kMaxChunks == kTile, "pass 2 scans the chunk sums as one tile");

__device__ __forceinline__ float warp_inclusive_scan(float v, unsigned int lane) {
    for (unsigned int d = 1; d < 32; d *= 2) {
        const float below = __shfl_up_sync(kFullMask, v, d);
        if (lane >= d) v += below;
    }
    return v;
}

__device__ __forceinline__ float warp_sum(float v) {
    for (unsigned int offset = 16; offset > 0; offset /= 2)
        v += __shfl_down_sync(kFullMask, v, offset);
    return v;
}

// Lesson 04's block reduce: the sum of v over the block, in thread 0.
__device__ float block_sum(float v) {
    __shared__ float warp_sums[kWarps];
    const unsigned int lane = threadIdx.x % 32;
    const unsigned int warp = threadIdx.x / 32;
    v = warp_sum(v);
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < kWarps ? warp_sums[lane] : 0.0f;
        v = warp_sum(v);
    }
    return v;
}

// Step 3's block level: thread t passes the total of its 4 values and gets back the sum of the
// totals of threads 0..t-1 (exclusive); *tile_total gets the sum over the whole block. Uses
// `warp_totals` (shared) and ends with every thread having read it: a caller that calls again
// must put a barrier in between.
__device__ __forceinline__ float block_exclusive_scan(float thread_total, float* warp_totals,
                                                      float* tile_total) {
    const unsigned int lane = threadIdx.x % 32;
    const unsigned int warp = threadIdx.x / 32;
    const float inclusive = warp_inclusive_scan(thread_total, lane);
    float below = __shfl_up_sync(kFullMask, inclusive, 1);
    if (lane == 0) below = 0.0f;
    if (lane == 31) warp_totals[warp] = inclusive;
    __syncthreads();
    if (warp == 0) {
        float w = lane < kWarps ? warp_totals[lane] : 0.0f;
        w = warp_inclusive_scan(w, lane);
        if (lane < kWarps) warp_totals[lane] = w;
    }
    __syncthreads();
    if (warp > 0) below += warp_totals[warp - 1];
    *tile_total = warp_totals[kWarps - 1];
    return below;
}

// Loads the 4 elements of this thread in the tile starting at tile_begin (0 past n).
__device__ __forceinline__ float4 load_tile_pack(const float* in, size_t tile_begin, size_t n) {
    const size_t first = tile_begin + kItemsPerThread * threadIdx.x;
    if (tile_begin + kTile <= n) return reinterpret_cast<const float4*>(in)[first / 4];
    float4 x;
    x.x = first + 0 < n ? in[first + 0] : 0.0f;
    x.y = first + 1 < n ? in[first + 1] : 0.0f;
    x.z = first + 2 < n ? in[first + 2] : 0.0f;
    x.w = first + 3 < n ? in[first + 3] : 0.0f;
    return x;
}

__device__ __forceinline__ void store_tile_pack(float* out, size_t tile_begin, size_t n, float4 x) {
    const size_t first = tile_begin + kItemsPerThread * threadIdx.x;
    if (tile_begin + kTile <= n) {
        reinterpret_cast<float4*>(out)[first / 4] = x;
        return;
    }
    if (first + 0 < n) out[first + 0] = x.x;
    if (first + 1 < n) out[first + 1] = x.y;
    if (first + 2 < n) out[first + 2] = x.z;
    if (first + 3 < n) out[first + 3] = x.w;
}

// Pass 1: sums[c] = the sum of chunk c = elements [c * chunk_elems, (c + 1) * chunk_elems).
__global__ void __launch_bounds__(kBlockSize, kMinBlocksPerSm)
    chunk_sums_kernel(const float* __restrict__ in, size_t n, size_t chunk_elems,
                      float* __restrict__ sums) {
    const size_t begin = static_cast<size_t>(blockIdx.x) * chunk_elems;
    const size_t end = begin + chunk_elems < n ? begin + chunk_elems : n;
    // The chunk's whole float4 packs (a chunk starts at a multiple of 1024: aligned), with
    // kUnroll loads in flight per thread, then the last n % 4 elements of the array.
    const float4* in4 = reinterpret_cast<const float4*>(in);
    const size_t p_begin = begin / 4, p_end = end / 4;
    float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    size_t p = p_begin + threadIdx.x;
    for (; p + (kUnroll - 1) * kBlockSize < p_end; p += kUnroll * kBlockSize) {
        float4 v[kUnroll];
#pragma unroll
        for (unsigned int u = 0; u < kUnroll; ++u) v[u] = __ldg(&in4[p + u * kBlockSize]);
#pragma unroll
        for (unsigned int u = 0; u < kUnroll; ++u) {
            acc.x += v[u].x;
            acc.y += v[u].y;
            acc.z += v[u].z;
            acc.w += v[u].w;
        }
    }
    for (; p < p_end; p += kBlockSize) {
        const float4 v = __ldg(&in4[p]);
        acc.x += v.x;
        acc.y += v.y;
        acc.z += v.z;
        acc.w += v.w;
    }
    float s = (acc.x + acc.y) + (acc.z + acc.w);
    const size_t tail = 4 * p_end + threadIdx.x;  // at most 3 elements, in the last chunk
    if (tail < end) s += in[tail];

    s = block_sum(s);
    if (threadIdx.x == 0) sums[blockIdx.x] = s;
}

// Pass 2: one block; sums[c] becomes the exclusive prefix sums[0] + ... + sums[c - 1], in place.
__global__ void __launch_bounds__(kBlockSize)
    scan_chunk_sums_kernel(float* sums, unsigned int chunks) {
    __shared__ float warp_totals[kWarps];
    float4 x = load_tile_pack(sums, 0, chunks);
    // Exclusive within the thread: 0, x0, x0 + x1, x0 + x1 + x2; the total goes up the levels.
    const float4 own = x;
    x.x = 0.0f;
    x.y = own.x;
    x.z = own.x + own.y;
    x.w = x.z + own.z;
    const float thread_total = x.w + own.w;
    float unused;
    const float below = block_exclusive_scan(thread_total, warp_totals, &unused);
    x.x += below;
    x.y += below;
    x.z += below;
    x.w += below;
    store_tile_pack(sums, 0, chunks, x);
}

// Pass 3: block c rescans chunk c tile by tile, starting from the chunk's prefix.
__global__ void __launch_bounds__(kBlockSize, kMinBlocksPerSm)
    scan_chunks_kernel(const float* __restrict__ in, float* __restrict__ out, size_t n,
                       size_t chunk_elems, const float* __restrict__ prefixes) {
    __shared__ float warp_totals[kWarps];
    const size_t begin = static_cast<size_t>(blockIdx.x) * chunk_elems;
    const size_t end = begin + chunk_elems < n ? begin + chunk_elems : n;
    const float chunk_prefix = prefixes[blockIdx.x];  // the sum of everything before it

    float carry = chunk_prefix;

    for (size_t tile_begin = begin; tile_begin < end; tile_begin += kTile) {
        float4 x = load_tile_pack(in, tile_begin, n);
        x.y += x.x;
        x.z += x.y;
        x.w += x.z;
        float tile_total;
        const float below = block_exclusive_scan(x.w, warp_totals, &tile_total);
        const float prefix = carry + below;
        x.x += prefix;
        x.y += prefix;
        x.z += prefix;
        x.w += prefix;
        store_tile_pack(out, tile_begin, n, x);
        carry += tile_total;
        // Every warp has read warp_totals for this tile before any warp writes the next tile's.
        __syncthreads();
    }
}

extern "C" cudaError_t inclusive_scan(const float* in, float* out, size_t n, void* workspace,
                                      size_t workspace_bytes, cudaStream_t stream) {
    if (workspace_bytes < scan_workspace_bytes(n) || workspace_bytes < kMaxChunks * sizeof(float))
        return cudaErrorInvalidValue;  // At most one wave of blocks (SMs x blocks per SM), and at
                                       // most kMaxChunks.
    int device = 0, num_sms = 0, threads_per_sm = 0;
    cudaError_t err = cudaGetDevice(&device);
    if (err != cudaSuccess) return err;
    err = cudaDeviceGetAttribute(&num_sms, cudaDevAttrMultiProcessorCount, device);
    if (err != cudaSuccess) return err;
    err = cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device);
    if (err != cudaSuccess) return err;
    size_t max_chunks = static_cast<size_t>(num_sms) * (threads_per_sm / kBlockSize);
    if (max_chunks > kMaxChunks) max_chunks = kMaxChunks;

    // Whole tiles per chunk: enough for at most max_chunks chunks, and at least kMinChunkTiles.
    const size_t tiles = tile_count(n);
    size_t chunk_tiles = (tiles + max_chunks - 1) / max_chunks;
    if (chunk_tiles < kMinChunkTiles) chunk_tiles = kMinChunkTiles;
    const size_t chunk_elems = chunk_tiles * kTile;
    const unsigned int chunks = static_cast<unsigned int>((tiles + chunk_tiles - 1) / chunk_tiles);
    float* sums = static_cast<float*>(workspace);
    chunk_sums_kernel<<<chunks, kBlockSize, 0, stream>>>(in, n, chunk_elems, sums);
    err = cudaGetLastError();
    if (err != cudaSuccess) return err;
    scan_chunk_sums_kernel<<<1, kBlockSize, 0, stream>>>(sums, chunks);
    err = cudaGetLastError();
    if (err != cudaSuccess) return err;
    scan_chunks_kernel<<<chunks, kBlockSize, 0, stream>>>(in, out, n, chunk_elems, sums);
    return cudaGetLastError();
}
