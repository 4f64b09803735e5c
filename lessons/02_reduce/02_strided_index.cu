// Lesson 02, step 2 — interleaved addressing with a strided index.
//
// Teaches: choosing WHICH threads work. Step 1's tree adds the same values into the same
// slots as this one, but its working threads (tid % (2s) == 0) are scattered over every warp,
// and each test is a slow modulo. Here round s gives slot index = 2 * s * tid to thread tid:
// the working threads are the lowest-numbered ones, packed into as few warps as possible, so
// whole warps are either busy or idle (an idle warp costs nothing), and there is no modulo.
//
// What to do: write tree_sum (the load into shared memory and the write are given):
//   for s = 1, 2, 4, ..., 128: index = 2 * s * tid; if index < blockDim.x, add
//   sdata[index + s] into sdata[index]; __syncthreads() after every round; return sdata[0].
// Read "Step 2" in lessons/02_reduce/README.md (divergence, and the bank conflicts this step
// still has).
//
// Check:  ./cudalings check 02_reduce/02_strided_index
// Stuck:  ./cudalings hint 02_reduce/02_strided_index
//
// As given, this file compiles and runs but every block's sum is 0, so every test fails.

#include "reduce.cuh"

constexpr unsigned int kBlockSize = 256;
// Input values each block turns into one partial sum.
constexpr size_t kElementsPerBlock = kBlockSize;

// The tree over the block's values in sdata (one per thread, already loaded): returns the
// block's sum in thread 0. Every thread of the block must call it: it contains barriers.
__device__ float tree_sum(float* sdata, unsigned int tid) {
    // TODO(1 of 1, ~9 lines): the tree with a strided index. For s = 1, 2, 4, ... while
    //   s < blockDim.x: let index = 2 * s * tid; if index < blockDim.x, add sdata[index + s]
    //   into sdata[index]. Then __syncthreads(), outside the if. Finally return sdata[0].
    //   Delete the two lines below when you are done.
    (void)sdata, (void)tid;
    return 0.0f;
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
