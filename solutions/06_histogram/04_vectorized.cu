// Lesson 06, step 4 — uint4 loads, and the question of how many copies (solution).
//
// Teaches: once contention is gone, bytes in flight decide (lessons 01 and 04). Step 3 reads
// one key per load; here every load is a uint4 of four keys, and kUnroll = 4 loads are issued
// before the first key is counted, so each thread has 64 bytes in flight instead of 4. The
// counting is step 3's, four atomics per uint4.
//
// It also asks whether more copies per block help: with kCopies > 1, warp w counts into copy
// w % kCopies, so fewer warps share each counter, and the merge adds the copies up. For a +1
// they buy nothing (the hardware already counts a warp's equal keys in one go: README) and
// they cost shared memory, which can cost blocks per SM. The reference keeps kCopies = 1; try 8
// and compare the four distribution columns.
//
// Check:  ./cudalings check 06_histogram/04_vectorized
// Stuck:  ./cudalings hint 06_histogram/04_vectorized

#include "histogram.cuh"

constexpr unsigned int kBlockSize = 256;
constexpr unsigned int kWarpSize = 32;
constexpr unsigned int kUnroll = 4;  // uint4 loads in flight per thread
constexpr unsigned int kCopies = 1;  // copies of the bins per block (at most, see the launcher)
// The dynamic shared memory a block may use without cudaFuncSetAttribute.
constexpr size_t kDefaultSharedLimit = 48 * 1024;

__device__ __forceinline__ void count4(unsigned int* counts, const uint4 k) {
    atomicAdd(&counts[k.x], 1u);
    atomicAdd(&counts[k.y], 1u);
    atomicAdd(&counts[k.z], 1u);
    atomicAdd(&counts[k.w], 1u);
}

// The copy of the bins this thread's warp counts into (one of `copies` consecutive copies).
// All lanes of a warp share it: the conflicts a copy saves are those between warps, never those
// inside one warp instruction.
__device__ __forceinline__ unsigned int* warp_copy(unsigned int* counts, unsigned int num_bins,
                                                   unsigned int copies) {
    return counts + (threadIdx.x / kWarpSize) % copies * num_bins;
}

__global__ void __launch_bounds__(kBlockSize)
    histogram_kernel(const unsigned int* __restrict__ keys, unsigned int* bins, size_t n,
                     unsigned int num_bins, unsigned int copies) {
    extern __shared__ unsigned int counts[];  // `copies` consecutive copies of num_bins counters

    for (unsigned int b = threadIdx.x; b < copies * num_bins; b += blockDim.x) counts[b] = 0;
    __syncthreads();

    unsigned int* mine = warp_copy(counts, num_bins, copies);

    // cudaMalloc'd pointers are 256-byte aligned, so pack j (keys 4j..4j+3) is a legal 16-byte
    // load.
    const uint4* keys4 = reinterpret_cast<const uint4*>(keys);
    const size_t n4 = n / 4;
    const size_t tid = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    size_t i = tid;
    // kUnroll packs at once, each a whole grid apart (so every warp load is 512 contiguous
    // bytes), all issued before the first key is counted.
    for (; i + (kUnroll - 1) * stride < n4; i += kUnroll * stride) {
        uint4 v[kUnroll];
#pragma unroll
        for (unsigned int u = 0; u < kUnroll; ++u) v[u] = __ldg(&keys4[i + u * stride]);
#pragma unroll
        for (unsigned int u = 0; u < kUnroll; ++u) count4(mine, v[u]);
    }
    // Fewer than kUnroll packs left for this thread: one at a time.
    for (; i < n4; i += stride) count4(mine, __ldg(&keys4[i]));
    // The last n % 4 keys (0 to 3): the first threads of the grid take one each.
    const size_t t = 4 * n4 + tid;
    if (t < n) atomicAdd(&mine[keys[t]], 1u);
    __syncthreads();

    // Merge: the copies of bin b add up to the block's count for b.
    for (unsigned int b = threadIdx.x; b < num_bins; b += blockDim.x) {
        unsigned int c = 0;
        for (unsigned int k = 0; k < copies; ++k) c += counts[k * num_bins + b];
        if (c != 0) atomicAdd(&bins[b], c);
    }
}

extern "C" cudaError_t histogram(const unsigned int* keys, unsigned int* bins, size_t n,
                                 unsigned int num_bins, cudaStream_t stream) {
    if (num_bins == 0 || num_bins > kMaxSharedBins) return cudaErrorInvalidValue;
    cudaError_t err = cudaMemsetAsync(bins, 0, num_bins * sizeof(unsigned int), stream);
    if (err != cudaSuccess) return err;

    // As many copies as fit in the default 48 KiB, up to kCopies (one always fits: at most
    // kMaxSharedBins counters are 16 KiB).
    unsigned int copies = kCopies;
    while (copies > 1 && copies * num_bins * sizeof(unsigned int) > kDefaultSharedLimit) --copies;
    const size_t shared_bytes = copies * num_bins * sizeof(unsigned int);

    unsigned int grid = 0;
    err = one_wave_grid(kBlockSize, shared_bytes, (n / 4 + kBlockSize - 1) / kBlockSize, &grid);
    if (err != cudaSuccess) return err;
    histogram_kernel<<<grid, kBlockSize, shared_bytes, stream>>>(keys, bins, n, num_bins, copies);
    return cudaGetLastError();
}
