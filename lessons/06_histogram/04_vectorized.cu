// Lesson 06, step 4 — uint4 loads, and the question of how many copies.
//
// Teaches: once contention is gone, bytes in flight decide (lessons 01 and 04). Every load is
// now a uint4 of four keys, and kUnroll = 4 loads are issued before the first key is counted:
// 64 bytes in flight per thread instead of 4. The counting is step 3's.
//
// It also asks whether more copies per block help: with copies > 1, warp w counts into copy
// w % copies and the merge adds the copies up. The launcher (given) fits as many as kCopies
// copies into 48 KiB. Solve it with kCopies = 1, then try 8 and compare the timing columns.
//
// What to do: pick the warp's copy, write the vectorized loop, merge the copies.
// Read "Step 4" in lessons/06_histogram/README.md first.
//
// Check:  ./cudalings check 06_histogram/04_vectorized
// Stuck:  ./cudalings hint 06_histogram/04_vectorized
//
// As given, this file compiles and runs but counts nothing, so every test fails.

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
__device__ __forceinline__ unsigned int* warp_copy(unsigned int* counts, unsigned int num_bins,
                                                   unsigned int copies) {
    // TODO(1 of 3, ~1 line): copy number (warp index % copies) starts at counts + copy *
    //   num_bins; the warp index is threadIdx.x / kWarpSize. All lanes of a warp share a copy.
    //   Delete the (void) line when you are done.
    (void)num_bins, (void)copies, (void)kWarpSize;
    return counts;  // placeholder: copy 0 for every warp
}

__global__ void __launch_bounds__(kBlockSize)
    histogram_kernel(const unsigned int* __restrict__ keys, unsigned int* bins, size_t n,
                     unsigned int num_bins, unsigned int copies) {
    extern __shared__ unsigned int counts[];  // `copies` consecutive copies of num_bins counters

    for (unsigned int b = threadIdx.x; b < copies * num_bins; b += blockDim.x) counts[b] = 0;
    __syncthreads();

    unsigned int* mine = warp_copy(counts, num_bins, copies);

    // TODO(2 of 3, ~12 lines): count every key into `mine`:
    //   - keys4 = reinterpret_cast<const uint4*>(keys) (16-byte aligned: cudaMalloc gives 256);
    //     n4 = n / 4 packs; tid = this thread's global index; stride = threads in the grid;
    //   - main loop: for (i = tid; i + (kUnroll - 1) * stride < n4; i += kUnroll * stride)
    //       load all kUnroll packs v[u] = __ldg(&keys4[i + u * stride]) into a small array,
    //       then count4(mine, v[u]) each. Put #pragma unroll on both inner loops;
    //   - then the packs left over (fewer than kUnroll per thread), one at a time;
    //   - then the last n % 4 keys: thread tid counts keys[4 * n4 + tid] if that is below n.
    //   Delete the (void) line when you are done.
    (void)keys, (void)n, (void)mine, (void)kUnroll;
    __syncthreads();

    // TODO(3 of 3, ~4 lines): merge with a block-stride loop over b < num_bins: add up bin b of
    //   every copy (counts[k * num_bins + b] for k < copies) and, if the sum is not zero,
    //   atomicAdd it to bins[b].
    (void)bins;
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
