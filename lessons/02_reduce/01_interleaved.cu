// Lesson 02, step 1 — interleaved addressing with tid % (2 * s).
//
// Teaches: the shape of every block-level reduction. Each block copies its 256 elements into
// shared memory, then halves the number of live values in log2(256) = 8 rounds of a tree,
// with __syncthreads() between rounds, and thread 0 writes the block's sum. The launcher
// (given) runs the same kernel again over the per-block sums until one value is left.
//
// What to do: the classic first version (slow on purpose; the next eight steps make it fast).
//   1. tree_sum: for s = 1, 2, 4, ..., 128, the threads with tid % (2 * s) == 0 add
//      sdata[tid + s] into sdata[tid]; __syncthreads() after every round; return sdata[0].
//   2. In the kernel: load this thread's element into shared memory (0 past the end), then
//      __syncthreads(). (Thread 0 writing the block's sum is given.)
// Read "Why a sum is harder than a map" and "Step 1" in lessons/02_reduce/README.md first.
//
// Check:  ./cudalings check 02_reduce/01_interleaved
// Stuck:  ./cudalings hint 02_reduce/01_interleaved
//
// As given, this file compiles and runs but every block's sum is 0, so every test fails.

#include "reduce.cuh"

constexpr unsigned int kBlockSize = 256;
// Input values each block turns into one partial sum.
constexpr size_t kElementsPerBlock = kBlockSize;

// The tree over the block's values in sdata (one per thread, already loaded): returns the
// block's sum in thread 0. Every thread of the block must call it: it contains barriers.
__device__ float tree_sum(float* sdata, unsigned int tid) {
    // TODO(1 of 2, ~8 lines): the tree. for (unsigned int s = 1; s < blockDim.x; s *= 2): if
    //   tid % (2 * s) == 0, add sdata[tid + s] into sdata[tid]. Put __syncthreads() at the end
    //   of every round, OUTSIDE the if: every thread of the block must reach it. Then return
    //   sdata[0]. Delete the two lines below when you are done.
    (void)sdata, (void)tid;
    return 0.0f;
}

// One partial sum per block: out[blockIdx.x] = in[256 * blockIdx.x] + ... (256 values, fewer in
// the last block).
__global__ void reduce_kernel(const float* __restrict__ in, size_t n, float* __restrict__ out) {
    __shared__ float sdata[kBlockSize];
    const unsigned int tid = threadIdx.x;

    // TODO(2 of 2, ~3 lines): compute this thread's global index i as a size_t (as in lesson
    //   01), set sdata[tid] to in[i] when i < n and to 0.0f otherwise (0 adds nothing, so the
    //   tree needs no bounds test), then __syncthreads() so every slot is filled before anyone
    //   reads a neighbour's. Delete the (void) line when you are done.
    (void)in, (void)n;

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
