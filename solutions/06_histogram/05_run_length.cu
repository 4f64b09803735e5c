// Lesson 06, step 5 — a weighted histogram: lane-private runs (solution).
//
// Teaches: contention is back as soon as the value added is not a constant 1. The input is a
// run-length-encoded stream: each word says "`count` copies of `key`", and bins[key] += count.
// Step 4's kernel with atomicAdd(&counts[key], count) is correct, but a runtime addend compiles
// to `ATOMS.ADD`, and the lanes of a warp that hit one address are then applied one after
// another *inside* the instruction: on all-same keys it is about 4x slower than on uniform
// ones (README). More copies per block cannot help: the conflict is within one warp.
//
// The cure is to add before the atomic. Each thread keeps a *run* in two registers: a key and
// the sum of its counts not yet added. While the key repeats, it only adds in the register; when
// the key changes, it flushes the run with one shared atomic and starts a new one; at the end it
// flushes what is left. Long runs of one key (all-same, sorted runs) then cost one atomic per
// run instead of one per word, and uniform keys cost what they cost before (every word changes
// the key).
//
// One run is not enough for a hot key *scattered* among others (the hot spot: half the words on
// one bin, the rest uniform). Every other key cuts the hot key's run, after about two words, so
// about 8 of the 32 lanes of each flush instruction flush the hot bin, into one counter, and
// ATOMS.ADD applies them one after another: with one run the hot spot stays far above the other
// distributions (README). So each thread keeps a second run, the *heaviest* it has kept so far.
// A word whose key is either run's only adds in a register; a new key ends the current run, and
// of the two runs the lighter one is flushed. The hot key soon owns the heavy slot, where other
// keys cannot cut it, and costs one atomic per thread, at the end; the atomics left are the
// scattered keys', which seldom meet. Uniform and all-same keys keep their atomic counts (one
// per word; none), for two compares and a few selects more per word.
//
// Registers decide the occupancy here. one_wave_grid sizes the grid by threads and shared memory
// only, so it launches 8 blocks of 256 threads per SM: that holds only while a thread uses at
// most 65,536 / (8 * 256) = 32 registers. With size_t loop indices this kernel needs 36 (6
// blocks per SM, and the grid then runs as one and a third waves); with 32-bit indices, legal
// because n <= 2^28 (histogram.cuh), it needs 30.
//
// Check:  ./cudalings check 06_histogram/05_run_length
// Stuck:  ./cudalings hint 06_histogram/05_run_length

#include "histogram.cuh"

constexpr unsigned int kBlockSize = 256;
constexpr unsigned int kUnroll = 4;           // uint4 loads in flight per thread
constexpr unsigned int kNoKey = 0xffffffffu;  // never a real key: keys are < kMaxSharedBins

// A lane-private run: a key, and how many copies of it this thread has counted in its register
// but not yet added to the block's counters.
struct Run {
    unsigned int key;
    unsigned int pending;
};

// `run` is the current run (the key seen last), `heavy` the heaviest run kept so far. Their keys
// always differ (a key equal to heavy.key never starts a current run), so a word adds to at most
// one of them.
__device__ __forceinline__ void add_word(unsigned int* counts, Run& run, Run& heavy,
                                         unsigned int word) {
    const unsigned int key = rle_key(word);
    const unsigned int count = rle_count(word);
    if (key == run.key) {
        run.pending += count;  // the run goes on
    } else if (key == heavy.key) {
        heavy.pending += count;  // the heavy run, interrupted by other keys, goes on
    } else {
        // A new key ends the current run. Keep the heavier of the two runs in registers and
        // flush the lighter one: one shared atomic for all of it. (pending is 0 only while its
        // key is kNoKey, before the first words, and kNoKey must not be used as an index.)
        if (run.pending > heavy.pending) {
            const Run lighter = heavy;
            heavy = run;
            run = lighter;
        }
        if (run.pending != 0) atomicAdd(&counts[run.key], run.pending);
        run.key = key;
        run.pending = count;
    }
}

__device__ __forceinline__ void add4(unsigned int* counts, Run& run, Run& heavy, const uint4 w) {
    add_word(counts, run, heavy, w.x);
    add_word(counts, run, heavy, w.y);
    add_word(counts, run, heavy, w.z);
    add_word(counts, run, heavy, w.w);
}

__global__ void __launch_bounds__(kBlockSize)
    histogram_rle_kernel(const unsigned int* __restrict__ runs, unsigned int* bins, size_t n,
                         unsigned int num_bins) {
    extern __shared__ unsigned int counts[];  // num_bins counters

    for (unsigned int b = threadIdx.x; b < num_bins; b += blockDim.x) counts[b] = 0;
    __syncthreads();

    Run run{kNoKey, 0};
    Run heavy{kNoKey, 0};
    // 32-bit indices, unlike step 4: n <= 2^28 here, so every index below fits, and the
    // registers they save pay for the second run (header: 30 registers instead of 36).
    const uint4* runs4 = reinterpret_cast<const uint4*>(runs);
    const unsigned int n4 = static_cast<unsigned int>(n / 4);
    const unsigned int tid = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned int stride = gridDim.x * blockDim.x;
    unsigned int i = tid;
    // Step 4's loop. A thread sees four consecutive words per uint4, then jumps a grid ahead:
    // its runs survive across both, so a key that fills a whole region is one run per thread.
    for (; i + (kUnroll - 1) * stride < n4; i += kUnroll * stride) {
        uint4 v[kUnroll];
#pragma unroll
        for (unsigned int u = 0; u < kUnroll; ++u) v[u] = __ldg(&runs4[i + u * stride]);
#pragma unroll
        for (unsigned int u = 0; u < kUnroll; ++u) add4(counts, run, heavy, v[u]);
    }
    for (; i < n4; i += stride) add4(counts, run, heavy, __ldg(&runs4[i]));
    const unsigned int t = 4 * n4 + tid;
    if (t < n) add_word(counts, run, heavy, runs[t]);
    // Both runs are still in registers: without these flushes every thread would lose them.
    if (run.pending != 0) atomicAdd(&counts[run.key], run.pending);
    if (heavy.pending != 0) atomicAdd(&counts[heavy.key], heavy.pending);
    __syncthreads();

    for (unsigned int b = threadIdx.x; b < num_bins; b += blockDim.x) {
        const unsigned int c = counts[b];
        if (c != 0) atomicAdd(&bins[b], c);
    }
}

extern "C" cudaError_t histogram_rle(const unsigned int* runs, unsigned int* bins, size_t n,
                                     unsigned int num_bins, cudaStream_t stream) {
    if (num_bins == 0 || num_bins > kMaxSharedBins) return cudaErrorInvalidValue;
    cudaError_t err = cudaMemsetAsync(bins, 0, num_bins * sizeof(unsigned int), stream);
    if (err != cudaSuccess) return err;

    const size_t shared_bytes = num_bins * sizeof(unsigned int);
    unsigned int grid = 0;
    err = one_wave_grid(kBlockSize, shared_bytes, (n / 4 + kBlockSize - 1) / kBlockSize, &grid);
    if (err != cudaSuccess) return err;
    histogram_rle_kernel<<<grid, kBlockSize, shared_bytes, stream>>>(runs, bins, n, num_bins);
    return cudaGetLastError();
}
