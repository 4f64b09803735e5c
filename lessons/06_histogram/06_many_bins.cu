// Lesson 06, step 6 — many bins: key-range slices.
//
// Teaches: when one copy of the bins no longer fits in a block's shared memory, split the bins,
// not the privatization. With 65,536 bins a copy is 256 KiB, more than an H200 block may have
// (227 KiB). So the bins are cut into `slices` ranges of at most kSliceBins = 16,384 (64 KiB),
// and every block owns one range: it reads its share of the keys, counts only those in its
// range, and merges that range. The blocks of one group (the same keys, different slices) are
// numbered next to each other, so they read the same keys at about the same time and all but
// the first find them in L2:
//
//   blockIdx.x:  0   1   2   3 | 4   5   6   7 | 8 ...        group = blockIdx.x / slices
//   slice:       0   1   2   3 | 0   1   2   3 | 0 ...        slice = blockIdx.x % slices
//
// Up to kOneCopyBins bins, the launcher (given) still uses step 4's kernel with one copy.
//
// What to do: the range test, the sliced kernel, and its launch.
// Read "Step 6" in lessons/06_histogram/README.md first.
//
// Check:  ./cudalings check 06_histogram/06_many_bins
// Stuck:  ./cudalings hint 06_histogram/06_many_bins
//
// As given, this file compiles and runs, but with more than kOneCopyBins bins it counts
// nothing, so those tests fail.

#include "histogram.cuh"

constexpr unsigned int kBlockSize = 256;
constexpr unsigned int kUnroll = 4;  // uint4 loads in flight per thread
// A launch may use this much dynamic shared memory without cudaFuncSetAttribute.
constexpr size_t kDefaultSharedLimit = 48 * 1024;
// Up to here one whole copy of the bins fits in the default limit: step 4's kernel.
constexpr unsigned int kOneCopyBins = kDefaultSharedLimit / sizeof(unsigned int);  // 12,288
// The most bins one slice may have: 64 KiB of counters, 3 blocks per H200 SM.
constexpr unsigned int kSliceBins = 16384;

__device__ __forceinline__ void count4(unsigned int* counts, const uint4 k) {
    atomicAdd(&counts[k.x], 1u);
    atomicAdd(&counts[k.y], 1u);
    atomicAdd(&counts[k.z], 1u);
    atomicAdd(&counts[k.w], 1u);
}

// Step 4's kernel with one copy, for num_bins <= kOneCopyBins.
__global__ void __launch_bounds__(kBlockSize)
    one_copy_kernel(const unsigned int* __restrict__ keys, unsigned int* bins, size_t n,
                    unsigned int num_bins) {
    extern __shared__ unsigned int counts[];
    for (unsigned int b = threadIdx.x; b < num_bins; b += blockDim.x) counts[b] = 0;
    __syncthreads();

    const uint4* keys4 = reinterpret_cast<const uint4*>(keys);
    const size_t n4 = n / 4;
    const size_t tid = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    size_t i = tid;
    for (; i + (kUnroll - 1) * stride < n4; i += kUnroll * stride) {
        uint4 v[kUnroll];
#pragma unroll
        for (unsigned int u = 0; u < kUnroll; ++u) v[u] = __ldg(&keys4[i + u * stride]);
#pragma unroll
        for (unsigned int u = 0; u < kUnroll; ++u) count4(counts, v[u]);
    }
    for (; i < n4; i += stride) count4(counts, __ldg(&keys4[i]));
    const size_t t = 4 * n4 + tid;
    if (t < n) atomicAdd(&counts[keys[t]], 1u);
    __syncthreads();

    for (unsigned int b = threadIdx.x; b < num_bins; b += blockDim.x) {
        const unsigned int c = counts[b];
        if (c != 0) atomicAdd(&bins[b], c);
    }
}

// Counts one key into the slice [lo, lo + width) if it falls there.
__device__ __forceinline__ void count_in_slice(unsigned int* counts, unsigned int key,
                                               unsigned int lo, unsigned int width) {
    // TODO(1 of 3, ~2 lines): r = key - lo; if r < width, atomicAdd(&counts[r], 1u). One
    //   unsigned comparison is the whole range test: for key < lo the subtraction wraps around
    //   to a huge number. Delete the (void) line when you are done.
    (void)counts, (void)key, (void)lo, (void)width;
}

