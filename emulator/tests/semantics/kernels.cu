// Semantics tests of the emulator: each `sem_*` entry point runs kernels the way the lessons
// use them and returns 0 when the results are right (else a number that says which check failed).
#include <cuda_runtime.h>

#include <cassert>
#include <cstdint>
#include <vector>

#include "cudalings_emu/emulator.h"
#include "device_vectors.cuh"

namespace {

// A shared-memory tree reduction per block, templated on the block size.
template <unsigned kBlock>
__global__ void block_sum(const float* x, float* out, int n) {
    __shared__ float s[kBlock];
    unsigned t = threadIdx.x;
    int i = blockIdx.x * kBlock + t;
    s[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (unsigned stride = kBlock / 2; stride > 0; stride >>= 1) {
        if (t < stride) s[t] += s[t + stride];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[0];
}

// Warp shuffles: down-reduction, xor with width 16, inclusive scan with up, broadcast.
__global__ void shuffles(int* out) {
    unsigned lane = threadIdx.x % 32;
    int v = int(lane) + 1;
    int sum = v;
    for (int o = 16; o > 0; o /= 2) sum += __shfl_down_sync(0xffffffffu, sum, o);
    int half = v;
    for (int o = 8; o > 0; o /= 2) half += __shfl_xor_sync(0xffffffffu, half, o, 16);
    int scan = v;
    for (int o = 1; o < 32; o *= 2) {
        int u = __shfl_up_sync(0xffffffffu, scan, o);
        if (lane >= unsigned(o)) scan += u;
    }
    int bcast = __shfl_sync(0xffffffffu, v * 10, 5);
    double d = __shfl_sync(0xffffffffu, double(lane) * 0.5, 31);
    out[threadIdx.x * 5 + 0] = sum;
    out[threadIdx.x * 5 + 1] = half;
    out[threadIdx.x * 5 + 2] = scan;
    out[threadIdx.x * 5 + 3] = bcast;
    out[threadIdx.x * 5 + 4] = int(d * 2);
}

__global__ void votes(unsigned* out) {
    unsigned lane = threadIdx.x;
    unsigned ballot = __ballot_sync(0xffffffffu, lane % 3 == 0);
    int any = __any_sync(0xffffffffu, lane == 17);
    int all = __all_sync(0xffffffffu, lane < 31);
    out[3 + lane] = __match_any_sync(0xffffffffu, lane % 4);
    if (lane == 0) {
        out[0] = ballot;
        out[1] = unsigned(any);
        out[2] = unsigned(all);
        out[43] = unsigned(__popc(0xf0f0u) + __ffs(0x100) + __clz(1));
    }
}

__global__ void atomics(int* gi, float* gf, unsigned long long* gu, unsigned* gm) {
    __shared__ int si;
    if (threadIdx.x == 0) si = 0;
    __syncthreads();
    atomicAdd(&si, 1);
    atomicAdd(gi, 2);
    atomicAdd(gf, 0.5f);
    atomicAdd(gu, 1ull);
    atomicMax(gm, threadIdx.x);
    atomicMin(gm + 1, threadIdx.x + 5);
    atomicCAS(gm + 2, 0u, 7u);
    atomicInc(gm + 3, 9u);
    __syncthreads();
    if (threadIdx.x == 0) atomicAdd(gi + 1, si);
}

__global__ void dynamic_shared_reverse(const float* x, float* y) {
    extern __shared__ float s[];
    s[threadIdx.x] = x[threadIdx.x];
    __syncthreads();
    y[threadIdx.x] = s[blockDim.x - 1 - threadIdx.x];
}

__global__ void indices(unsigned* out) {
    unsigned b = blockIdx.y * gridDim.x + blockIdx.x;
    unsigned t = threadIdx.y * blockDim.x + threadIdx.x;
    unsigned i = b * blockDim.x * blockDim.y + t;
    out[i] = i;
}

__global__ void float4_copy(const float* x, float* y, int n4) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) reinterpret_cast<float4*>(y)[i] = __ldg(reinterpret_cast<const float4*>(x) + i);
}

__global__ void nothing() {}

}  // namespace

