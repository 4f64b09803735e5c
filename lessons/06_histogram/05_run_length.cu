// Lesson 06, step 5 — a weighted histogram: lane-private runs.
//
// Teaches: contention is back as soon as the value added is not a constant 1. Each input word
// says "`count` copies of `key`" (rle_key(word), rle_count(word) in the header), and
// bins[key] += count. Step 4's kernel with atomicAdd(&counts[key], count) is correct but
// slow on skewed keys: a runtime addend compiles to ATOMS.ADD, and equal addresses inside one
// warp instruction are applied one after another (README, "Step 5").
//
// The cure is to add before the atomic: each thread keeps a *run* in two registers, the key it
// saw last and the counts it has not yet added. While the key repeats it adds in the register;
// when the key changes it flushes the run with one shared atomic; at the end it flushes what is
// left. The kernel around it (step 4's loop, zeroing, merge) is given.
//
// What to do: add_word, and the last flush.
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

// A lane-private run: the key this thread saw last, and how many copies of it it has counted
// in its register but not yet added to the block's counters.
struct Run {
    unsigned int key;
    unsigned int pending;
};

__device__ __forceinline__ void add_word(unsigned int* counts, Run& run, unsigned int word) {
    // TODO(1 of 2, ~8 lines): key = rle_key(word). If key differs from run.key, the run ends:
    //   flush it with atomicAdd(&counts[run.key], run.pending) — but only if run.pending is not
    //   0 (before the first word run.key is kNoKey, not a bin) — then start a new run with this
    //   key and nothing pending. In every case add rle_count(word) to run.pending.
    //   Delete the (void) line when you are done.
    (void)counts, (void)run, (void)word;
}

__device__ __forceinline__ void add4(unsigned int* counts, Run& run, const uint4 w) {
    add_word(counts, run, w.x);
    add_word(counts, run, w.y);
    add_word(counts, run, w.z);
    add_word(counts, run, w.w);
}

__global__ void __launch_bounds__(kBlockSize)
    histogram_rle_kernel(const unsigned int* __restrict__ runs, unsigned int* bins, size_t n,
                         unsigned int num_bins) {
    extern __shared__ unsigned int counts[];  // num_bins counters

    for (unsigned int b = threadIdx.x; b < num_bins; b += blockDim.x) counts[b] = 0;
    __syncthreads();

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
        for (unsigned int u = 0; u < kUnroll; ++u) add4(counts, run, v[u]);
    }
    for (; i < n4; i += stride) add4(counts, run, __ldg(&runs4[i]));
    const size_t t = 4 * n4 + tid;
    if (t < n) add_word(counts, run, runs[t]);
    // TODO(2 of 2, ~1 line): the last run is still in the registers: flush it (if anything is
    //   pending) into counts, or every thread loses its last run.
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