__device__ __forceinline__ void count4_in_slice(unsigned int* counts, const uint4 k,
                                                unsigned int lo, unsigned int width) {
    count_in_slice(counts, k.x, lo, width);
    count_in_slice(counts, k.y, lo, width);
    count_in_slice(counts, k.z, lo, width);
    count_in_slice(counts, k.w, lo, width);
}

// Block (group, slice): the keys of `group`'s share, counted into bins [lo, lo + width).
__global__ void __launch_bounds__(kBlockSize)
    sliced_kernel(const unsigned int* __restrict__ keys, unsigned int* bins, size_t n,
                  unsigned int num_bins, unsigned int slices, unsigned int slice_bins) {
    extern __shared__ unsigned int counts[];  // slice_bins counters
    // TODO(2 of 3, ~20 lines): this block's part of the histogram.
    //   - slice = blockIdx.x % slices, group = blockIdx.x / slices, groups = gridDim.x / slices;
    //     lo = slice * slice_bins; width = the slice's bins: slice_bins, or fewer for the last
    //     slice (num_bins - lo, when that is smaller);
    //   - zero counts[0 .. width) with a block-stride loop, then __syncthreads();
    //   - step 4's vectorized loop with the *group* playing the block: the thread's index is
    //     group * blockDim.x + threadIdx.x and the stride is groups * blockDim.x, so every
    //     slice of a group reads the same packs; count each pack with count4_in_slice, and the
    //     last n % 4 keys with count_in_slice;
    //   - __syncthreads(), then merge: every non-zero counts[b] is added to bins[lo + b].
    //   Delete the (void) line when you are done.
    (void)keys, (void)bins, (void)n, (void)num_bins, (void)slices, (void)slice_bins;
}

extern "C" cudaError_t histogram(const unsigned int* keys, unsigned int* bins, size_t n,
                                 unsigned int num_bins, cudaStream_t stream) {
    if (num_bins == 0 || num_bins > kMaxBins) return cudaErrorInvalidValue;
    cudaError_t err = cudaMemsetAsync(bins, 0, num_bins * sizeof(unsigned int), stream);
    if (err != cudaSuccess) return err;
    const size_t packs_per_block = (n / 4 + kBlockSize - 1) / kBlockSize;  // 0 when n < 4

    if (num_bins <= kOneCopyBins) {  // one copy fits: step 4
        const size_t shared_bytes = num_bins * sizeof(unsigned int);
        unsigned int grid = 0;
        err = one_wave_grid(kBlockSize, shared_bytes, packs_per_block, &grid);
        if (err != cudaSuccess) return err;
        one_copy_kernel<<<grid, kBlockSize, shared_bytes, stream>>>(keys, bins, n, num_bins);
        return cudaGetLastError();
    }

    // TODO(3 of 3, ~20 lines): the sliced launch, then delete the placeholder return below.
    //   - slices = ceil(num_bins / kSliceBins); slice_bins = ceil(num_bins / slices) (equal
    //     slices: 16,385 bins are 2 slices of 8,193); shared_bytes = slice_bins * 4;
    //   - above kDefaultSharedLimit (48 KiB) the launch fails with cudaErrorInvalidValue unless
    //     you first raise the kernel's limit: cudaFuncSetAttribute(reinterpret_cast<const
    //     void*>(sliced_kernel), cudaFuncAttributeMaxDynamicSharedMemorySize, shared_bytes)
    //     (check its error; the C form, with the kernel's address, also builds for the CPU
    //     emulator);
    //   - wave = one_wave_grid(kBlockSize, shared_bytes, (size_t)-1, &wave); groups =
    //     wave / slices, at most packs_per_block, at least 1; grid = groups * slices;
    //   - launch sliced_kernel<<<grid, kBlockSize, shared_bytes, stream>>>(...) and return
    //     cudaGetLastError().
    (void)kSliceBins;
    return cudaSuccess;  // placeholder: the bins stay zero
}
