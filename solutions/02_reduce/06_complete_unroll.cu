// Lesson 02, step 6 — complete unroll, with the block size as a template parameter (solution).
//
// Teaches: moving work from run time to compile time. The loop of the block-wide rounds
// depends only on the block size; when that size is a template parameter the compiler knows
// every s, so the loop becomes straight-line code and every `if (kBlock >= 512)` that is false
// for this instantiation is removed before the program runs. What is left per round: one
// compare, one add, one barrier. No loop counter, no shifts, no loop branch. (The warp's six
// rounds were already written out in step 5.)
//
// Check:  ./cudalings check 02_reduce/06_complete_unroll
// Stuck:  ./cudalings hint 02_reduce/06_complete_unroll

#include "reduce.cuh"

constexpr unsigned int kBlockSize = 256;
// Input values each block turns into one partial sum: two per thread.
constexpr size_t kElementsPerBlock = 2 * kBlockSize;

// The last six rounds of the tree (s = 32, 16, 8, 4, 2, 1), run by warp 0: step 5's, unchanged.
// Slots 0..63 hold the values still to be added. Returns the block's sum in lane 0.
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

// The tree over the block's kBlock values in sdata: returns the block's sum in thread 0.
// Every thread of the block must call it: it contains barriers.
template <unsigned int kBlock>
__device__ float tree_sum(float* sdata, unsigned int tid) {
    // The warp's rounds read slots up to tid + 32 < 64: smaller blocks would need more care.
    static_assert(kBlock >= 64 && kBlock <= 1024 && (kBlock & (kBlock - 1)) == 0,
                  "the block size must be a power of two from 64 to 1024");
    // The block-wide rounds, written out. Each `if (kBlock >= ...)` is decided at compile time;
    // the barrier stays outside the `if (tid < ...)`, where every thread reaches it.
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

// One partial sum per block of kBlock threads: out[blockIdx.x] = the sum of the block's
// 2 * kBlock values (fewer in the last block).
template <unsigned int kBlock>
__global__ void reduce_kernel(const float* __restrict__ in, size_t n, float* __restrict__ out) {
    __shared__ float sdata[kBlock];
    const unsigned int tid = threadIdx.x;
    // kBlock, not blockDim.x: a compile-time constant, so 2 * kBlock is folded too.
    const size_t i = static_cast<size_t>(blockIdx.x) * (2 * kBlock) + tid;

    float v = i < n ? in[i] : 0.0f;
    if (i + kBlock < n) v += in[i + kBlock];
    sdata[tid] = v;
    __syncthreads();

    const float sum = tree_sum<kBlock>(sdata, tid);
    if (tid == 0) out[blockIdx.x] = sum;
}

// As in step 4: 512 values per block; pass 1 turns n values into ceil(n / 512) partial sums,
// pass 2 those into ceil(n / 2^18), and so on until one block is left, whose sum goes to out.
// The block size is now part of the kernel's name: reduce_kernel<kBlockSize>. A library that
// picks the block size at run time would switch over the few sizes it supports:
// case 512: reduce_kernel<512><<<...>>>(...); break; case 256: ...
extern "C" cudaError_t reduce_sum(const float* in, size_t n, float* out, void* workspace,
                                  size_t workspace_bytes, cudaStream_t stream) {
    const size_t first = (n + kElementsPerBlock - 1) / kElementsPerBlock;  // pass 1's sums
    const size_t second = (first + kElementsPerBlock - 1) / kElementsPerBlock;
    const size_t first_padded = (first + 63) / 64 * 64;  // keeps buffer 2 256-byte aligned
    if ((first_padded + second) * sizeof(float) > workspace_bytes) return cudaErrorInvalidValue;
    float* buffers[2] = {static_cast<float*>(workspace),
                         static_cast<float*>(workspace) + first_padded};

    const float* src = in;
    size_t count = n;
    for (int pass = 0;; ++pass) {
        const size_t blocks = (count + kElementsPerBlock - 1) / kElementsPerBlock;
        float* dst = blocks == 1 ? out : buffers[pass % 2];
        reduce_kernel<kBlockSize>
            <<<static_cast<unsigned int>(blocks), kBlockSize, 0, stream>>>(src, count, dst);
        if (blocks == 1) break;
        src = dst;
        count = blocks;
    }
    return cudaGetLastError();
}
