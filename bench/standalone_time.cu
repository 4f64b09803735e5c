// An independent timing of a built step, sharing no code with the checker: load the shared
// object, time 25 calls at 2^28 with CUDA events, each after its own L2 flush (a read+write
// pass over 256 MiB, then a read-only pass over another 256 MiB so that none of the flush's
// dirty lines are left for the timed call to write back), and print the median in
// microseconds. Used by check_bench.py to cross-check the checker's reference times.
//
//   standalone_time refs/01_vector_add/03_float4.so vector_add
#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "../lessons/common/cuda_check.cuh"

using Fn = cudaError_t (*)(const float*, const float*, float*, size_t, cudaStream_t);

__global__ void flush(int* p, size_t n) {
    for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
         i += size_t{gridDim.x} * blockDim.x)
        p[i] += 1;
}

__global__ void read_only(const int* p, size_t n, int* sink) {
    int acc = 0;
    for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
         i += size_t{gridDim.x} * blockDim.x)
        acc += p[i];
    if (acc == -1) *sink = acc;  // the buffer is zero: never true, but the loads must happen
}

__global__ void fill(float* p, size_t n, float v) {
    for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
         i += size_t{gridDim.x} * blockDim.x)
        p[i] = v + static_cast<float>(i % 1000) * 1e-3f;
}

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s STEP.so SYMBOL\n", argv[0]);
        return 2;
    }
    void* handle = dlopen(argv[1], RTLD_NOW);
    if (!handle) {
        std::fprintf(stderr, "%s\n", dlerror());
        return 1;
    }
    auto fn = reinterpret_cast<Fn>(dlsym(handle, argv[2]));
    if (!fn) return 1;
    const size_t n = size_t{1} << 28, flush_n = (size_t{256} << 20) / sizeof(int);
    float *a, *b, *c;
    int *f, *r;
    CUDA_CHECK(cudaMalloc(&a, n * 4));
    CUDA_CHECK(cudaMalloc(&b, n * 4));
    CUDA_CHECK(cudaMalloc(&c, n * 4));
    CUDA_CHECK(cudaMalloc(&f, flush_n * 4));
    CUDA_CHECK(cudaMalloc(&r, flush_n * 4));
    fill<<<1024, 256>>>(a, n, 1.0f);
    fill<<<1024, 256>>>(b, n, 2.0f);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemset(f, 0, flush_n * 4));
    CUDA_CHECK(cudaMemset(r, 0, flush_n * 4));
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreate(&s));
    cudaEvent_t e0, e1;
    CUDA_CHECK(cudaEventCreate(&e0));
    CUDA_CHECK(cudaEventCreate(&e1));
    for (int i = 0; i < 100; ++i) CUDA_CHECK(fn(a, b, c, n, s));  // warm-up (>100 ms)
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<float> ms;
    for (int i = 0; i < 25; ++i) {
        flush<<<1024, 256, 0, s>>>(f, flush_n);
        read_only<<<1024, 256, 0, s>>>(r, flush_n, f);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaStreamSynchronize(s));
        CUDA_CHECK(cudaEventRecord(e0, s));
        CUDA_CHECK(fn(a, b, c, n, s));
        CUDA_CHECK(cudaEventRecord(e1, s));
        CUDA_CHECK(cudaEventSynchronize(e1));
        float t;
        CUDA_CHECK(cudaEventElapsedTime(&t, e0, e1));
        ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    std::printf("%.2f\n", 1000.0 * ms[ms.size() / 2]);
    return 0;
}
