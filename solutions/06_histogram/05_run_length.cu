// Lesson 06, step 5 — a weighted histogram: lane-private runs, bin copies striped across the
// lanes (solution).
//
// Teaches: contention is back as soon as the value added is not a constant 1. The input is a
// run-length-encoded stream: each word says "`count` copies of `key`", and bins[key] += count.
// Step 4's kernel with atomicAdd(&counts[key], count) is correct, but a runtime addend compiles
// to `ATOMS.ADD`, and the lanes of a warp that hit one address are then applied one after
// another *inside* the instruction: on all-same keys it is about 4x slower than on uniform
// ones (README). Step 4's per-warp copies cannot help: the conflict is within one warp.
//
// The first cure is to add before the atomic. Each thread keeps a *run* in two registers: the
// key it saw last and the sum of the counts it has not yet added. While the key repeats, it only
// adds in the register; when the key changes, it flushes the run with one shared atomic and
// starts a new one; at the end it flushes what is left. Long runs of one key (all-same, sorted
// runs) then cost one atomic per run instead of one per word, and uniform keys cost what they
// cost before (every word changes the key).
//
// Runs do not help a hot key *scattered* among others (the hot spot: half the words on one bin,
// the rest uniform). Every other key cuts the hot key's run after about two words, so in each
// flush instruction about 8 of the 32 lanes flush the hot bin, into one counter, one after
// another (README: 344 us on the hot spot, about 250 on the other three). The second cure is
// copies of the bins that split *a warp*, not the block: lane l adds into copy l % copies, and
// the copies of one bin are neighbours in shared memory (counts[key * copies + copy]), so they
// sit in `copies` different banks. With 8 copies, the lanes of one instruction that hit a given
// bank all belong to one copy, and a copy has 4 lanes of the warp: at most 4 lanes per bank,
// whatever the keys.
//
// What the copies cost: 8x the shared counters (8 KiB per block at 256 bins); zeroing and
// merging 2,048 counters per block, under 1% of the ~254k words a block reads (the merge's
// reads of a bin's 8 neighbours are 8-way bank conflicts, which that share makes negligible);
// one shift and one OR per flush. The launcher halves `copies` until a block's counters fit in
// 16 KiB: 8 up to 512 bins, 4 at 1000, 1 at 4096 (one copy: the one-run kernel).
//
// Registers decide the occupancy here. one_wave_grid sizes the grid by threads and shared memory
// only, so it launches 8 blocks of 256 threads per SM (at 9 KiB of shared memory per block, 25
// would fit): that holds only while a thread uses at most 65,536 / (8 * 256) = 32 registers.
// Left to itself ptxas gives this kernel 38 (6 blocks per SM, and the grid then runs as one and
// a third waves); __launch_bounds__(kBlockSize, 8) asks for 8 blocks per SM, and it fits in 32
// without spilling.
//
// Check:  ./cudalings check 06_histogram/05_run_length
// Stuck:  ./cudalings hint 06_histogram/05_run_length

#include "histogram.cuh"

constexpr unsigned int kBlockSize = 256;
constexpr unsigned int kUnroll = 4;           // uint4 loads in flight per thread
constexpr unsigned int kNoKey = 0xffffffffu;  // never a real key: keys are < kMaxSharedBins
constexpr unsigned int kMaxCopies = 8;        // copies of the bins per block: a power of two
constexpr size_t kCopyBudget = 16 * 1024;     // bytes of counters per block, at most

// A lane-private run: the key this thread saw last, and how many copies of it it has counted
// in its register but not yet added to the block's counters.
struct Run {
    unsigned int key;
    unsigned int pending;
};

// `mine` points at this lane's copy of the bins, and copies = 1 << shift: bin k of the copy is
// mine[k << shift].
__device__ __forceinline__ void add_word(unsigned int* mine, unsigned int shift, Run& run,
                                         unsigned int word) {
    const unsigned int key = rle_key(word);
    if (key != run.key) {
        // The run ends: one shared atomic for all of it. (pending is 0 only before the first
        // word, when run.key is kNoKey and must not be used as an index.)
        if (run.pending != 0) atomicAdd(&mine[run.key << shift], run.pending);
        run.key = key;
        run.pending = 0;
    }
    run.pending += rle_count(word);
}

