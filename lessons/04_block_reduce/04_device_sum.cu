// Lesson 04, step 4 — the whole device sum, with the same bits on every run.
//
// Teaches: turning the partials of many blocks into one number. Blocks cannot wait for each
// other inside a kernel, so the sum takes two kernels on the same stream:
//   Pass 1: a grid that fills the GPU once (as in lesson 01, step 2). Each thread adds its
//           elements into a register in a grid-stride loop, the block reduce (given below,
//           from step 2) turns the block's registers into one partial, and thread 0 writes it
//           to the workspace: partials[blockIdx.x].
//   Pass 2: one block of 1024 threads adds the partials and writes *sum.
// The end of pass 1 is a barrier for the whole grid: pass 2 starts only when every partial is
// in memory. And the order of every addition is fixed, so every call gives the same bits; the
// checker calls your function five times on the same input and compares them.
// Read "Step 4" in lessons/04_block_reduce/README.md first.
//
// Check:  ./cudalings check 04_block_reduce/04_device_sum
// Stuck:  ./cudalings hint 04_block_reduce/04_device_sum
//
// As given, this file compiles and runs but never writes *sum, so every test fails.

#include "block_reduce.cuh"

constexpr unsigned int kBlockSize = 256;        // pass 1
constexpr unsigned int kFinalBlockSize = 1024;  // pass 2: one block, as wide as blocks go
constexpr unsigned int kWarpSize = 32;
constexpr unsigned int kFullMask = 0xffffffffu;

// Given: step 2's warp sum (the result in lane 0).
__device__ __forceinline__ float warp_sum(float v) {
    for (unsigned int offset = kWarpSize / 2; offset > 0; offset /= 2)
        v += __shfl_down_sync(kFullMask, v, offset);
    return v;
}

// Given: step 2's block reduce for any blockDim.x that is a multiple of 32 (up to 1024). The
// sum of v over the block, in thread 0. Every thread of the block must call it.
__device__ float block_sum(float v) {
    __shared__ float warp_sums[kWarpSize];
    const unsigned int lane = threadIdx.x % kWarpSize;
    const unsigned int warp = threadIdx.x / kWarpSize;
    const unsigned int warps = blockDim.x / kWarpSize;

    v = warp_sum(v);
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < warps ? warp_sums[lane] : 0.0f;
        v = warp_sum(v);
    }
    return v;
}

// Pass 1: one partial per block.
__global__ void __launch_bounds__(kBlockSize)
    partial_sums_kernel(const float* __restrict__ x, size_t n, float* __restrict__ partials) {
    // TODO(1 of 3, ~6 lines): accumulate, reduce, write.
    //   - float acc = 0; a grid-stride loop (size_t i from this thread's global index, step
    //     gridDim.x * blockDim.x, while i < n) doing acc += x[i];
    //   - acc = block_sum(acc) — every thread, including those whose loop did nothing;
    //   - thread 0 writes partials[blockIdx.x] = acc.
    //   Delete the (void) line when you are done.
    (void)x, (void)n, (void)partials;
}

// Pass 2: one block adds the `count` partials in a fixed order.
__global__ void __launch_bounds__(kFinalBlockSize)
    final_sum_kernel(const float* __restrict__ partials, unsigned int count,
                     float* __restrict__ sum) {
    // TODO(2 of 3, ~5 lines): the same pattern over the partials: acc = the sum of
    //   partials[threadIdx.x], partials[threadIdx.x + blockDim.x], ... below count; then
    //   acc = block_sum(acc); thread 0 writes *sum = acc.
    //   Delete the (void) line when you are done.
    (void)partials, (void)count, (void)sum;
}

extern "C" cudaError_t device_sum_deterministic(const float* x, size_t n, float* sum,
                                                void* workspace, size_t workspace_bytes,
                                                cudaStream_t stream) {
    // Scratch memory comes with its size: check it rather than write past it.
    if (workspace_bytes < device_sum_workspace_bytes(n)) return cudaErrorInvalidValue;

    // TODO(3 of 3, ~10 lines): size pass 1's grid from the GPU, as in lesson 01, step 2:
    //   - cudaGetDevice, then cudaDeviceGetAttribute for cudaDevAttrMultiProcessorCount and
    //     cudaDevAttrMaxThreadsPerMultiProcessor (return any error they give);
    //   - grid = num_sms * (threads_per_sm / kBlockSize), one full wave;
    //   - but no more than ceil(n / kBlockSize) blocks (a block with no element is waste), and
    //     no more than kMaxBlocks (the workspace holds kMaxBlocks partials).
    //   The placeholder below is correct once the kernels are, only slow.
    size_t grid = 1;

    float* partials = static_cast<float*>(workspace);
    partial_sums_kernel<<<static_cast<unsigned int>(grid), kBlockSize, 0, stream>>>(x, n, partials);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) return err;
    // Same stream: pass 2 starts only when every block of pass 1 has finished.
    final_sum_kernel<<<1, kFinalBlockSize, 0, stream>>>(partials, static_cast<unsigned int>(grid),
                                                        sum);
    return cudaGetLastError();
}
