// Lesson 02, step 7 — multiple elements per thread (solution).
//
// Teaches: doing most of the reduction in registers. Until now every element went through
// shared memory and a tree of barriers, and the grid had one block per 512 elements (2^19 of
// them at n = 2^28). Now the grid is sized from the GPU (one full wave: SMs x blocks per SM,
// as in lesson 01) and each thread walks the array with a grid-stride loop, adding into a
// register: about a thousand elements per thread at n = 2^28. Step 6's tree is unchanged;
// it now runs once per block of ~250,000 elements instead of once per 512.
//
// Why it is faster: the per-element cost is now a load and an add. The expensive part
// (barriers, shared memory, launching and retiring blocks) is paid once per ~1000 elements
// instead of once per 2, and all the time the threads spend is spent loading. Each trip of
// the loop loads two elements before adding them (step 4's idea, kept), so two loads per
// thread are in flight. The second pass sums about a thousand partials: one block of the same
// kernel does it in a few microseconds.
//
// Check:  ./cudalings check 02_reduce/07_multiple_elements_per_thread
// Stuck:  ./cudalings hint 02_reduce/07_multiple_elements_per_thread

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

    // Grid-stride accumulation in a register. Each trip takes two elements, kBlock apart, as
    // in step 4: two loads that do not depend on each other, so both are in flight at once
    // (one load per trip would leave each thread waiting on a single 4-byte load at a time).
    // Thread t of block b starts at 2 * kBlock * b + t and jumps by the whole grid's span.
    // Consecutive threads read consecutive elements: every load of a warp is coalesced.
    float sum = 0.0f;
    const size_t stride = 2 * static_cast<size_t>(gridDim.x) * kBlock;
    for (size_t i = static_cast<size_t>(blockIdx.x) * (2 * kBlock) + tid; i < n; i += stride) {
        const float a = in[i];
        const float b = i + kBlock < n ? in[i + kBlock] : 0.0f;
        sum += a + b;
    }
    sdata[tid] = sum;
    __syncthreads();

    const float block_sum = tree_sum<kBlock>(sdata, tid);
    if (tid == 0) out[blockIdx.x] = block_sum;
}

// Two passes: G blocks write G partial sums into the workspace, then one block of the same
// kernel adds those G values into out. G is one full wave of the GPU (or less, for small n).
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

    // One full wave: every SM gets as many blocks as it can hold at once (132 x 8 = 1056 on an
    // H200). More blocks would only queue; fewer would leave SMs idle. No more blocks than n
    // needs, and no more partial sums than the workspace holds.
    const size_t full_gpu = static_cast<size_t>(num_sms) * (threads_per_sm / kBlockSize);
    const size_t needed = (n + 2 * kBlockSize - 1) / (2 * kBlockSize);  // 2 elements per thread
    const size_t capacity = workspace_bytes / sizeof(float);
    size_t grid = needed < full_gpu ? needed : full_gpu;
    if (grid > capacity) grid = capacity;
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
