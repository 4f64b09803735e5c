// Correct code in forms the lessons do not teach, which the emulator must run without a finding:
// a compare-and-swap loop, __activemask() in a branch, cooperative groups, libcu++ atomics,
// cudaLaunchKernel, an opt-in to 64 KiB of dynamic shared memory, namespace-scope __shared__,
// __reduce_*_sync, symbols, one __shared__ array per template instantiation, and the
// checker's poison turned into the NaN a GPU writes. Each `unusual_*` entry point returns 0 when
// the results are right.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda/atomic>
#include <cuda/std/limits>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "device_vectors.cuh"

namespace cg = cooperative_groups;

namespace {

// The CUDA Programming Guide's atomicAdd for double: a plain read, then atomicCAS until no other
// thread changed the word in between.
__device__ double atomic_add_double(double* address, double value) {
    auto* word = reinterpret_cast<unsigned long long*>(address);
    unsigned long long old = *word, assumed;
    do {
        assumed = old;
        old = atomicCAS(word, assumed,
                        __double_as_longlong(value + __longlong_as_double(assumed)));
    } while (assumed != old);
    return __longlong_as_double(old);
}

__global__ void cas_sum(const double* x, double* sum) {
    atomic_add_double(sum, x[blockIdx.x * blockDim.x + threadIdx.x]);
}

// __activemask() inside a branch counts the lanes of the branch.
__global__ void active_in_branch(int* out, int n) {
    int i = threadIdx.x;
    if (i < n) {
        out[i] = __popc(__activemask());
    } else {
        out[i] = -1;
    }
}

// A block sum with cooperative groups: a tile reduce per warp, then warp 0 over the warps.
__global__ void cg_block_sum(const float* x, float* out) {
    __shared__ float warp_sums[32];
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    float v = x[blockIdx.x * blockDim.x + block.thread_rank()];
    v = cg::reduce(warp, v, cg::plus<float>());
    if (warp.thread_rank() == 0) warp_sums[warp.meta_group_rank()] = v;
    block.sync();
    if (warp.meta_group_rank() == 0) {
        float w = warp.thread_rank() < warp.meta_group_size() ? warp_sums[warp.thread_rank()] : 0.0f;
        w = cg::reduce(warp, w, cg::plus<float>());
        if (warp.thread_rank() == 0) out[blockIdx.x] = w;
    }
}

// The lanes of a branch as a coalesced group, and a tile of 8 with a scan.
__global__ void cg_groups(int* out) {
    int lane = threadIdx.x;
    if (lane % 2 == 0) {
        cg::coalesced_group even = cg::coalesced_threads();
        out[lane] = int(even.size()) * 100 + int(even.thread_rank());
    } else {
        out[lane] = -1;
    }
    auto tile = cg::tiled_partition<8>(cg::this_thread_block());
    out[32 + lane] = cg::inclusive_scan(tile, 1);
}

// libcu++: an atomic_ref on global memory, numeric_limits.
__global__ void libcu_count(int* count, float* big) {
    cuda::atomic_ref<int, cuda::thread_scope_device> c(*count);
    c.fetch_add(1, cuda::memory_order_relaxed);
    if (threadIdx.x == 0 && blockIdx.x == 0) *big = cuda::std::numeric_limits<float>::max();
}

__global__ void scale(const float* x, float* y, float factor, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = factor * x[i];
}

// 64 KiB of dynamic shared memory, after the opt-in.
template <int kBlock>
__global__ void big_tile(const float* x, float* y) {
    extern __shared__ float tile[];
    const int per_thread = 16384 / kBlock;
    for (int k = 0; k < per_thread; ++k) tile[threadIdx.x * per_thread + k] = x[threadIdx.x];
    __syncthreads();
    float s = 0;
    for (int k = 0; k < per_thread; ++k) s += tile[((threadIdx.x + 1) % kBlock) * per_thread + k];
    y[threadIdx.x] = s;
}

// Namespace-scope __shared__: one copy per block, poisoned, race-checked; used with barriers.
__shared__ float stage[64];
__shared__ int hits;
__global__ void namespace_stage(const float* x, float* y, int* total) {
    if (threadIdx.x == 0) hits = 0;
    stage[threadIdx.x] = x[blockIdx.x * 64 + threadIdx.x];
    __syncthreads();
    atomicAdd(&hits, 1);
    y[blockIdx.x * 64 + threadIdx.x] = stage[63 - threadIdx.x];
    __syncthreads();
    if (threadIdx.x == 0) atomicAdd(total, hits);
}

__global__ void warp_reduces(unsigned* out) {
    unsigned lane = threadIdx.x;
    out[lane] = __reduce_add_sync(0xffffffffu, lane + 1);
    out[32 + lane] = __reduce_max_sync(0xffffffffu, lane * 3u % 7u);
}

__device__ int g_counter;
__constant__ float c_scale;
__global__ void use_symbols(float* y) {
    atomicAdd(&g_counter, 1);
    y[blockIdx.x * blockDim.x + threadIdx.x] = c_scale;
}

// Each (T, Op) instantiation has its own __shared__ array: two running at once do not share it.
struct Add {
    template <typename T> __device__ T operator()(T a, T b) const { return a + b; }
};
struct Max {
    template <typename T> __device__ T operator()(T a, T b) const { return a < b ? b : a; }
};
template <typename T, typename Op>
__device__ T block_reduce(T v, Op op) {
    __shared__ T partial[32];
    unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    for (int d = 16; d > 0; d /= 2) v = op(v, __shfl_down_sync(0xffffffffu, v, d));
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    T r = partial[0];
    for (unsigned w = 1; w < blockDim.x / 32; ++w) r = op(r, partial[w]);
    __syncthreads();
    return r;
}
__global__ void two_reductions(const int* x, int* out) {
    int v = x[threadIdx.x];
    int sum = block_reduce(v, Add());
    int top = block_reduce(v, Max());
    if (threadIdx.x == 0) {
        out[0] = sum;
        out[1] = top;
    }
}

// Arithmetic on the checker's poison, and an atomic add to it.
__global__ void touch_poison(float* out) {
    out[0] = out[0] + 1.0f;
    atomicAdd(out + 1, 1.0f);
}

}  // namespace

