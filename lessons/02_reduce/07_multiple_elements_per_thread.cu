// Lesson 02, step 7 — multiple elements per thread.
//
// Teaches: doing most of the reduction in registers. Until now every element went through
// shared memory and a tree of barriers, and the grid had one block per 512 elements. Now the
// grid is sized from the GPU (one full wave, as in lesson 01) and each thread walks the array
// with a grid-stride loop, adding into a register: about a thousand elements per thread at
// n = 2^28. Step 6's tree (given) then runs once per block.
//
// What to do:
//   1. In the kernel: a grid-stride loop that adds this thread's elements into `sum`, two per
//      trip (kBlock apart, as in step 4), so two loads are in flight at once.
//   2. In the launcher: size the grid from the GPU: SMs x (max threads per SM / kBlockSize),
//      but no more blocks than n needs. (The two passes are given.)
// Read "Step 7" in lessons/02_reduce/README.md.
//
// Check:  ./cudalings check 02_reduce/07_multiple_elements_per_thread
// Stuck:  ./cudalings hint 02_reduce/07_multiple_elements_per_thread
//
// As given, this file compiles and runs but adds nothing (every sum is 0), so every test fails.

#include "reduce.cuh"

constexpr unsigned int kBlockSize = 256;

// The last six rounds of the tree (s = 32, 16, 8, 4, 2, 1), run by warp 0: step 5's, unchanged.
// Slots 0..63 hold the values still to be added. Returns the block's sum in lane 0 (the other
// lanes return partial sums nobody needs).
__device__ float warp_reduce(float* sdata, unsigned int tid) {
    // v is this lane's running value; each round reads a partner's slot, waits until every
    // lane of the warp has read, then publishes v, and waits until every lane has written.
    float v = sdata[tid];
    v += sdata[tid + 32];
    __syncwarp();
    sdata[tid] = v;
    __syncwarp();
    v += sdata[tid + 16];
    __syncwarp();
    sdata[tid] = v;
    __syncwarp();
    v += sdata[tid + 8];
    __syncwarp();
    sdata[tid] = v;
    __syncwarp();
    v += sdata[tid + 4];
    __syncwarp();
    sdata[tid] = v;
    __syncwarp();
    v += sdata[tid + 2];
    __syncwarp();
    sdata[tid] = v;
    __syncwarp();
    v += sdata[tid + 1];  // lane 0 now holds the sum; nobody reads slot 0 again
    return v;
}

// Step 6's tree over the block's kBlock values in sdata, unchanged: the block's sum, in
// thread 0. Every thread of the block must call it: it contains barriers.
template <unsigned int kBlock>
__device__ float tree_sum(float* sdata, unsigned int tid) {
    static_assert(kBlock >= 64 && kBlock <= 1024 && (kBlock & (kBlock - 1)) == 0,
                  "the block size must be a power of two from 64 to 1024");
    if (kBlock >= 1024) {
        if (tid < 512) sdata[tid] += sdata[tid + 512];
        __syncthreads();
    }
    if (kBlock >= 512) {
        if (tid < 256) sdata[tid] += sdata[tid + 256];
        __syncthreads();
    }
    if (kBlock >= 256) {
        if (tid < 128) sdata[tid] += sdata[tid + 128];
        __syncthreads();
    }
    if (kBlock >= 128) {
        if (tid < 64) sdata[tid] += sdata[tid + 64];
        __syncthreads();
    }
    return tid < 32 ? warp_reduce(sdata, tid) : 0.0f;
}

// One partial sum per block of the grid, whatever the grid: out[blockIdx.x] = the sum of the
// elements this block's threads visit.
template <unsigned int kBlock>
__global__ void reduce_kernel(const float* __restrict__ in, size_t n, float* __restrict__ out) {
    __shared__ float sdata[kBlock];
    const unsigned int tid = threadIdx.x;

    // TODO(1 of 2, ~7 lines): a grid-stride loop. Start at i = blockIdx.x * (2 * kBlock) + tid
    //   (a size_t) and jump by 2 * gridDim.x * kBlock (the whole grid's span) while i < n. Each
    //   trip loads a = in[i] and b = in[i + kBlock] (0 if that index is >= n), then adds a + b
    //   into sum. Loading both before adding is what puts two loads in flight.
    //   Delete the (void) line when you are done.
    float sum = 0.0f;
    (void)in, (void)n;
    sdata[tid] = sum;
    __syncthreads();

    const float block_sum = tree_sum<kBlock>(sdata, tid);
    if (tid == 0) out[blockIdx.x] = block_sum;
}

// Two passes: G blocks write G partial sums into the workspace, then one block of the same
// kernel adds those G values into out. G is one full wave of the GPU (or less, for small n).
extern "C" cudaError_t reduce_sum(const float* in, size_t n, float* out, void* workspace,
                                  size_t workspace_bytes, cudaStream_t stream) {
    // TODO(2 of 2, ~12 lines): replace the placeholder 32 with one full wave: ask the GPU for
    //   its SM count (cudaDevAttrMultiProcessorCount) and max threads per SM
    //   (cudaDevAttrMaxThreadsPerMultiProcessor) with cudaGetDevice + cudaDeviceGetAttribute,
    //   returning any error; full wave = SMs x (threads per SM / kBlockSize). Then take no more
    //   blocks than n needs: ceil(n / (2 * kBlockSize)). (Exactly lesson 01's step 2.)
    size_t grid = 32;
    const size_t capacity = workspace_bytes / sizeof(float);
    if (grid > capacity) grid = capacity;  // never more partial sums than the workspace holds
    if (grid == 0) return cudaErrorInvalidValue;

    if (grid == 1) {  // small n: one block does everything
        reduce_kernel<kBlockSize><<<1, kBlockSize, 0, stream>>>(in, n, out);
        return cudaGetLastError();
    }
    float* partials = static_cast<float*>(workspace);
    reduce_kernel<kBlockSize>
        <<<static_cast<unsigned int>(grid), kBlockSize, 0, stream>>>(in, n, partials);
    reduce_kernel<kBlockSize><<<1, kBlockSize, 0, stream>>>(partials, grid, out);
    return cudaGetLastError();
}
