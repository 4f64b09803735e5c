// Lesson 04, step 4 — the whole device sum, with the same bits on every run (solution).
//
// Teaches: how the partials of many blocks become one number, given that blocks cannot wait
// for each other inside a kernel.
//   Pass 1: a grid that fills the GPU once. Each thread adds its elements in a grid-stride loop
//           into a register (hundreds of elements per thread at 2^28, no memory traffic but the
//           reads), then the block reduce of steps 2 and 3 turns the block's 256 registers into
//           one partial, written to the workspace.
//   Pass 2: one block reads the partials (about a thousand) and reduces them to the sum.
// The boundary between the two kernels is the grid-wide barrier: when pass 2 starts, every
// block of pass 1 has finished and its partial is in memory.
//
// Why the same bits every time: float addition is not associative, so a sum's last bits depend
// on the order of its additions. Here the order is fixed: which elements a thread adds (the
// grid size depends only on n and the GPU), the shuffle tree, and pass 2's fixed walk over the
// partials. One atomicAdd per block instead of pass 2 would also be correct (and save the second
// launch), but the partials would then be added in the order the blocks happen to finish, which
// changes from run to run: the checker calls your function five times and compares the bits.
//
// Check:  ./cudalings check 04_block_reduce/04_device_sum
// Stuck:  ./cudalings hint 04_block_reduce/04_device_sum

#include "block_reduce.cuh"

constexpr unsigned int kBlockSize = 256;        // pass 1
constexpr unsigned int kFinalBlockSize = 1024;  // pass 2: one block, as wide as blocks go
constexpr unsigned int kWarpSize = 32;
constexpr unsigned int kFullMask = 0xffffffffu;

__device__ __forceinline__ float warp_sum(float v) {
    for (unsigned int offset = kWarpSize / 2; offset > 0; offset /= 2)
        v += __shfl_down_sync(kFullMask, v, offset);
    return v;
}

// The sum of v over the block, in thread 0. Step 2's block reduce for any blockDim.x that is a
// multiple of 32 (up to 1024: at most 32 warps, so one warp can finish the job).
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
    // Registers are private to a thread: the accumulator costs no memory traffic and needs no
    // synchronisation. Only the block's final value leaves the SM.
    float acc = 0.0f;
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        acc += x[i];

    acc = block_sum(acc);
    if (threadIdx.x == 0) partials[blockIdx.x] = acc;
}

// Pass 2: one block adds the `count` partials in a fixed order.
__global__ void __launch_bounds__(kFinalBlockSize)
    final_sum_kernel(const float* __restrict__ partials, unsigned int count,
                     float* __restrict__ sum) {
    float acc = 0.0f;
    for (unsigned int i = threadIdx.x; i < count; i += blockDim.x) acc += partials[i];
    acc = block_sum(acc);
    if (threadIdx.x == 0) *sum = acc;
}

extern "C" cudaError_t device_sum_deterministic(const float* x, size_t n, float* sum,
                                                void* workspace, size_t workspace_bytes,
                                                cudaStream_t stream) {
    // A function that takes scratch memory checks it got enough, rather than write past it.
    if (workspace_bytes < device_sum_workspace_bytes(n)) return cudaErrorInvalidValue;

    // One full wave, as in lesson 01: every SM holds threads_per_sm / kBlockSize blocks.
    int device = 0;
    cudaError_t err = cudaGetDevice(&device);
    if (err != cudaSuccess) return err;
    int num_sms = 0, threads_per_sm = 0;
    err = cudaDeviceGetAttribute(&num_sms, cudaDevAttrMultiProcessorCount, device);
    if (err != cudaSuccess) return err;
    err = cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device);
    if (err != cudaSuccess) return err;

    size_t grid = static_cast<size_t>(num_sms) * (threads_per_sm / kBlockSize);
    const size_t needed = (n + kBlockSize - 1) / kBlockSize;  // no block without an element
    if (needed < grid) grid = needed;
    if (grid > kMaxBlocks) grid = kMaxBlocks;  // the workspace holds kMaxBlocks partials

    float* partials = static_cast<float*>(workspace);
    partial_sums_kernel<<<static_cast<unsigned int>(grid), kBlockSize, 0, stream>>>(x, n, partials);
    err = cudaGetLastError();
    if (err != cudaSuccess) return err;
    // Same stream: pass 2 starts only when every block of pass 1 has finished.
    final_sum_kernel<<<1, kFinalBlockSize, 0, stream>>>(partials, static_cast<unsigned int>(grid),
                                                        sum);
    return cudaGetLastError();
}
