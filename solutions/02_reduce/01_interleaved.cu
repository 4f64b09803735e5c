// Lesson 02, step 1 — interleaved addressing with tid % (2 * s) (solution).
//
// Teaches: the shape of every block-level reduction. Each block copies its 256 elements into
// shared memory, then halves the number of live values in log2(256) = 8 rounds of a tree,
// with __syncthreads() between rounds, and thread 0 writes the block's sum. The launcher runs
// the same kernel again over the per-block sums until one value is left.
//
// Why it is slow (the baseline the next eight steps improve on):
//   - divergence: in round s only the threads with tid % (2s) == 0 work. They are spread over
//     every warp, so every warp runs the round, with most of its lanes idle.
//   - the modulo: `%` by a value the compiler does not know is a power of two is an integer
//     division, a sequence of many instructions, run by every thread in every round.
//
// Check:  ./cudalings check 02_reduce/01_interleaved
// Stuck:  ./cudalings hint 02_reduce/01_interleaved

#include "reduce.cuh"

constexpr unsigned int kBlockSize = 256;
// Input values each block turns into one partial sum.
constexpr size_t kElementsPerBlock = kBlockSize;

// The tree over the block's values in sdata (one per thread, already loaded): returns the
// block's sum in thread 0. Every thread of the block must call it: it contains barriers.
__device__ float tree_sum(float* sdata, unsigned int tid) {
    // Round s adds the value s places to the right into every (2s)-th slot:
    //   s = 1: slots 0, 2, 4, ... ; s = 2: slots 0, 4, 8, ... ; ... ; s = 128: slot 0.
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        if (tid % (2 * s) == 0) {
            sdata[tid] += sdata[tid + s];
        }
        // Outside the if: every thread of the block must reach the barrier.
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
// Re-launching the same kernel keeps every step's second pass as fast as its first; a single
// block looping over 2^20 partials would use one SM of 132 for that part.
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
