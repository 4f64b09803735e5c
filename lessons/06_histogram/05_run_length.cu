// Lesson 06, step 5 — a weighted histogram: lane-private runs, bin copies striped across the
// lanes.
//
// Teaches: contention is back as soon as the value added is not a constant 1. Each input word
// says "`count` copies of `key`" (rle_key(word), rle_count(word) in the header), and
// bins[key] += count. Step 4's kernel with atomicAdd(&counts[key], count) is correct but
// slow on skewed keys: a runtime addend compiles to ATOMS.ADD, and equal addresses inside one
// warp instruction are applied one after another (README, "Step 5").
//
// The first cure is to add before the atomic: each thread keeps a *run* in two registers, the
// key it saw last and the counts it has not yet added. While the key repeats it adds in the
// register; when the key changes it flushes the run with one shared atomic; at the end it
// flushes what is left. Runs do not help a hot key scattered among other keys: those cut its
// runs every few words, and about 8 lanes of each flush instruction still meet on the hot bin.
// The second cure is copies of the bins striped across the *lanes*: lane l adds into copy
// l % copies, and the copies of a bin are neighbours in shared memory, in different banks, so
// equal keys of one instruction land on different counters. The launcher (how many copies), the
// zeroing and step 4's loop are given; the kernel stays at 32 registers (README).
//
// What to do: add_word, the lane's copy, the last flush, and the merge of the copies.
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
    // TODO(1 of 4, ~8 lines): key = rle_key(word). If key differs from run.key, the run ends:
    //   flush it with atomicAdd(&mine[run.key << shift], run.pending), but only if run.pending
    //   is not 0 (before the first word run.key is kNoKey, not a bin), then start a new run with
    //   this key and nothing pending. In every case add rle_count(word) to run.pending.
    //   Delete the (void) line when you are done.
    (void)mine, (void)shift, (void)run, (void)word;
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

    // TODO(2 of 4, ~1 line): point `mine` at this lane's copy: counts + the lane's index modulo
    //   copies. blockDim.x is a multiple of 32 and copies divides 32, so threadIdx.x % copies
    //   (or threadIdx.x & (copies - 1)) is it. As given, every lane shares copy 0: right
    //   counts, but the hot spot's lanes meet on one counter again.
    unsigned int* mine = counts;

    Run run{kNoKey, 0};
    const uint4* runs4 = reinterpret_cast<const uint4*>(runs);
    const size_t n4 = n / 4;
    const size_t tid = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    size_t i = tid;
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
    // TODO(3 of 4, ~1 line): the last run is still in the registers: flush it (if anything is
    //   pending) into this lane's copy, or every thread loses its last run.
    __syncthreads();

    // TODO(4 of 4, ~4 lines): merge. For b = threadIdx.x; b < num_bins; b += blockDim.x, add up
    //   the copies of bin b, counts[(b << shift) + k] for k < copies, and atomicAdd the sum into
    //   bins[b] if it is not 0. (Step 3's counts[b] alone reads the wrong counters here.)
    (void)bins;
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
