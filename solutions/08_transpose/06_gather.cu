// Lesson 08, step 6 — a gather through an index array (solution).
//
// Teaches: what irregular addresses cost when they are on the read side. Steps 1 and 2 were a
// scatter (coalesced reads, writes far apart) and a gather (reads far apart, coalesced writes)
// with a regular stride. Here the read addresses come from data:
//
//     gather:   out[i] = in[index[i]]         reads wherever index points, writes in order
//
// The kernel is as simple as lesson 01's: the work is the same for every index array, and the
// time is decided by where the indices point. The checker times three of them:
//   - identity (index[i] = i): a copy, plus the index array;
//   - a shuffle within windows of 1024 elements (4 KiB): every warp's 32 addresses fall in the
//     same 4 KiB, so the sectors they touch are reused by the warps around them;
//   - a permutation spread over the whole array: every element costs its own 32-byte sector,
//     8x the bytes a coalesced read moves for it.
// Step 7 does the same with the irregular side on the writes.
//
// Check:  ./cudalings check 08_transpose/06_gather
// Stuck:  ./cudalings hint 08_transpose/06_gather

#include "transpose.cuh"

constexpr unsigned int kBlockSize = 256;

// Whole packs of 4 elements: the index and the output move as uint4 / float4 (16 bytes per
// access, lesson 01 step 3), the irregular reads as four scalars. The last n % 4 elements are
// done by the first threads of the grid.
__global__ void __launch_bounds__(kBlockSize)
    gather_kernel(const float* __restrict__ in, const unsigned int* __restrict__ index,
                  float* __restrict__ out, size_t n) {
    const size_t tid = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    const uint4* index4 = reinterpret_cast<const uint4*>(index);
    float4* out4 = reinterpret_cast<float4*>(out);

    const size_t n4 = n / 4;
    for (size_t i = tid; i < n4; i += stride) {
        const uint4 k = index4[i];  // coalesced: 512 bytes of indices per warp
        // Four independent loads from wherever the indices point: issued back to back.
        out4[i] = make_float4(in[k.x], in[k.y], in[k.z], in[k.w]);
    }
    const size_t t = 4 * n4 + tid;
    if (t < n) out[t] = in[index[t]];
}

// One full wave of blocks, at most one block per 256 packs (lesson 01, step 3).
static cudaError_t one_wave(size_t n, unsigned int* grid) {
    int device = 0;
    cudaError_t err = cudaGetDevice(&device);
    if (err != cudaSuccess) return err;
    int num_sms = 0;
    err = cudaDeviceGetAttribute(&num_sms, cudaDevAttrMultiProcessorCount, device);
    if (err != cudaSuccess) return err;
    int threads_per_sm = 0;
    err = cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device);
    if (err != cudaSuccess) return err;
    const size_t full_gpu = static_cast<size_t>(num_sms) * (threads_per_sm / kBlockSize);
    size_t needed = (n / 4 + kBlockSize - 1) / kBlockSize;
    if (needed == 0) needed = 1;  // n < 4: no packs, but a tail
    *grid = static_cast<unsigned int>(needed < full_gpu ? needed : full_gpu);
    return cudaSuccess;
}

extern "C" cudaError_t gather(const float* in, const unsigned int* index, float* out, size_t n,
                              cudaStream_t stream) {
    unsigned int grid = 0;
    const cudaError_t err = one_wave(n, &grid);
    if (err != cudaSuccess) return err;
    gather_kernel<<<grid, kBlockSize, 0, stream>>>(in, index, out, n);
    return cudaGetLastError();
}
