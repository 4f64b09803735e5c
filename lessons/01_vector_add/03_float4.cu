// Lesson 01, step 3 — float4 vector loads and stores.
//
// Teaches: moving 16 bytes per load instead of 4. Each thread reads a[i..i+3] and b[i..i+3]
// with one 128-bit load each and writes c[i..i+3] with one 128-bit store, in a grid-stride loop
// over the n / 4 whole packs; the last n % 4 elements (0 to 3 of them) are done one by one.
//
// What to do: write the kernel body (the launcher is done: it is step 2's, sized for n / 4).
//   1. View a, b and c as arrays of float4.
//   2. Grid-stride over the n / 4 packs: load a pack of a and of b, add the four lanes, store.
//   3. Add the tail: the last n % 4 elements, one element per thread, done by threads 0..2.
// Read "Vector loads" in lessons/01_vector_add/README.md first. When it passes, look for
// LDG.E.128 / STG.E.128 in the SASS:  cuobjdump --dump-sass your.so | grep -E 'LDG|STG'
//
// Check:  ./cudalings check 01_vector_add/03_float4
// Stuck:  ./cudalings hint 01_vector_add/03_float4
//
// As given, this file compiles and runs but writes nothing, so every test fails.

#include "vector_add.cuh"

constexpr unsigned int kBlockSize = 256;

__global__ void vector_add_kernel(const float* __restrict__ a, const float* __restrict__ b,
                                  float* __restrict__ c, size_t n) {
    // TODO(1 of 3, ~3 lines): reinterpret_cast a, b and c to const float4* / float4*.
    //   A float4 access needs a 16-byte aligned address; cudaMalloc's pointers are aligned to
    //   at least 256 bytes and pack j starts at byte 16 * j, so every pack is aligned.

    // TODO(2 of 3, ~7 lines): a grid-stride loop (as in step 2, size_t index and stride) over
    //   the packs j in [0, n / 4): load the two float4s, then store
    //   make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w).

    // TODO(3 of 3, ~4 lines): the tail, elements [4 * (n / 4), n) — at most 3 of them. Let the
    //   thread with global index t handle element 4 * (n / 4) + t if that is < n, with plain
    //   float loads. Every launch has at least one block, so threads 0, 1, 2 always exist.
    //   Delete the (void) line when you are done.
    (void)a, (void)b, (void)c, (void)n;
}

extern "C" cudaError_t vector_add(const float* a, const float* b, float* c, size_t n,
                                  cudaStream_t stream) {
    // One full wave of blocks, as in step 2.
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
