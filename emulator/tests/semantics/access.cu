// Access patterns of one warp whose pictures (explain mode's "access" diagnostics) are known:
// test_access.cpp runs each `access_*` entry point and reads the picture of its line.
#include <cuda_runtime.h>

namespace {

__global__ void coalesced(const float* in, float* out) {
    unsigned i = threadIdx.x;
    float v = in[i];  // line: coalesced load
    out[i] = v;
}

__global__ void stride_two(const float* in, float* out) {
    unsigned i = threadIdx.x;
    float v = in[2 * i];  // line: stride-2 load
    out[i] = v;
}

__global__ void vector_load(const float4* in, float4* out) {
    unsigned i = threadIdx.x;
    float4 v = in[i];  // line: float4 load
    out[i] = v;
}

__global__ void shared_column(float* out) {
    __shared__ float s[32 * 32];
    s[threadIdx.x * 32] = float(threadIdx.x);  // line: 32-way store
    __syncwarp();
    out[threadIdx.x] = s[threadIdx.x * 32];
}

__global__ void shared_row(float* out) {
    __shared__ float s[32];
    s[threadIdx.x] = float(threadIdx.x);  // line: conflict-free store
    __syncwarp();
    out[threadIdx.x] = s[threadIdx.x];
}

__global__ void guarded(const float* in, float* out, int n) {
    int i = threadIdx.x;
    if (i < n) {
        float v = in[i];  // line: guarded load
        out[i] = v;
    }
}

// A sweep whose rounds have more active lanes each time (Blelloch's down-sweep): in round r,
// lanes below 2^r all read word 32·r, a broadcast. Grouping a lane's k-th execution instead of
// the round's would put lane 0's first round with lane 1's second: words 0, 32, 64, ... in bank
// 0, a conflict no round has.
__global__ void growing_rounds(float* out) {
    __shared__ float s[32 * 6];
    for (unsigned i = threadIdx.x; i < 32 * 6; i += 32) s[i] = float(i);
    __syncthreads();
    float sum = 0;
    for (unsigned r = 0; r <= 5; ++r) {
        if (threadIdx.x < (1u << r)) sum += s[32 * r];  // line: broadcast per round
        __syncthreads();
    }
    out[threadIdx.x] = sum;
}

// Every lane in every round, the stride doubling: round 0 has no conflict, round 2 a 4-way one.
// The picture is the worst round's.
__global__ void doubling_stride(float* out) {
    __shared__ float s[32 * 4];
    for (unsigned i = threadIdx.x; i < 32 * 4; i += 32) s[i] = float(i);
    __syncthreads();
    float sum = 0;
    for (unsigned r = 0; r <= 2; ++r) {
        sum += s[threadIdx.x << r];  // line: doubling stride
        __syncthreads();
    }
    out[threadIdx.x] = sum;
}

// Two arrays named `in` and `out` (the emulator names an allocation by its variable), a launch
// of one warp, 0 when it ran.
template <typename T>
struct Arrays {
    T *in = nullptr, *out = nullptr;
    explicit Arrays(int elements) {
        cudaMalloc(&in, elements * sizeof(T));
        cudaMalloc(&out, elements * sizeof(T));
        cudaMemset(in, 0, elements * sizeof(T));
    }
    int finish() {
        cudaError_t e = cudaDeviceSynchronize();
        cudaFree(in);
        cudaFree(out);
        return e == cudaSuccess ? 0 : 1;
    }
};

}  // namespace

extern "C" int access_coalesced() {
    Arrays<float> a(32);
    coalesced<<<1, 32>>>(a.in, a.out);
    return a.finish();
}
extern "C" int access_stride_two() {
    Arrays<float> a(64);
    stride_two<<<1, 32>>>(a.in, a.out);
    return a.finish();
}
extern "C" int access_float4() {
    Arrays<float4> a(32);
    vector_load<<<1, 32>>>(a.in, a.out);
    return a.finish();
}
extern "C" int access_shared_column() {
    Arrays<float> a(32);
    shared_column<<<1, 32>>>(a.out);
    return a.finish();
}
extern "C" int access_shared_row() {
    Arrays<float> a(32);
    shared_row<<<1, 32>>>(a.out);
    return a.finish();
}
extern "C" int access_guarded(int n) {
    Arrays<float> a(32);
    guarded<<<1, 32>>>(a.in, a.out, n);
    return a.finish();
}
extern "C" int access_growing_rounds() {
    Arrays<float> a(32);
    growing_rounds<<<1, 32>>>(a.out);
    return a.finish();
}
extern "C" int access_doubling_stride() {
    Arrays<float> a(32);
    doubling_stride<<<1, 32>>>(a.out);
    return a.finish();
}
