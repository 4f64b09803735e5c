// step: 02_reduce/03_sequential_addressing.cu
// emulated: PASS
//
// Correct: one pass; each block's sum is added to *out with the CUDA Programming Guide's
// compare-and-swap loop (a plain read of *out, then atomicCAS until no other block changed it).
// The plain read races with other blocks' atomics by design: the CAS validates it.
#include "reduce.cuh"

constexpr unsigned int kBlock = 256;

__device__ float atomic_add_cas(float* address, float value) {
    unsigned int* word = reinterpret_cast<unsigned int*>(address);
    unsigned int old = *word, assumed;
    do {
        assumed = old;
        old = atomicCAS(word, assumed, __float_as_uint(value + __uint_as_float(assumed)));
    } while (assumed != old);
    return __uint_as_float(old);
}

__global__ void reduce_kernel(const float* in, size_t n, float* out) {
    __shared__ float sdata[kBlock];
    const unsigned int tid = threadIdx.x;
    const size_t i = static_cast<size_t>(blockIdx.x) * kBlock + tid;
    sdata[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = kBlock / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) atomic_add_cas(out, sdata[0]);
}

extern "C" cudaError_t reduce_sum(const float* in, size_t n, float* out, void* workspace,
                                  size_t workspace_bytes, cudaStream_t stream) {
    (void)workspace, (void)workspace_bytes;
    cudaError_t err = cudaMemsetAsync(out, 0, sizeof(float), stream);
    if (err != cudaSuccess) return err;
    reduce_kernel<<<static_cast<unsigned int>((n + kBlock - 1) / kBlock), kBlock, 0, stream>>>(
        in, n, out);
    return cudaGetLastError();
}
