// Lesson 08, step 7 — a scatter through an index array (solution).
//
// Teaches: what irregular addresses cost when they are on the write side. Step 6 read wherever
// the indices pointed; here the reads are in order and the writes go wherever they point:
//
//     scatter:  out[index[i]] = in[i]         reads in order, writes wherever index points
//
// index is a permutation, so every output is written exactly once. The checker times the same
// three index arrays as step 6 (identity, a shuffle within 4 KiB, a permutation spread over the
// whole array). A scattered store writes 4 bytes of a 32-byte sector: a partial-sector write,
// which the L2 must merge with what memory holds, so locality matters even more than for a
// gather (as step 1 lost more than step 2).
//
// Check:  ./cudalings check 08_transpose/07_scatter
// Stuck:  ./cudalings hint 08_transpose/07_scatter

#include "transpose.cuh"

constexpr unsigned int kBlockSize = 256;

// Whole packs of 4 elements: the index and the input move as uint4 / float4, the irregular
// writes as four scalars. The last n % 4 elements are done by the first threads of the grid.
__global__ void __launch_bounds__(kBlockSize)
    scatter_kernel(const float* __restrict__ in, const unsigned int* __restrict__ index,
                   float* __restrict__ out, size_t n) {
    const size_t tid = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    const uint4* index4 = reinterpret_cast<const uint4*>(index);
    const float4* in4 = reinterpret_cast<const float4*>(in);

    const size_t n4 = n / 4;
    for (size_t i = tid; i < n4; i += stride) {
        const uint4 k = index4[i];
        const float4 v = in4[i];
        // Four stores to wherever the indices point. index is a permutation, so no two
        // threads write the same element and no atomics are needed (a histogram is the scatter
        // where they are: lesson 06).
        out[k.x] = v.x;
        out[k.y] = v.y;
        out[k.z] = v.z;
        out[k.w] = v.w;
    }
    const size_t t = 4 * n4 + tid;
    if (t < n) out[index[t]] = in[t];
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

extern "C" cudaError_t scatter(const float* in, const unsigned int* index, float* out, size_t n,
                               cudaStream_t stream) {
    unsigned int grid = 0;
    const cudaError_t err = one_wave(n, &grid);
    if (err != cudaSuccess) return err;
    scatter_kernel<<<grid, kBlockSize, 0, stream>>>(in, index, out, n);
    return cudaGetLastError();
}
