// Lesson 02, step 4 — first add during load.
//
// Teaches: giving every thread real work. In step 3 half the threads quit after the load,
// before the first round. Now each thread loads TWO elements, 256 apart, and adds them on the
// way into shared memory: a block of 256 threads covers 512 elements, and the launcher needs
// half as many blocks. The tree is step 3's, unchanged (given).
//
// What to do:
//   1. In the constants: each block now covers 2 * kBlockSize elements (the launcher sizes
//      every pass from kElementsPerBlock).
//   2. In the kernel: this block's 512 elements start at 512 * blockIdx.x; thread tid loads
//      the elements at i = 512 * blockIdx.x + tid and i + 256 (each only if it is < n, else
//      0) and stores their sum in sdata[tid].
// Read "Step 4" in lessons/02_reduce/README.md.
//
// Check:  ./cudalings check 02_reduce/04_first_add_during_load
// Stuck:  ./cudalings hint 02_reduce/04_first_add_during_load
//
// As given, this file compiles and runs but every block's sum is 0, so every test fails.

#include "reduce.cuh"

constexpr unsigned int kBlockSize = 256;
// Input values each block turns into one partial sum.
// TODO(1 of 2, ~1 line): two per thread now: 2 * kBlockSize. (The launcher below sizes every
//   pass from this constant.)
constexpr size_t kElementsPerBlock = kBlockSize;

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
    // TODO(2 of 2, ~4 lines): replace the 0.0f below. Compute i = blockIdx.x * (2 * blockDim.x)
    //   + tid as a size_t; take in[i] if i < n (else 0) plus in[i + blockDim.x] if that index
    //   is < n (else 0). Each of the two needs its own bounds test: in the last block either
    //   one may be missing. Delete the (void) line when you are done.
    float v = 0.0f;
    (void)in, (void)n;
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