extern "C" int unusual_cas_loop() {
    std::vector<double> h(8 * 128, 0.5);
    double* x = device(h);
    double* sum;
    cudaMalloc(&sum, sizeof(double));
    cudaMemset(sum, 0, sizeof(double));
    cas_sum<<<8, 128>>>(x, sum);
    if (cudaDeviceSynchronize() != cudaSuccess) return 1;
    double got = back(sum, 1)[0];
    cudaFree(x);
    cudaFree(sum);
    return got == 512.0 ? 0 : 2;
}

extern "C" int unusual_activemask_in_branch() {
    int* out;
    cudaMalloc(&out, 32 * sizeof(int));
    active_in_branch<<<1, 32>>>(out, 20);
    if (cudaDeviceSynchronize() != cudaSuccess) return 1;
    auto r = back(out, 32);
    cudaFree(out);
    for (int i = 0; i < 32; ++i)
        if (r[i] != (i < 20 ? 20 : -1)) return 2;
    return 0;
}

extern "C" int unusual_cooperative_groups() {
    std::vector<float> h(4 * 256);
    for (std::size_t i = 0; i < h.size(); ++i) h[i] = float(i % 5);
    float* x = device(h);
    float* out;
    cudaMalloc(&out, 4 * sizeof(float));
    cg_block_sum<<<4, 256>>>(x, out);
    if (cudaDeviceSynchronize() != cudaSuccess) return 1;
    auto r = back(out, 4);
    for (int b = 0; b < 4; ++b) {
        float want = 0;
        for (int i = 0; i < 256; ++i) want += h[b * 256 + i];
        if (r[b] != want) return 2;
    }
    int* groups;
    cudaMalloc(&groups, 64 * sizeof(int));
    cg_groups<<<1, 32>>>(groups);
    if (cudaDeviceSynchronize() != cudaSuccess) return 3;
    auto g = back(groups, 64);
    for (int lane = 0; lane < 32; ++lane) {
        if (g[lane] != (lane % 2 == 0 ? 1600 + lane / 2 : -1)) return 4;
        if (g[32 + lane] != lane % 8 + 1) return 5;
    }
    cudaFree(x);
    cudaFree(out);
    cudaFree(groups);
    return 0;
}

extern "C" int unusual_libcu() {
    int* count;
    float* big;
    cudaMalloc(&count, sizeof(int));
    cudaMalloc(&big, sizeof(float));
    cudaMemset(count, 0, sizeof(int));
    libcu_count<<<4, 64>>>(count, big);
    if (cudaDeviceSynchronize() != cudaSuccess) return 1;
    if (back(count, 1)[0] != 256) return 2;
    if (back(big, 1)[0] != 3.40282347e38f) return 3;
    cudaFree(count);
    cudaFree(big);
    return 0;
}

extern "C" int unusual_launch_kernel() {
    std::vector<float> h(300, 2.0f);
    float* x = device(h);
    float* y;
    cudaMalloc(&y, 300 * sizeof(float));
    float factor = 1.5f;
    int n = 300;
    void* args[] = {&x, &y, &factor, &n};
    if (cudaLaunchKernel(scale, dim3(3), dim3(128), args, 0, nullptr) != cudaSuccess) return 1;
    if (cudaDeviceSynchronize() != cudaSuccess) return 2;
    for (float v : back(y, 300))
        if (v != 3.0f) return 3;
    cudaFree(x);
    cudaFree(y);
    return 0;
}

