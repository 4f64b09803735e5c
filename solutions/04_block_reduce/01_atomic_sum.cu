// Lesson 04, step 1 — every thread atomicAdds its element into one sum (solution).
//
// Teaches: the shortest correct parallel sum, and why nobody ships it. One thread per element,
// each doing atomicAdd(sum, x[i]) on the same 4-byte address. It is correct (an atomic
// read-modify-write never loses an update), but every one of the n additions has to pass, one
// after another, through the single L2 slice that owns that address: n serialized updates,
// whatever the size of the GPU. The checker times it at n = 2^24 (not 2^28: a timing must not
// take seconds) so you can compare its GB/s with the other steps.
//
// It is also the least accurate sum: the additions happen in whatever order the atomics
// arrive, each rounded to float, into one accumulator that grows to the size of the whole sum.
// Past 2^24 that accumulator stops moving: at 2^24 and above, float steps are 2 apart, so
// adding an element below 1 rounds back to the same value. Lesson README: "Step 1".
//
// Check:  ./cudalings check 04_block_reduce/01_atomic_sum
// Stuck:  ./cudalings hint 04_block_reduce/01_atomic_sum

#include "block_reduce.cuh"

constexpr unsigned int kBlockSize = 256;

__global__ void atomic_sum_kernel(const float* __restrict__ x, size_t n, float* sum) {
    const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) {
        // A read-modify-write the hardware does in L2 as one indivisible step. We ignore the
        // old value it returns, so the compiler emits a fire-and-forget RED.ADD.F32.
        atomicAdd(sum, x[i]);
    }
}

extern "C" cudaError_t atomic_sum(const float* x, size_t n, float* sum, cudaStream_t stream) {
    // The atomics add *into* *sum, so it must start at 0. Nothing else zeroes it: the checker
    // hands over an output full of NaN, cudaMalloc'd memory holds whatever was there before, and
    // a second call would add on top of the first call's result. The memset goes on the same
    // stream, so it is finished before the kernel starts (work on one stream runs in order).
    cudaError_t err = cudaMemsetAsync(sum, 0, sizeof(float), stream);  // all-zero bits = 0.0f
    if (err != cudaSuccess) return err;

    const size_t grid = (n + kBlockSize - 1) / kBlockSize;
    atomic_sum_kernel<<<static_cast<unsigned int>(grid), kBlockSize, 0, stream>>>(x, n, sum);
    return cudaGetLastError();
}