extern "C" int sem_block_reduction() {
    const int n = 1000;
    std::vector<float> h(n);
    for (int i = 0; i < n; ++i) h[i] = float(i % 7);
    float* x = device(h);
    float* out;
    cudaMalloc(&out, 4 * sizeof(float));
    block_sum<256><<<4, 256>>>(x, out, n);
    if (cudaGetLastError() != cudaSuccess) return 1;
    if (cudaDeviceSynchronize() != cudaSuccess) return 2;
    auto r = back(out, 4);
    double want = 0;
    for (float v : h) want += v;
    double got = double(r[0]) + r[1] + r[2] + r[3];
    cudaFree(x);
    cudaFree(out);
    return got == want ? 0 : 3;
}

extern "C" int sem_shuffles() {
    int* out;
    cudaMalloc(&out, 64 * 5 * sizeof(int));
    shuffles<<<1, 64>>>(out);
    if (cudaDeviceSynchronize() != cudaSuccess) return 1;
    auto r = back(out, 64 * 5);
    cudaFree(out);
    for (int t = 0; t < 64; ++t) {
        int lane = t % 32;
        if (lane == 0 && r[t * 5 + 0] != 528) return 2;  // 1 + ... + 32
        int seg = lane / 16;
        int half_want = 0;
        for (int k = 0; k < 16; ++k) half_want += seg * 16 + k + 1;
        if (r[t * 5 + 1] != half_want) return 3;
        if (r[t * 5 + 2] != (lane + 1) * (lane + 2) / 2) return 4;
        if (r[t * 5 + 3] != 60) return 5;
        if (r[t * 5 + 4] != 31) return 6;
    }
    return 0;
}

extern "C" int sem_votes() {
    unsigned* out;
    cudaMalloc(&out, 44 * sizeof(unsigned));
    votes<<<1, 32>>>(out);
    if (cudaDeviceSynchronize() != cudaSuccess) return 1;
    auto r = back(out, 44);
    cudaFree(out);
    unsigned ballot = 0;
    for (unsigned l = 0; l < 32; l += 3) ballot |= 1u << l;
    if (r[0] != ballot) return 2;
    if (r[1] != 1 || r[2] != 0) return 3;
    for (unsigned l = 0; l < 32; ++l) {
        unsigned want = 0;
        for (unsigned k = 0; k < 32; ++k)
            if (k % 4 == l % 4) want |= 1u << k;
        if (r[3 + l] != want) return 4;
    }
    if (r[43] != 8 + 9 + 31) return 6;
    return 0;
}

extern "C" int sem_atomics() {
    int* gi;
    float* gf;
    unsigned long long* gu;
    unsigned* gm;
    cudaMalloc(&gi, 8);
    cudaMalloc(&gf, 4);
    cudaMalloc(&gu, 8);
    cudaMalloc(&gm, 16);
    cudaMemset(gi, 0, 8);
    cudaMemset(gf, 0, 4);
    cudaMemset(gu, 0, 8);
    unsigned init[4] = {0, 1000, 0, 0};
    cudaMemcpy(gm, init, 16, cudaMemcpyHostToDevice);
    atomics<<<2, 128>>>(gi, gf, gu, gm);
    if (cudaDeviceSynchronize() != cudaSuccess) return 1;
    auto i = back(gi, 2);
    auto f = back(gf, 1);
    auto u = back(gu, 1);
    auto m = back(gm, 4);
    if (i[0] != 512 || i[1] != 256) return 2;
    if (f[0] != 128.0f) return 3;
    if (u[0] != 256) return 4;
    if (m[0] != 127 || m[1] != 5 || m[2] != 7 || m[3] != 6) return 5;  // 256 incs, wrapping after 9
    return 0;
}

extern "C" int sem_dynamic_shared() {
    std::vector<float> h(128);
    for (int i = 0; i < 128; ++i) h[i] = float(i);
    float* x = device(h);
    float* y;
    cudaMalloc(&y, 128 * 4);
    dynamic_shared_reverse<<<1, 128, 128 * sizeof(float)>>>(x, y);
    if (cudaDeviceSynchronize() != cudaSuccess) return 1;
    auto r = back(y, 128);
    for (int i = 0; i < 128; ++i)
        if (r[i] != float(127 - i)) return 2;
    return 0;
}

