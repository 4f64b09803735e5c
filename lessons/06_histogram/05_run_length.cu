// Lesson 06, step 5 — a weighted histogram: lane-private runs.
//
// Teaches: contention is back as soon as the value added is not a constant 1. Each input word
// says "`count` copies of `key`" (rle_key(word), rle_count(word) in the header), and
// bins[key] += count. Step 4's kernel with atomicAdd(&counts[key], count) is correct but
// slow on skewed keys: a runtime addend compiles to ATOMS.ADD, and equal addresses inside one
// warp instruction are applied one after another (README, "Step 5").
//
// The cure is to add before the atomic: each thread keeps a *run* in two registers, a key and
// the counts it has not yet added, and flushes it with one shared atomic when the key changes.
// One run is not enough for a hot key scattered among other keys: they cut its run every few
// words. So each thread keeps two runs, the current one and the heaviest so far; a new key
// flushes the lighter of the two, and the hot key settles in the heavy one, where other keys
// cannot cut it. The kernel around it (step 4's loop, zeroing, merge) is given; its loop
// indices are 32-bit, to keep the kernel at 32 registers or fewer (README).
//
// What to do: add_word, and the last flushes.
// Read "Step 5" in lessons/06_histogram/README.md first.
//
// Check:  ./cudalings check 06_histogram/05_run_length
// Stuck:  ./cudalings hint 06_histogram/05_run_length
//
// As given, this file compiles and runs but counts nothing, so every test fails.

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

// `run` is the current run (the key seen last), `heavy` the heaviest run kept so far. Keep their
// keys different (a key equal to heavy.key never starts a current run), so that a word adds to
// at most one of them.
__device__ __forceinline__ void add_word(unsigned int* counts, Run& run, Run& heavy,
                                         unsigned int word) {
    // TODO(1 of 3, ~6 lines): key = rle_key(word), count = rle_count(word). If key is run.key,
    //   add count to run.pending (the run goes on); else if key is heavy.key, add it to
    //   heavy.pending (the heavy run, interrupted by other keys, goes on); else the current run
    //   ends: TODO 2.
    //
    // TODO(2 of 3, ~8 lines): a new key ends the current run. If run.pending > heavy.pending,
    //   swap run and heavy (the heavier run stays in registers). Then flush the lighter one,
    //   now in `run`, with atomicAdd(&counts[run.key], run.pending), but only if run.pending is
    //   not 0 (before the first words a key is kNoKey, not a bin), and start the new run:
    //   run.key = key, run.pending = count.
    //   Delete the (void) line when you are done.
    (void)counts, (void)run, (void)heavy, (void)word;
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
    // registers they save pay for the second run (README: why 32 registers matter here).
    const uint4* runs4 = reinterpret_cast<const uint4*>(runs);
    const unsigned int n4 = static_cast<unsigned int>(n / 4);
    const unsigned int tid = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned int stride = gridDim.x * blockDim.x;
    unsigned int i = tid;
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
    // TODO(3 of 3, ~2 lines): both runs are still in the registers: flush each of them (if
    //   anything is pending) into counts, or every thread loses them.
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
