// Lesson 01, step 1 — one thread per element (solution).
//
// Teaches: the basic shape of every CUDA kernel. Each thread works out which element it owns
// from its block and thread index, checks that the element exists, and processes it. The
// launcher picks a block size and rounds the number of blocks up so the grid covers all n.
//
// Check:  ./cudalings check 01_vector_add/01_one_thread_per_element
// Stuck:  ./cudalings hint 01_vector_add/01_one_thread_per_element

#include "vector_add.cuh"

// 256 threads = 8 warps per block: a multiple of the warp size (32), large enough to keep an
// SM busy with a few blocks, small enough that several blocks fit on one SM at once.
constexpr unsigned int kBlockSize = 256;

// __restrict__ promises the compiler that a, b and c do not overlap, so it may keep loaded
// values in registers and reorder loads and stores freely.
__global__ void vector_add_kernel(const float* __restrict__ a, const float* __restrict__ b,
                                  float* __restrict__ c, size_t n) {
    // The element this thread owns. blockIdx.x * blockDim.x is computed in 32-bit unsigned
    // arithmetic and would wrap around past 2^32; widening one operand to size_t first makes
    // the whole expression 64-bit. (For n = 2^28 both forms are fine; for n > 2^32 only this is.)
    size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    // The grid was rounded up to whole blocks, so the last block may overhang the array:
    // threads past the end must not read or write anything.
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}

extern "C" cudaError_t vector_add(const float* a, const float* b, float* c, size_t n,
                                  cudaStream_t stream) {
    // Ceiling division: the smallest number of blocks whose threads cover all n elements.
    // size_t so that n + kBlockSize - 1 cannot overflow. A grid may have up to 2^31 - 1 blocks
    // in x: that covers n up to ~5.5e11 floats (2 TB per array, more than any GPU holds), so
    // the narrowing to unsigned int below cannot lose anything for a real n.
    size_t grid = (n + kBlockSize - 1) / kBlockSize;
    // <<<blocks, threads per block, dynamic shared memory bytes, stream>>>
    vector_add_kernel<<<static_cast<unsigned int>(grid), kBlockSize, 0, stream>>>(a, b, c, n);
    // A launch does not return a status: ask for it. This catches launch errors (such as an
    // invalid grid); errors while the kernel runs show up later, at a synchronizing call.
    return cudaGetLastError();
}
