// Lesson 04, step 5 — the fast device sum.
//
// Teaches: what separates a correct reduction from one that runs at the speed of memory. The
// structure is step 4's (given here: block reduce, pass 2, launcher); you rewrite pass 1's
// loop so that each thread keeps many bytes in flight:
//   - float4 loads: 16 bytes per load instruction instead of 4 (lesson 01, step 3);
//   - kUnroll = 4 independent loads issued back to back before any of them is used, so each
//     thread waits for DRAM once per 64 bytes, not once per 4;
//   - a grid of exactly one wave, and __maxnreg__(32) so the compiler keeps the kernel small
//     enough (32 registers per thread) for that whole wave to fit on the SMs at once.
// The checker times cub::DeviceReduce::Sum in the same run: the goal is to match it.
// Read "Step 5" in lessons/04_block_reduce/README.md first.
//
// Check:  ./cudalings check 04_block_reduce/05_fast_device_sum
// Stuck:  ./cudalings hint 04_block_reduce/05_fast_device_sum
//
// As given, this file compiles and runs but adds nothing up (the sum is 0), so every test fails.

#include "block_reduce.cuh"

constexpr unsigned int kBlockSize = 256;
// 32 registers x 2048 threads = 65,536, the register file of one SM: with at most 32 registers
// per thread, a full SM of blocks fits on every GPU this course targets.
constexpr int kMaxRegisters = 32;
constexpr unsigned int kUnroll = 4;  // float4 loads in flight per thread
static_assert(kUnroll >= 1 && kUnroll <= 6,
              "each float4 in flight takes 4 registers; 32 is the budget for a full SM");
constexpr unsigned int kFinalBlockSize = 1024;
constexpr unsigned int kWarpSize = 32;
constexpr unsigned int kFullMask = 0xffffffffu;

__device__ __forceinline__ float warp_sum(float v) {
    for (unsigned int offset = kWarpSize / 2; offset > 0; offset /= 2)
        v += __shfl_down_sync(kFullMask, v, offset);
    return v;
}

// Given: step 4's block reduce (the sum of v over the block, in thread 0).
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

// Pass 1: one partial per block, at the speed of memory.
__global__ void __maxnreg__(kMaxRegisters)
    partial_sums_kernel(const float* __restrict__ x, size_t n, float* __restrict__ partials) {
    // TODO(1 of 3, ~12 lines): the vectorized, unrolled grid-stride loop.
    //   - x4 = reinterpret_cast<const float4*>(x) (16-byte aligned: cudaMalloc gives 256);
    //     n4 = n / 4 packs; tid = this thread's global index; stride = threads in the grid;
    //   - float4 acc = {0, 0, 0, 0}: four independent accumulators;
    //   - main loop: for (i = tid; i + (kUnroll - 1) * stride < n4; i += kUnroll * stride)
    //       first load all kUnroll packs v[u] = __ldg(&x4[i + u * stride]) into a small array,
    //       then add each into acc (acc.x += v[u].x, ...). Put #pragma unroll on both loops, so
    //       the array lives in registers and the loads are issued back to back;
    //   - then the packs left over (fewer than kUnroll per thread), one at a time.
    //
    // TODO(2 of 3, ~3 lines): s = (acc.x + acc.y) + (acc.z + acc.w); then the last n % 4
    //   elements: the thread with global index tid adds x[4 * n4 + tid] if that is below n.
    //   Delete the (void) line when you are done.
    (void)x, (void)n;
    float s = 0.0f;  // placeholder: this thread's sum

    s = block_sum(s);
    if (threadIdx.x == 0) partials[blockIdx.x] = s;
}

// Given: pass 2, as in step 4.
__global__ void __launch_bounds__(kFinalBlockSize)
    final_sum_kernel(const float* __restrict__ partials, unsigned int count,
                     float* __restrict__ sum) {
    float acc = 0.0f;
    for (unsigned int i = threadIdx.x; i < count; i += blockDim.x) acc += partials[i];
    acc = block_sum(acc);
    if (threadIdx.x == 0) *sum = acc;
}

extern "C" cudaError_t device_sum_fast(const float* x, size_t n, float* sum, void* workspace,
                                       size_t workspace_bytes, cudaStream_t stream) {
    if (workspace_bytes < device_sum_workspace_bytes(n)) return cudaErrorInvalidValue;

    int device = 0;
    cudaError_t err = cudaGetDevice(&device);
    if (err != cudaSuccess) return err;
    int num_sms = 0, threads_per_sm = 0;
    err = cudaDeviceGetAttribute(&num_sms, cudaDevAttrMultiProcessorCount, device);
    if (err != cudaSuccess) return err;
    err = cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device);
    if (err != cudaSuccess) return err;

    // One full wave of blocks.
    size_t grid = static_cast<size_t>(num_sms) * (threads_per_sm / kBlockSize);
    // TODO(3 of 3, ~3 lines): no more blocks than the data needs: at least one float4 per
    //   thread, so needed = ceil((n / 4) / kBlockSize), but at least 1 (n < 4 has no whole
    //   pack, only a tail). Take the smaller of grid and needed.
    if (grid > kMaxBlocks) grid = kMaxBlocks;  // the workspace holds kMaxBlocks partials

    float* partials = static_cast<float*>(workspace);
    partial_sums_kernel<<<static_cast<unsigned int>(grid), kBlockSize, 0, stream>>>(x, n, partials);
    err = cudaGetLastError();
    if (err != cudaSuccess) return err;
    final_sum_kernel<<<1, kFinalBlockSize, 0, stream>>>(partials, static_cast<unsigned int>(grid),
                                                        sum);
    return cudaGetLastError();
}
