// Lesson 06, step 6 — many bins: key-range slices (solution).
//
// Teaches: when one copy of the bins no longer fits in a block's shared memory, split the bins,
// not the privatization. With 65,536 bins a copy is 256 KiB, more than an H200 block may have
// (227 KiB). So the bins are cut into `slices` ranges of at most kSliceBins = 16,384 (64 KiB),
// and every block owns one range: it reads its share of the keys, counts only those that fall
// in its range, and merges that range. Every key is read once per slice, so the blocks of one
// slice group are numbered next to each other: they start together, read the same keys at
// about the same time, and all but the first find them in L2 instead of DRAM.
//
//   blockIdx.x:  0   1   2   3 | 4   5   6   7 | 8 ...        group = blockIdx.x / slices
//   slice:       0   1   2   3 | 0   1   2   3 | 0 ...        slice = blockIdx.x % slices
//   keys read:   chunk of group 0 | chunk of group 1 | ...
//
// The range test is one unsigned comparison: key - lo < width is false for key < lo too,
// because the subtraction wraps around to a huge number.
//
// 64 KiB of dynamic shared memory is more than the 48 KiB a launch may use by default: the
// kernel's limit must be raised once with cudaFuncSetAttribute(...MaxDynamicSharedMemorySize),
// or the launch fails with cudaErrorInvalidValue.
//
// Check:  ./cudalings check 06_histogram/06_many_bins
// Stuck:  ./cudalings hint 06_histogram/06_many_bins

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
    const unsigned int r = key - lo;  // wraps to a huge value when key < lo
    if (r < width) atomicAdd(&counts[r], 1u);
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
    const unsigned int slice = blockIdx.x % slices;
    const unsigned int group = blockIdx.x / slices;
    const unsigned int groups = gridDim.x / slices;
    const unsigned int lo = slice * slice_bins;
    // The last slice may be narrower: slices * slice_bins can exceed num_bins.
    const unsigned int width = num_bins - lo < slice_bins ? num_bins - lo : slice_bins;

    for (unsigned int b = threadIdx.x; b < width; b += blockDim.x) counts[b] = 0;
    __syncthreads();

    // A grid-stride loop in which the *group* plays the block: all slices of a group read the
    // same packs in the same order.
    const uint4* keys4 = reinterpret_cast<const uint4*>(keys);
    const size_t n4 = n / 4;
    const size_t tid = static_cast<size_t>(group) * blockDim.x + threadIdx.x;
    const size_t stride = static_cast<size_t>(groups) * blockDim.x;
    size_t i = tid;
    for (; i + (kUnroll - 1) * stride < n4; i += kUnroll * stride) {
        uint4 v[kUnroll];
#pragma unroll
        for (unsigned int u = 0; u < kUnroll; ++u) v[u] = __ldg(&keys4[i + u * stride]);
#pragma unroll
        for (unsigned int u = 0; u < kUnroll; ++u) count4_in_slice(counts, v[u], lo, width);
    }
    for (; i < n4; i += stride) count4_in_slice(counts, __ldg(&keys4[i]), lo, width);
    const size_t t = 4 * n4 + tid;
    if (t < n) count_in_slice(counts, keys[t], lo, width);
    __syncthreads();

    for (unsigned int b = threadIdx.x; b < width; b += blockDim.x) {
        const unsigned int c = counts[b];
        if (c != 0) atomicAdd(&bins[lo + b], c);
    }
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

    // Equal slices of at most kSliceBins: 65,536 bins are 4 slices of 16,384; 16,385 bins are 2
    // slices of 8,193 (rather than 16,384 + 1).
    const unsigned int slices = (num_bins + kSliceBins - 1) / kSliceBins;
    const unsigned int slice_bins = (num_bins + slices - 1) / slices;
    const size_t shared_bytes = slice_bins * sizeof(unsigned int);
    if (shared_bytes > kDefaultSharedLimit) {
        // Ask for more than 48 KiB once for this kernel (a cheap host call, no GPU work). The
        // runtime's C function takes the kernel's address as a const void*: this form also
        // builds for the CPU emulator, which lacks the template overload nvcc adds.
        err = cudaFuncSetAttribute(reinterpret_cast<const void*>(sliced_kernel),
                                   cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   static_cast<int>(shared_bytes));
        if (err != cudaSuccess) return err;
    }
    // One wave of blocks, shared out into groups of `slices` blocks; no more groups than there
    // are blocks' worth of packs.
    unsigned int wave = 0;
    err = one_wave_grid(kBlockSize, shared_bytes, static_cast<size_t>(-1), &wave);
    if (err != cudaSuccess) return err;
    size_t groups = wave / slices;
    if (groups > packs_per_block) groups = packs_per_block;
    if (groups == 0) groups = 1;
    const unsigned int grid = static_cast<unsigned int>(groups * slices);
    sliced_kernel<<<grid, kBlockSize, shared_bytes, stream>>>(keys, bins, n, num_bins, slices,
                                                              slice_bins);
    return cudaGetLastError();
}