extern "C" int unusual_shared_memory_opt_in() {
    std::vector<float> h(256);
    for (int i = 0; i < 256; ++i) h[i] = float(i);
    float* x = device(h);
    float* y;
    cudaMalloc(&y, 256 * sizeof(float));
    if (cudaFuncSetAttribute(big_tile<256>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             64 * 1024) != cudaSuccess)
        return 1;
    big_tile<256><<<1, 256, 64 * 1024>>>(x, y);
    if (cudaGetLastError() != cudaSuccess) return 2;
    if (cudaDeviceSynchronize() != cudaSuccess) return 3;
    auto r = back(y, 256);
    for (int i = 0; i < 256; ++i)
        if (r[i] != 64.0f * float((i + 1) % 256)) return 4;
    cudaFree(x);
    cudaFree(y);
    return 0;
}

extern "C" int unusual_namespace_shared() {
    std::vector<float> h(4 * 64);
    for (std::size_t i = 0; i < h.size(); ++i) h[i] = float(i);
    float* x = device(h);
    float* y;
    int* total;
    cudaMalloc(&y, h.size() * sizeof(float));
    cudaMalloc(&total, sizeof(int));
    cudaMemset(total, 0, sizeof(int));
    namespace_stage<<<4, 64>>>(x, y, total);
    if (cudaDeviceSynchronize() != cudaSuccess) return 1;
    auto r = back(y, h.size());
    for (int b = 0; b < 4; ++b)
        for (int t = 0; t < 64; ++t)
            if (r[b * 64 + t] != h[b * 64 + 63 - t]) return 2;
    if (back(total, 1)[0] != 256) return 3;
    cudaFree(x);
    cudaFree(y);
    cudaFree(total);
    return 0;
}

extern "C" int unusual_reduce_sync() {
    unsigned* out;
    cudaMalloc(&out, 64 * sizeof(unsigned));
    warp_reduces<<<1, 32>>>(out);
    if (cudaDeviceSynchronize() != cudaSuccess) return 1;
    auto r = back(out, 64);
    for (int lane = 0; lane < 32; ++lane)
        if (r[lane] != 528u || r[32 + lane] != 6u) return 2;
    cudaFree(out);
    return 0;
}

extern "C" int unusual_symbols() {
    int zero = 0;
    float s = 2.5f;
    if (cudaMemcpyToSymbol(g_counter, &zero, sizeof zero) != cudaSuccess) return 1;
    if (cudaMemcpyToSymbol(c_scale, &s, sizeof s) != cudaSuccess) return 2;
    float* y;
    cudaMalloc(&y, 64 * sizeof(float));
    use_symbols<<<2, 32>>>(y);
    if (cudaDeviceSynchronize() != cudaSuccess) return 3;
    int* counter = nullptr;
    if (cudaGetSymbolAddress(reinterpret_cast<void**>(&counter), g_counter) != cudaSuccess) return 4;
    int got = 0;
    cudaMemcpy(&got, counter, sizeof got, cudaMemcpyDeviceToHost);
    if (got != 64) return 5;
    for (float v : back(y, 64))
        if (v != 2.5f) return 6;
    cudaFree(y);
    return 0;
}

extern "C" int unusual_shared_per_instantiation() {
    std::vector<int> h(128);
    for (int i = 0; i < 128; ++i) h[i] = (i * 37) % 101;
    int* x = device(h);
    int* out;
    cudaMalloc(&out, 2 * sizeof(int));
    two_reductions<<<1, 128>>>(x, out);
    if (cudaDeviceSynchronize() != cudaSuccess) return 1;
    auto r = back(out, 2);
    int sum = 0, top = 0;
    for (int v : h) sum += v, top = v > top ? v : top;
    cudaFree(x);
    cudaFree(out);
    return r[0] == sum && r[1] == top ? 0 : 2;
}

extern "C" int unusual_written_nan() {
    const std::uint32_t poison = 0x7fdeadbfu;
    cudalings_emu::cudalings_emu_set_poison(poison);
    float* out;
    cudaMalloc(&out, 2 * sizeof(float));
    std::uint32_t init[2] = {poison, poison};
    cudaMemcpy(out, init, sizeof init, cudaMemcpyHostToDevice);
    touch_poison<<<1, 1>>>(out);
    int result = cudaDeviceSynchronize() != cudaSuccess ? 1 : 0;
    std::uint32_t got[2];
    cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost);
    cudalings_emu::cudalings_emu_set_poison(0);
    cudaFree(out);
    if (result) return result;
    // As on a GPU: the NaN a kernel computes from a NaN is the canonical one.
    return got[0] == 0x7fffffffu && got[1] == 0x7fffffffu ? 0 : 2;
}
