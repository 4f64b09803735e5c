// Lesson 02, step 3 — sequential addressing (solution).
//
// Teaches: laying the tree out so that a warp reads consecutive words. Instead of combining
// neighbours, round s adds the upper half of the live values onto the lower half: thread tid
// does sdata[tid] += sdata[tid + s], for s = 128, 64, ..., 1. The working threads are again
// the lowest-numbered ones (no divergence inside a warp while s >= 32), and the 32 lanes of a
// warp now touch 32 consecutive words, one per bank: no bank conflicts.
//
// What is still wasted: half the threads of the block are idle from the very first round
// (s = 128 keeps only threads 0..127 busy), and they did nothing but one load before that.
//
// Check:  ./cudalings check 02_reduce/03_sequential_addressing
// Stuck:  ./cudalings hint 02_reduce/03_sequential_addressing

#include "reduce.cuh"

constexpr unsigned int kBlockSize = 256;
// Input values each block turns into one partial sum.
constexpr size_t kElementsPerBlock = kBlockSize;

// The tree over the block's values in sdata (one per thread, already loaded): returns the
// block's sum in thread 0. Every thread of the block must call it: it contains barriers.
__device__ float tree_sum(float* sdata, unsigned int tid) {
    // Round s folds the upper half of the live values onto the lower half:
    //   s = 128: slots 0..127 += slots 128..255;  s = 64: slots 0..63 += slots 64..127; ...
    // Lane k of a warp reads slots tid + s and writes slot tid: consecutive words, one per bank.
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    return sdata[0];
}

// One partial sum per block: out[blockIdx.x] = in[256 * blockIdx.x] + ... (256 values, fewer in
// the last block).
__global__ void reduce_kernel(const float* __restrict__ in, size_t n, float* __restrict__ out) {
    __shared__ float sdata[kBlockSize];
    const unsigned int tid = threadIdx.x;
    const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + tid;

    // Threads past the end load 0, the identity of +: the tree then needs no bounds test.
    sdata[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();  // every value is in shared memory before anyone reads a neighbour's

    const float sum = tree_sum(sdata, tid);
    if (tid == 0) out[blockIdx.x] = sum;
}

// Pass 1 turns n values into ceil(n / 256) partial sums in the workspace; pass 2 turns those
// into ceil(n / 65536); and so on until one block is left, whose sum goes to out. Two buffers
// take turns: each pass reads what the previous one wrote. (2^28 floats: 2^20, 4096, 16, 1.)
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
        reduce_kernel<<<static_cast<unsigned int>(blocks), kBlockSize, 0, stream>>>(src, count,
                                                                                    dst);
        if (blocks == 1) break;
        src = dst;
        count = blocks;
    }
    return cudaGetLastError();
}