extern "C" int sem_indices_and_float4() {
    unsigned* out;
    cudaMalloc(&out, 6 * 64 * 4);
    indices<<<dim3(3, 2), dim3(8, 8)>>>(out);
    if (cudaDeviceSynchronize() != cudaSuccess) return 1;
    auto r = back(out, 6 * 64);
    for (unsigned i = 0; i < r.size(); ++i)
        if (r[i] != i) return 2;
    std::vector<float> h(400);
    for (int i = 0; i < 400; ++i) h[i] = float(i) * 0.25f;
    float* x = device(h);
    float* y;
    cudaMalloc(&y, 400 * 4);
    float4_copy<<<1, 128>>>(x, y, 100);
    if (cudaDeviceSynchronize() != cudaSuccess) return 3;
    if (back(y, 400) != h) return 4;
    return 0;
}

// Launch validation as on a GPU: the error comes from cudaGetLastError, the kernel never runs.
extern "C" int sem_launch_validation() {
    nothing<<<1, 1025>>>();
    if (cudaGetLastError() != cudaErrorInvalidConfiguration) return 1;
    if (cudaGetLastError() != cudaSuccess) return 2;  // taken once
    nothing<<<dim3(1, 70000), 32>>>();
    if (cudaGetLastError() != cudaErrorInvalidConfiguration) return 3;
    nothing<<<0, 32>>>();
    if (cudaGetLastError() != cudaErrorInvalidConfiguration) return 4;
    nothing<<<1, 32>>>();
    if (cudaGetLastError() != cudaSuccess) return 5;
    return 0;
}

