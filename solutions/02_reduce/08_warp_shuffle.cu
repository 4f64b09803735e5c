// Lesson 02, step 8 — warp shuffle for the last levels (solution).
//
// Teaches: exchanging values between the lanes of a warp without shared memory.
// __shfl_down_sync(mask, v, d) returns the v of the lane d places higher, straight from its
// registers. Five shuffles (d = 16, 8, 4, 2, 1) sum a warp's 32 values into lane 0. The block
// then needs shared memory only for one value per warp (8 floats for 256 threads), one
// barrier, and a last warp-level sum of those 8 values. Step 7's grid-stride accumulation is
// unchanged.
//
// Why it is better: a shuffle is one instruction that moves a register from lane to lane;
// the shared-memory round it replaces is a store, a __syncwarp, a load and another
// __syncwarp. The block's tree had 8 rounds, 2 of them with __syncthreads; now it is two
// rounds of shuffles and one barrier. And the mask says which lanes take part, so the code is
// correct by construction under independent thread scheduling.
//
// Check:  ./cudalings check 02_reduce/08_warp_shuffle
// Stuck:  ./cudalings hint 02_reduce/08_warp_shuffle

#include "reduce.cuh"

constexpr unsigned int kBlockSize = 256;

// The sum of v over the 32 lanes of the warp, in lane 0. After the round with distance d,
// each lane k < d holds the sum of the lanes k, k + d, k + 2d, ...: 16 values fold onto 16
// lanes, then 8, 4, 2, 1. (A lane whose partner would be past lane 31 gets its own value
// back; the sums of lanes >= d are garbage that no lane below them ever reads.)
__device__ float warp_reduce_sum(float v) {
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) {
        v += __shfl_down_sync(0xffffffffu, v, d);  // mask: all 32 lanes take part
    }
    return v;
}

// The sum of v over the kBlock threads of the block, in thread 0.
template <unsigned int kBlock>
__device__ float block_reduce_sum(float v) {
    static_assert(kBlock % 32 == 0 && kBlock <= 1024, "whole warps, at most 1024 threads");
    constexpr unsigned int kWarps = kBlock / 32;
    __shared__ float warp_sums[kWarps];
    const unsigned int lane = threadIdx.x % 32;
    const unsigned int warp = threadIdx.x / 32;

    v = warp_reduce_sum(v);  // 1. every warp sums its own 32 values
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();  // 2. the kWarps sums are in shared memory
    if (warp == 0) {  // 3. warp 0 sums them (lanes >= kWarps add 0)
        v = lane < kWarps ? warp_sums[lane] : 0.0f;
        v = warp_reduce_sum(v);
    }
    // This kernel calls block_reduce_sum once. Calling it twice in a row would need a
    // __syncthreads() here, so the second call does not overwrite warp_sums while warp 0 of
    // the first still reads them.
    return v;
}

// One partial sum per block of the grid, as in step 7.
template <unsigned int kBlock>
__global__ void reduce_kernel(const float* __restrict__ in, size_t n, float* __restrict__ out) {
    float sum = 0.0f;
    const size_t stride = 2 * static_cast<size_t>(gridDim.x) * kBlock;
    for (size_t i = static_cast<size_t>(blockIdx.x) * (2 * kBlock) + threadIdx.x; i < n;
         i += stride) {
        const float a = in[i];
        const float b = i + kBlock < n ? in[i + kBlock] : 0.0f;
        sum += a + b;
    }
    sum = block_reduce_sum<kBlock>(sum);
    if (threadIdx.x == 0) out[blockIdx.x] = sum;
}

// Step 7's launcher: G blocks write G partial sums, then one block adds them into out.
extern "C" cudaError_t reduce_sum(const float* in, size_t n, float* out, void* workspace,
                                  size_t workspace_bytes, cudaStream_t stream) {
    int device = 0;
    cudaError_t err = cudaGetDevice(&device);
    if (err != cudaSuccess) return err;
    int num_sms = 0;
    err = cudaDeviceGetAttribute(&num_sms, cudaDevAttrMultiProcessorCount, device);
    if (err != cudaSuccess) return err;
    int threads_per_sm = 0;
    err = cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device);
    if (err != cudaSuccess) return err;

    const size_t full_gpu = static_cast<size_t>(num_sms) * (threads_per_sm / kBlockSize);
    const size_t needed = (n + 2 * kBlockSize - 1) / (2 * kBlockSize);
    const size_t capacity = workspace_bytes / sizeof(float);
    size_t grid = needed < full_gpu ? needed : full_gpu;
    if (grid > capacity) grid = capacity;
    if (grid == 0) return cudaErrorInvalidValue;

    if (grid == 1) {
        reduce_kernel<kBlockSize><<<1, kBlockSize, 0, stream>>>(in, n, out);
        return cudaGetLastError();
    }
    float* partials = static_cast<float*>(workspace);
    reduce_kernel<kBlockSize>
        <<<static_cast<unsigned int>(grid), kBlockSize, 0, stream>>>(in, n, partials);
    reduce_kernel<kBlockSize><<<1, kBlockSize, 0, stream>>>(partials, grid, out);
    return cudaGetLastError();
}
