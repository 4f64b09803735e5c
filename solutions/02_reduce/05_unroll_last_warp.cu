// Lesson 02, step 5 — unroll the last warp, safely on Volta and later (solution).
//
// Teaches: cutting instruction overhead once only one warp is left. When s <= 32, the live
// values fit in one warp: those rounds need no __syncthreads() (a block-wide barrier that the
// other seven, idle warps take part in), and no loop. Threads 0..31 do the last six rounds
// straight-line, with only the lane-level ordering they need: __syncwarp().
//
// Why __syncwarp() and not the famous `volatile` version (see the README): since Volta the
// lanes of a warp are scheduled independently, so "a warp executes in lockstep" is not a
// guarantee. In `sdata[tid] += sdata[tid + 16]`, lane 0 may read sdata[16] before or after
// lane 16 writes its own new value there. Reading first, then __syncwarp(), then writing,
// then __syncwarp() again, makes every read of a round see the previous round's writes and
// never the current round's.
//
// Check:  ./cudalings check 02_reduce/05_unroll_last_warp
// Stuck:  ./cudalings hint 02_reduce/05_unroll_last_warp

#include "reduce.cuh"

constexpr unsigned int kBlockSize = 256;
// Input values each block turns into one partial sum: two per thread.
constexpr size_t kElementsPerBlock = 2 * kBlockSize;

// The last six rounds of the tree (s = 32, 16, 8, 4, 2, 1), run by the 32 threads of warp 0.
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

// The tree over the block's values in sdata (one per thread, already loaded): returns the
// block's sum in thread 0. Every thread of the block must call it: it contains barriers.
__device__ float tree_sum(float* sdata, unsigned int tid) {
    // Block-wide rounds while more than one warp's worth of values is live: s = 128, 64.
    for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    // The last 64 values: warp 0 alone, no block barrier, no loop.
    return tid < 32 ? warp_reduce(sdata, tid) : 0.0f;
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

// As in step 4, with 512 values per block: pass 1 turns n values into ceil(n / 512) partial
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
