// Lesson 04, step 1 — every thread atomicAdds its element into one sum.
//
// Teaches: the shortest correct parallel sum, and why nobody ships it. One thread per element,
// each adding its element to the same float in global memory with atomicAdd. Atomics make it
// correct: no update is lost. But all n updates go to one address, and the hardware can only
// apply them there one after another. The checker times this step at n = 2^24 (a 2^28 timing
// would take too long) so you can compare its GB/s with the later steps.
//
// What to do:
//   1. In the kernel: if this thread's element exists, atomicAdd it into *sum.
//   2. In the launcher: set *sum to 0 before the kernel runs, on the same stream.
// Read "Step 1" in lessons/04_block_reduce/README.md first.
//
// Check:  ./cudalings check 04_block_reduce/01_atomic_sum
// Stuck:  ./cudalings hint 04_block_reduce/01_atomic_sum
//
// As given, this file compiles and runs but never writes *sum, so every test fails.

#include "block_reduce.cuh"

constexpr unsigned int kBlockSize = 256;

__global__ void atomic_sum_kernel(const float* __restrict__ x, size_t n, float* sum) {
    // TODO(1 of 2, ~4 lines): compute this thread's global index i as a size_t (as in lesson 01,
    //   step 1) and, if i < n, add x[i] to *sum with atomicAdd(sum, x[i]). A plain *sum += x[i]
    //   would be a race: two threads read the same old value and one update is lost.
    //   Delete the (void) line when you are done.
    (void)x, (void)n, (void)sum;
}

extern "C" cudaError_t atomic_sum(const float* x, size_t n, float* sum, cudaStream_t stream) {
    // TODO(2 of 2, ~2 lines): zero the accumulator first. The atomics add *into* *sum, and it
    //   holds garbage when you are called (the checker fills outputs with NaN; in a real program
    //   it could hold the previous call's sum). Use cudaMemsetAsync(sum, 0, sizeof(float),
    //   stream) — all-zero bytes are the float 0.0f — and return its error if it fails. On the
    //   same stream, the memset is finished before the kernel starts.

    const size_t grid = (n + kBlockSize - 1) / kBlockSize;
    atomic_sum_kernel<<<static_cast<unsigned int>(grid), kBlockSize, 0, stream>>>(x, n, sum);
    return cudaGetLastError();
}
