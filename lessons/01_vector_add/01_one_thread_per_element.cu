// Lesson 01, step 1 — one thread per element.
//
// Teaches: the basic shape of every CUDA kernel. Each thread works out which element it owns
// from its block and thread index, checks that the element exists, and processes it. The
// launcher picks a block size and rounds the number of blocks up so the grid covers all n.
//
// What to do: fill in the two TODOs below so that c[i] = a[i] + b[i] for every i in [0, n).
//   1. In the kernel: compute the global index i = blockIdx.x * blockDim.x + threadIdx.x and,
//      only if i < n, write c[i].
//   2. In the launcher: launch enough blocks of kBlockSize threads to cover all n elements.
// Read lessons/01_vector_add/README.md first: "Indexing" and "The bounds check" explain both.
//
// Check:  ./cudalings check 01_vector_add/01_one_thread_per_element
// Stuck:  ./cudalings hint 01_vector_add/01_one_thread_per_element
//
// As given, this file compiles and runs but writes nothing, so every test fails.

#include "vector_add.cuh"

// 256 threads = 8 warps per block: a multiple of the warp size (32), large enough to keep an
// SM busy with a few blocks, small enough that several blocks fit on one SM at once.
constexpr unsigned int kBlockSize = 256;

__global__ void vector_add_kernel(const float* __restrict__ a, const float* __restrict__ b,
                                  float* __restrict__ c, size_t n) {
    // TODO(1 of 2, ~4 lines): compute this thread's global index as a size_t,
    //   blockIdx.x * blockDim.x + threadIdx.x, converting blockIdx.x to size_t *before* the
    //   multiplication (the unsigned 32-bit product would wrap past 2^32). Then, if i < n,
    //   set c[i] = a[i] + b[i]. Delete the (void) line when you are done.
    (void)a, (void)b, (void)c, (void)n;
}

extern "C" cudaError_t vector_add(const float* a, const float* b, float* c, size_t n,
                                  cudaStream_t stream) {
    // TODO(2 of 2, ~1 line): replace the 1 with the number of blocks needed to cover n elements:
    //   n / kBlockSize rounded *up* (ceiling division with integers, computed in size_t).
    size_t grid = 1;
    // <<<blocks, threads per block, dynamic shared memory bytes, stream>>>
    vector_add_kernel<<<static_cast<unsigned int>(grid), kBlockSize, 0, stream>>>(a, b, c, n);
    // A launch does not return a status: ask for it, so launch errors reach the checker.
    return cudaGetLastError();
}