// Dry mode (Options::dry, set by the caller): a launch is checked as on a GPU and not run, and
// device memsets and copies leave memory alone, so a 1 GiB buffer is never touched.
__global__ void fill_ones(float* y, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * 256ull + threadIdx.x; i < n; i += 256ull * gridDim.x)
        y[i] = 1.0f;
}
extern "C" int sem_dry_launches() {
    const unsigned long long n = 1ull << 28;
    float *y, *z;
    if (cudaMalloc(&y, n * 4) != cudaSuccess || cudaMalloc(&z, n * 4) != cudaSuccess) return 1;
    if (cudaMemset(y, 0xff, n * 4) != cudaSuccess) return 2;
    fill_ones<<<unsigned(n / 256), 256>>>(y, n);
    if (cudaGetLastError() != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess) return 3;
    if (cudaMemcpy(z, y, n * 4, cudaMemcpyDeviceToDevice) != cudaSuccess) return 4;
    float first = -1, last = -1;
    cudaMemcpy(&first, y, 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(&last, z + n - 1, 4, cudaMemcpyDeviceToHost);
    if (first != 0.0f || last != 0.0f) return 5;  // nothing ran, nothing was set or copied
    nothing<<<dim3(1, 70000), 32>>>();            // still refused as on a GPU
    if (cudaGetLastError() != cudaErrorInvalidConfiguration) return 6;
    cudaFree(y);
    cudaFree(z);
    return 0;
}

// Dry mode with a sample (Options::sample_blocks, set by the caller): a few blocks of each
// launch run at the real geometry, bounds checked. An int product that passes 2^31 only at
// n = 2^28 (chunk bounds n * block / blocks, every block from 8 on) sends the last block's index
// negative: out of bounds, a fault at the next synchronizing call.
__global__ void chunked_copy_int(const float* x, float* y, int n) {
    const int block = static_cast<int>(blockIdx.x), blocks = static_cast<int>(gridDim.x);
    const int begin = n * block / blocks, end = n * (block + 1) / blocks;
    for (int i = begin + static_cast<int>(threadIdx.x); i < end; i += static_cast<int>(blockDim.x))
        y[i] = x[i];
}
extern "C" int sem_sample_overflow() {
    const int n = 1 << 28;
    float *x, *y;
    if (cudaMalloc(&x, std::size_t(n) * 4) != cudaSuccess ||
        cudaMalloc(&y, std::size_t(n) * 4) != cudaSuccess)
        return 1;
    chunked_copy_int<<<64, 256>>>(x, y, n);
    if (cudaGetLastError() != cudaSuccess) return 2;
    if (cudaDeviceSynchronize() != cudaErrorIllegalAddress) return 3;
    cudaFree(x);
    cudaFree(y);
    return 0;
}

// What a sample of blocks on memory never filled does that is no bug: a look-back that waits
// for a block never run, a grid-stride loop far longer than the budget, an assert on a value
// the input never had, a pointer read from memory never written (null). None is reported, the
// launch ends, and the calls return cudaSuccess.
__global__ void wait_for_predecessor(volatile int* flags, float* y) {
    if (blockIdx.x > 0)
        while (flags[blockIdx.x - 1] == 0) {
        }
    y[blockIdx.x * blockDim.x + threadIdx.x] = 1.0f;
    __syncthreads();
    if (threadIdx.x == 0) flags[blockIdx.x] = 1;
}
__global__ void stride_over(float* y, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * 256ull + threadIdx.x; i < n; i += 256ull * gridDim.x)
        y[i] = y[i] + 1.0f;
}
__global__ void assert_filled(const float* x) { assert(x[blockIdx.x] == 1.0f); }
__global__ void follow_pointer(float* const* table) { *table[blockIdx.x] = 1.0f; }
// Each entry runs one of them on 2^28 elements (the test resets the options in between: a launch
// that changed memory ends the sampling).
extern "C" int sem_sample_quiet_wait() {
    const unsigned long long n = 1ull << 28;
    float* y;
    int* flags;
    if (cudaMalloc(&y, n * 4) != cudaSuccess || cudaMalloc(&flags, (n / 256) * 4) != cudaSuccess)
        return 1;
    wait_for_predecessor<<<unsigned(n / 256), 256>>>(flags, y);
    if (cudaDeviceSynchronize() != cudaSuccess || cudaGetLastError() != cudaSuccess) return 2;
    cudaFree(y);
    cudaFree(flags);
    return 0;
}
extern "C" int sem_sample_quiet_stride() {
    const unsigned long long n = 1ull << 28;
    float* y;
    if (cudaMalloc(&y, n * 4) != cudaSuccess) return 1;
    stride_over<<<264, 256>>>(y, n);
    if (cudaDeviceSynchronize() != cudaSuccess || cudaGetLastError() != cudaSuccess) return 2;
    cudaFree(y);
    return 0;
}
extern "C" int sem_sample_quiet_assert() {
    float* y;
    if (cudaMalloc(&y, 1024 * 4) != cudaSuccess) return 1;
    assert_filled<<<1024, 32>>>(y);
    if (cudaDeviceSynchronize() != cudaSuccess || cudaGetLastError() != cudaSuccess) return 2;
    cudaFree(y);
    return 0;
}
extern "C" int sem_sample_quiet_pointer() {
    float** table;
    if (cudaMalloc(&table, 1024 * sizeof(float*)) != cudaSuccess) return 1;
    follow_pointer<<<1024, 1>>>(table);
    if (cudaDeviceSynchronize() != cudaSuccess || cudaGetLastError() != cudaSuccess) return 2;
    cudaFree(table);
    return 0;
}

// Once a sampled launch changed device memory, the later launches of the call are not run: they
// would read what a partial run left (here, the out-of-bounds launch after fill_ones is only
// checked). Returns 0 when the second launch did not run.
extern "C" int sem_sample_stops_after_a_change() {
    const int n = 1 << 28;
    float *x, *y;
    if (cudaMalloc(&x, std::size_t(n) * 4) != cudaSuccess ||
        cudaMalloc(&y, std::size_t(n) * 4) != cudaSuccess)
        return 1;
    fill_ones<<<unsigned(n / 256), 256>>>(x, (unsigned long long)n);
    if (cudaDeviceSynchronize() != cudaSuccess) return 2;
    chunked_copy_int<<<64, 256>>>(x, y, n);
    if (cudaDeviceSynchronize() != cudaSuccess) return 3;
    cudaFree(x);
    cudaFree(y);
    return 0;
}

