// Lesson 02, step 2 — interleaved addressing with a strided index (solution).
//
// Teaches: choosing WHICH threads work. The tree is the same as in step 1 (the same additions
// into the same slots), but in round s thread tid works on slot index = 2 * s * tid. The
// working threads are now the lowest-numbered ones, packed into as few warps as possible:
// whole warps are either all busy or all idle, and an idle warp costs nothing. No modulo.
//
// What is still wrong: shared-memory bank conflicts. Shared memory has 32 banks, and word w
// lives in bank w % 32. In round s, lane k of a warp touches slot 2 * s * k: for s = 1 lanes
// k and k + 16 land in the same bank (a 2-way conflict), for s = 2 four lanes share a bank,
// for s = 4, 8 and 16 eight do. Lanes that hit different words of one bank are served one
// after the other, so an n-way conflict makes that load or store n times slower.
//
// Check:  ./cudalings check 02_reduce/02_strided_index
// Stuck:  ./cudalings hint 02_reduce/02_strided_index

#include "reduce.cuh"

constexpr unsigned int kBlockSize = 256;
// Input values each block turns into one partial sum.
constexpr size_t kElementsPerBlock = kBlockSize;

// The tree over the block's values in sdata (one per thread, already loaded): returns the
// block's sum in thread 0. Every thread of the block must call it: it contains barriers.
__device__ float tree_sum(float* sdata, unsigned int tid) {
    // Round s still adds slot index + s into every (2s)-th slot `index`, but slot `index` is
    // now handled by thread index / (2s): threads 0 .. blockDim / (2s) - 1 do the work.
    //   s = 1: threads 0..127 (warps 0-3); s = 2: threads 0..63 (warps 0-1); s = 64: threads 0, 1.
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        const unsigned int index = 2 * s * tid;
        if (index < blockDim.x) {
            sdata[index] += sdata[index + s];
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
