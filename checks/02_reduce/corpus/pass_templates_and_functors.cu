// step: 02_reduce/06_complete_unroll.cu
// emulated: PASS
//
// Correct, generic: the block size and the operation are template parameters (a functor), the
// tree is written with `if constexpr`, and the last warp uses shuffles.
#include "reduce.cuh"

struct Plus {
    __device__ float operator()(float a, float b) const { return a + b; }
    static constexpr float kIdentity = 0.0f;
};

template <unsigned int kBlock, typename Op>
__device__ float tree(float* s, unsigned int tid, Op op) {
    if constexpr (kBlock >= 1024) { if (tid < 512) s[tid] = op(s[tid], s[tid + 512]); __syncthreads(); }
    if constexpr (kBlock >= 512) { if (tid < 256) s[tid] = op(s[tid], s[tid + 256]); __syncthreads(); }
    if constexpr (kBlock >= 256) { if (tid < 128) s[tid] = op(s[tid], s[tid + 128]); __syncthreads(); }
    if constexpr (kBlock >= 128) { if (tid < 64) s[tid] = op(s[tid], s[tid + 64]); __syncthreads(); }
    float v = 0.0f;
    if (tid < 32) {
        v = op(s[tid], s[tid + 32]);
        for (int d = 16; d > 0; d /= 2) v = op(v, __shfl_down_sync(0xffffffffu, v, d));
    }
    return v;
}

template <unsigned int kBlock, typename Op>
__global__ void reduce_kernel(const float* in, size_t n, float* out, Op op) {
    __shared__ float s[kBlock];
    const unsigned int tid = threadIdx.x;
    const size_t i = blockIdx.x * size_t{2 * kBlock} + tid;
    float v = i < n ? in[i] : Op::kIdentity;
    if (i + kBlock < n) v = op(v, in[i + kBlock]);
    s[tid] = v;
    __syncthreads();
    v = tree<kBlock>(s, tid, op);
    if (tid == 0) out[blockIdx.x] = v;
}

template <unsigned int kBlock>
cudaError_t run(const float* in, size_t n, float* out, float* ws, size_t ws_floats,
                cudaStream_t stream) {
    float* buffers[2] = {ws, ws + ws_floats / 2};
    for (int pass = 0;; ++pass) {
        const size_t blocks = (n + 2 * kBlock - 1) / (2 * kBlock);
        float* dst = blocks == 1 ? out : buffers[pass % 2];
        reduce_kernel<kBlock><<<static_cast<unsigned int>(blocks), kBlock, 0, stream>>>(in, n, dst, Plus{});
        if (blocks == 1) break;
        in = dst;
        n = blocks;
    }
    return cudaGetLastError();
}

extern "C" cudaError_t reduce_sum(const float* in, size_t n, float* out, void* workspace,
                                  size_t workspace_bytes, cudaStream_t stream) {
    return run<512>(in, n, out, static_cast<float*>(workspace), workspace_bytes / sizeof(float),
                    stream);
}