// Values at the sampled sizes (emulator.h, fill_on_demand and track_writes): x is made on demand
// (x[i] = i mod 1000 + 0.5), y's written words are recorded. The sampled blocks of y = 2x + 1
// read x where it was made; what they wrote is right and nothing else was written; a page of x
// no kernel touched is made when host code reads it (a fault the emulator answers) or a copy
// does; the second launch is skipped (the first changed memory) and counted.
__global__ void twice_plus_one(const float* x, float* y, unsigned long long n) {
    const unsigned long long i = blockIdx.x * 256ull + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i] + 1.0f;
}
extern "C" int sem_sample_values() {
    const unsigned long long n = 1ull << 26;
    float *x, *y;
    if (cudaMalloc(&x, n * 4) != cudaSuccess || cudaMalloc(&y, n * 4) != cudaSuccess) return 1;
    auto value = [](std::size_t i) { return static_cast<float>(i % 1000) + 0.5f; };
    if (!cudalings_emu::fill_on_demand(x, n * 4, [&](std::size_t offset, std::size_t bytes,
                                                    void* dst) {
            for (std::size_t k = 0; k < bytes / 4; ++k)
                static_cast<float*>(dst)[k] = value(offset / 4 + k);
        }))
        return 2;
    if (!cudalings_emu::track_writes(y, n * 4)) return 3;
    twice_plus_one<<<unsigned(n / 256), 256>>>(x, y, n);
    if (cudaDeviceSynchronize() != cudaSuccess) return 4;
    const auto written = cudalings_emu::written_words(y);
    if (written.size() != 4) return 5;  // four sampled blocks, none next to another
    for (const auto& [lo, hi] : written) {
        if (hi - lo != 256 || lo % 256) return 6;
        std::vector<float> got(hi - lo);
        if (cudaMemcpy(got.data(), y + lo, (hi - lo) * 4, cudaMemcpyDeviceToHost) != cudaSuccess)
            return 7;
        for (std::size_t i = lo; i < hi; ++i)
            if (got[i - lo] != 2.0f * value(i) + 1.0f) return 8;
    }
    // A page of x in the middle, read by host code (not hooked: a fault, answered), then by a copy.
    const std::size_t middle = n / 2 + 12345;
    if (x[middle] != value(middle)) return 9;
    float copied = 0;
    if (cudaMemcpy(&copied, x + n / 3, 4, cudaMemcpyDeviceToHost) != cudaSuccess ||
        copied != value(n / 3))
        return 10;
    if (cudalings_emu::sample_skips() != 0) return 11;
    twice_plus_one<<<unsigned(n / 256), 256>>>(x, y, n);
    if (cudaDeviceSynchronize() != cudaSuccess) return 12;
    if (cudalings_emu::sample_skips() != 1 || cudalings_emu::written_words(y).size() != 4) return 13;
    cudaFree(x);
    cudaFree(y);
    return 0;
}

// A kernel fault surfaces at the next synchronizing call, as cudaErrorIllegalAddress.
__global__ void write_far(float* y) { y[threadIdx.x + 100000] = 1.0f; }
extern "C" int sem_fault_reported_at_sync() {
    float* y;
    cudaMalloc(&y, 128);
    write_far<<<1, 32>>>(y);
    if (cudaGetLastError() != cudaSuccess) return 1;
    if (cudaDeviceSynchronize() != cudaErrorIllegalAddress) return 2;
    if (cudaDeviceSynchronize() != cudaSuccess) return 3;
    cudaFree(y);
    return 0;
}

// Speed: one thread per element, 2^20 threads; returns the CPU seconds the launch took on this
// thread (one core; not wall time, which a loaded CI machine inflates), or -1.
__global__ void vector_add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
#include <time.h>
extern "C" double sem_vector_add_seconds(int n) {
    float *a, *b, *c;
    cudaMalloc(&a, n * 4);
    cudaMalloc(&b, n * 4);
    cudaMalloc(&c, n * 4);
    cudaMemset(a, 0, n * 4);
    cudaMemset(b, 0, n * 4);
    timespec t0{}, t1{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    vector_add<<<(n + 255) / 256, 256>>>(a, b, c, n);
    cudaError_t e = cudaDeviceSynchronize();
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
    double s = double(t1.tv_sec - t0.tv_sec) + 1e-9 * double(t1.tv_nsec - t0.tv_nsec);
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    return e == cudaSuccess ? s : -1;
}
