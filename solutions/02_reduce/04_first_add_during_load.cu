// Lesson 02, step 4 — first add during load (solution).
//
// Teaches: giving every thread real work. In step 3 half the threads quit after the load. Now
// each thread loads TWO elements, 256 apart, and adds them on the way into shared memory, so
// a block of 256 threads covers 512 elements and the launcher needs half as many blocks. The
// tree is step 3's, unchanged. Per element, the block-level overhead (the barriers, the tree,
// starting and retiring the block) is halved, and each thread has two loads in flight.
//
// Check:  ./cudalings check 02_reduce/04_first_add_during_load
// Stuck:  ./cudalings hint 02_reduce/04_first_add_during_load

#include "reduce.cuh"

constexpr unsigned int kBlockSize = 256;
// Input values each block turns into one partial sum: two per thread.
constexpr size_t kElementsPerBlock = 2 * kBlockSize;

// Step 3's tree, unchanged.
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

// One partial sum per block: out[blockIdx.x] = the sum of the block's 512 values (fewer in the
// last block).
__global__ void reduce_kernel(const float* __restrict__ in, size_t n, float* __restrict__ out) {
    __shared__ float sdata[kBlockSize];
    const unsigned int tid = threadIdx.x;
    // This block's 512 elements start at 512 * blockIdx.x. Thread tid takes the one at tid and
    // the one at tid + 256: both loads of a warp stay coalesced (32 consecutive floats each).
    const size_t i = static_cast<size_t>(blockIdx.x) * (2 * blockDim.x) + tid;

    // Each element has its own bounds test: in the last block either one may be missing.
    float v = i < n ? in[i] : 0.0f;
    if (i + blockDim.x < n) v += in[i + blockDim.x];
    sdata[tid] = v;
    __syncthreads();

    const float sum = tree_sum(sdata, tid);
    if (tid == 0) out[blockIdx.x] = sum;
}

// As in step 3, with 512 values per block: pass 1 turns n values into ceil(n / 512) partial
// sums, pass 2 those into ceil(n / 2^18), and so on until one block is left, whose sum goes to
// out. (2^28 floats: 2^19, 1024, 2, 1.)
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