__device__ __forceinline__ void add4(unsigned int* mine, unsigned int shift, Run& run,
                                     const uint4 w) {
    add_word(mine, shift, run, w.x);
    add_word(mine, shift, run, w.y);
    add_word(mine, shift, run, w.z);
    add_word(mine, shift, run, w.w);
}

// The second argument of __launch_bounds__: at least 8 blocks per SM, so at most 32 registers.
__global__ void __launch_bounds__(kBlockSize, 8)
    histogram_rle_kernel(const unsigned int* __restrict__ runs, unsigned int* bins, size_t n,
                         unsigned int num_bins, unsigned int shift) {
    // num_bins * copies counters, bin-major: the copies of bin b are counts[b * copies + c].
    extern __shared__ unsigned int counts[];
    const unsigned int copies = 1u << shift;

    for (unsigned int b = threadIdx.x; b < num_bins * copies; b += blockDim.x) counts[b] = 0;
    __syncthreads();

    // This lane's copy. blockDim.x is a multiple of 32 and copies divides 32, so threadIdx.x %
    // copies is the lane's index modulo copies: the 32 lanes of a warp cover every copy.
    unsigned int* mine = counts + (threadIdx.x & (copies - 1));

    Run run{kNoKey, 0};
    const uint4* runs4 = reinterpret_cast<const uint4*>(runs);
    const size_t n4 = n / 4;
    const size_t tid = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    size_t i = tid;
    // Step 4's loop. A thread sees four consecutive words per uint4, then jumps a grid ahead:
    // its run survives across both, so a key that fills a whole region is one run per thread.
    for (; i + (kUnroll - 1) * stride < n4; i += kUnroll * stride) {
        uint4 v[kUnroll];
#pragma unroll
        for (unsigned int u = 0; u < kUnroll; ++u) v[u] = __ldg(&runs4[i + u * stride]);
#pragma unroll
        for (unsigned int u = 0; u < kUnroll; ++u) add4(mine, shift, run, v[u]);
    }
    for (; i < n4; i += stride) add4(mine, shift, run, __ldg(&runs4[i]));
    const size_t t = 4 * n4 + tid;
    if (t < n) add_word(mine, shift, run, runs[t]);
    // The last run is still in the registers: without this flush every thread would lose it.
    if (run.pending != 0) atomicAdd(&mine[run.key << shift], run.pending);
    __syncthreads();

    // Merge: the copies of bin b add up to the block's count of b.
    for (unsigned int b = threadIdx.x; b < num_bins; b += blockDim.x) {
        unsigned int c = 0;
        for (unsigned int k = 0; k < copies; ++k) c += counts[(b << shift) + k];
        if (c != 0) atomicAdd(&bins[b], c);
    }
}

extern "C" cudaError_t histogram_rle(const unsigned int* runs, unsigned int* bins, size_t n,
                                     unsigned int num_bins, cudaStream_t stream) {
    if (num_bins == 0 || num_bins > kMaxSharedBins) return cudaErrorInvalidValue;
    cudaError_t err = cudaMemsetAsync(bins, 0, num_bins * sizeof(unsigned int), stream);
    if (err != cudaSuccess) return err;

    // As many copies as the budget holds: 8 up to 512 bins, 4 at 1000, 1 at 4096.
    unsigned int shift = 0;
    while ((2u << shift) <= kMaxCopies &&
           (static_cast<size_t>(num_bins) << (shift + 1)) * sizeof(unsigned int) <= kCopyBudget)
        ++shift;
    const size_t shared_bytes = (static_cast<size_t>(num_bins) << shift) * sizeof(unsigned int);
    unsigned int grid = 0;
    err = one_wave_grid(kBlockSize, shared_bytes, (n / 4 + kBlockSize - 1) / kBlockSize, &grid);
    if (err != cudaSuccess) return err;
    histogram_rle_kernel<<<grid, kBlockSize, shared_bytes, stream>>>(runs, bins, n, num_bins,
                                                                     shift);
    return cudaGetLastError();
}
