// Lesson 01, step 3 — float4 vector loads and stores (solution).
//
// Teaches: moving 16 bytes per load instead of 4. Each thread reads a[i..i+3] and b[i..i+3]
// with one 128-bit load each and writes c[i..i+3] with one 128-bit store, in a grid-stride loop
// over the n / 4 whole packs; the last n % 4 elements (0 to 3 of them) are done one by one.
//
// Why it is faster: a memory-bound kernel is fast when enough bytes are in flight to cover the
// latency of DRAM. With float4 each thread has 4x the bytes in flight per load instruction, and
// the GPU issues 4x fewer load/store instructions and index computations for the same data.
// In the SASS you should see LDG.E.128 / STG.E.128 instead of LDG.E / STG.E:
//   cuobjdump --dump-sass your.so | grep -E 'LDG|STG'
//
// Check:  ./cudalings check 01_vector_add/03_float4
// Stuck:  ./cudalings hint 01_vector_add/03_float4

#include "vector_add.cuh"

constexpr unsigned int kBlockSize = 256;

__global__ void vector_add_kernel(const float* __restrict__ a, const float* __restrict__ b,
                                  float* __restrict__ c, size_t n) {
    // A float4 load must come from a 16-byte aligned address, or the kernel faults with
    // "misaligned address". It is here: cudaMalloc returns pointers aligned to at least 256
    // bytes, the contract passes them as they came, and pack j starts at byte 16 * j. (A library
    // that may be given a + 1 must check `reinterpret_cast<uintptr_t>(p) % 16 == 0` and fall
    // back to scalar code otherwise.)
    const float4* a4 = reinterpret_cast<const float4*>(a);
    const float4* b4 = reinterpret_cast<const float4*>(b);
    float4* c4 = reinterpret_cast<float4*>(c);

    const size_t tid = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;  // size_t: see step 2

    // Whole packs: elements [0, 4 * n4). Neighbouring threads take neighbouring packs, so a
    // warp reads 32 * 16 = 512 contiguous bytes per load instruction: still fully coalesced.
    const size_t n4 = n / 4;
    for (size_t i = tid; i < n4; i += stride) {
        const float4 x = a4[i];
        const float4 y = b4[i];
        c4[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
    }

    // The tail: elements [4 * n4, n), at most 3 of them. Threads 0, 1, 2 of the grid take one
    // each; every launch has at least one block of 256 threads, so they exist.
    const size_t t = 4 * n4 + tid;
    if (t < n) {
        c[t] = a[t] + b[t];
    }
}

extern "C" cudaError_t vector_add(const float* a, const float* b, float* c, size_t n,
                                  cudaStream_t stream) {
    // One full wave of blocks, as in step 2 (see there for why).
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
    // Blocks needed for the n / 4 packs; at least one, because n < 4 has no packs but a tail.
    size_t needed = (n / 4 + kBlockSize - 1) / kBlockSize;
    if (needed == 0) needed = 1;
    const size_t grid = needed < full_gpu ? needed : full_gpu;

    vector_add_kernel<<<static_cast<unsigned int>(grid), kBlockSize, 0, stream>>>(a, b, c, n);
    return cudaGetLastError();
}
