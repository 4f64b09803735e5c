// The lesson 10 tuning bench (a GPU machine, sm_90): every step's reference solution, the
// uncoalesced form of step 1, other shared-memory layouts of step 4, and variants of the
// capstone's template (block tile, warp tile, k slice, shared buffers, register prefetch,
// padding, blocks per SM) timed against cublasSgemm (fp32, default math) and, for scale only,
// cuBLAS with TF32 tensor cores (a different precision), at 4096³ and 16384 × 16384 × 256, with
// alpha = 1.5, beta = -0.5. Shares no code with the checker.
//
// Every call: C restored from its input copy (untimed), the L2 flushed (untimed: a read+write
// pass, then a read-only pass, over 2 x 256 MiB, as the checker does), then CUDA events around
// the one call. The median of the samples (3 to 30 of them, about a second of calls per row).
// Every output is compared with cuBLAS fp32's: max |C - C_cublas| / max |C_cublas| must stay
// under 1e-4 (fp32 roundings of sums of k products give ~1e-6 here; a wrong kernel gives ~1);
// TF32 is expected near 1e-3 and is reported, not judged.
//
//   bench/gemm_sweep/run.sh            (builds the step .so files and this bench, then runs it)
//   gemm_sweep STEP.so ...             (the steps' shared objects, in order)
#include <cublas_v2.h>
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

// The capstone's template, for the variants. Its own extern "C" gemm is the default config.
#include "../../solutions/10_gemm/07_register_prefetch.cu"
#include "../sweep/sweep.cuh"

#define CHECK_CUBLAS(call)                                                                  \
    do {                                                                                    \
        cublasStatus_t s_ = (call);                                                         \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                  \
            std::fprintf(stderr, "%s:%d %s: cuBLAS status %d\n", __FILE__, __LINE__, #call, \
                         static_cast<int>(s_));                                             \
            std::exit(1);                                                                   \
        }                                                                                   \
    } while (0)

using GemmFn = cudaError_t (*)(const float*, const float*, float*, size_t, size_t, size_t, float,
                               float, cudaStream_t);

// ---------------------------------------------------------------- step 1, lanes on rows
// The mapping step 1 warns against: consecutive lanes take consecutive rows, so every lane
// reads its own row of A (k floats apart) and the warp's B load is one broadcast.
__global__ void naive_rows_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                  float* __restrict__ C, unsigned m, unsigned n, unsigned k,
                                  float alpha, float beta) {
    const unsigned row = blockIdx.x * 32 + threadIdx.x;
    const unsigned col = blockIdx.y * 8 + threadIdx.y;
    if (row >= m || col >= n) return;
    float acc = 0.0f;
    for (unsigned p = 0; p < k; ++p)
        acc += A[static_cast<size_t>(row) * k + p] * B[static_cast<size_t>(p) * n + col];
    float* c = C + static_cast<size_t>(row) * n + col;
    *c = alpha * acc + beta * *c;
}
cudaError_t naive_rows(const float* A, const float* B, float* C, size_t m, size_t n, size_t k,
                       float alpha, float beta, cudaStream_t s) {
    naive_rows_kernel<<<dim3((m + 31) / 32, (n + 7) / 8), dim3(32, 8), 0, s>>>(
        A, B, C, unsigned(m), unsigned(n), unsigned(k), alpha, beta);
    return cudaGetLastError();
}

// ---------------------------------------------------------------- step 4, other layouts
// Step 4's kernel (solutions/10_gemm/04_2d_blocking.cu) with its shared-memory layout as knobs,
// to see what its bank conflicts cost: APad spare floats per As row (the step: 1), and whether
// a thread's 8 columns (StridedCols) and 8 rows (StridedRows) are 16 apart instead of adjacent.
// Adjacent columns: lanes read B words 8 apart (4-way conflict); strided: 16 consecutive words.
// Unpadded adjacent rows: the two half-warps read A words 64 apart (2-way); padded or strided:
// different banks. A copy of the step's code, kept here so the step stays one plain kernel.
template <unsigned APad, bool StridedCols, bool StridedRows>
__global__ void __launch_bounds__(256)
    step4_layout_kernel(const float* __restrict__ A, const float* __restrict__ B,
                        float* __restrict__ C, unsigned m, unsigned n, unsigned k, float alpha,
                        float beta) {
    constexpr unsigned kBM = 128, kBN = 128, kBK = 8, kTM = 8, kTN = 8, kThreads = 256;
    __shared__ float As[kBM][kBK + APad];
    __shared__ float Bs[kBK][kBN];
    const unsigned t = threadIdx.x;
    const unsigned row0 = blockIdx.y * kBM, col0 = blockIdx.x * kBN;
    const unsigned tr = t / (kBN / kTN), tc = t % (kBN / kTN);
    const unsigned ar = t / kBK, ac = t % kBK, br = t / kBN, bc = t % kBN;
    constexpr unsigned kARows = kThreads / kBK, kBRows = kThreads / kBN;
    // This thread's i-th row and j-th column within the block's tile.
    auto trow = [&](unsigned i) { return StridedRows ? tr + 16 * i : tr * kTM + i; };
    auto tcol = [&](unsigned j) { return StridedCols ? tc + 16 * j : tc * kTN + j; };

    float acc[kTM][kTN] = {};
    float a[kTM], b[kTN];
    for (unsigned p0 = 0; p0 < k; p0 += kBK) {
#pragma unroll
        for (unsigned r = ar; r < kBM; r += kARows)
            As[r][ac] = (row0 + r < m && p0 + ac < k) ? A[size_t(row0 + r) * k + p0 + ac] : 0.0f;
#pragma unroll
        for (unsigned r = br; r < kBK; r += kBRows)
            Bs[r][bc] = (p0 + r < k && col0 + bc < n) ? B[size_t(p0 + r) * n + col0 + bc] : 0.0f;
        __syncthreads();
#pragma unroll
        for (unsigned p = 0; p < kBK; ++p) {
#pragma unroll
            for (unsigned i = 0; i < kTM; ++i) a[i] = As[trow(i)][p];
#pragma unroll
            for (unsigned j = 0; j < kTN; ++j) b[j] = Bs[p][tcol(j)];
#pragma unroll
            for (unsigned i = 0; i < kTM; ++i)
#pragma unroll
                for (unsigned j = 0; j < kTN; ++j) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (unsigned i = 0; i < kTM; ++i)
#pragma unroll
        for (unsigned j = 0; j < kTN; ++j) {
            const unsigned row = row0 + trow(i), col = col0 + tcol(j);
            if (row < m && col < n) {
                float* c = C + size_t(row) * n + col;
                *c = alpha * acc[i][j] + beta * *c;
            }
        }
}
template <unsigned APad, bool StridedCols, bool StridedRows>
cudaError_t step4_layout(const float* A, const float* B, float* C, size_t m, size_t n, size_t k,
                         float alpha, float beta, cudaStream_t s) {
    step4_layout_kernel<APad, StridedCols, StridedRows>
        <<<dim3((n + 127) / 128, (m + 127) / 128), 256, 0, s>>>(A, B, C, unsigned(m), unsigned(n),
                                                                unsigned(k), alpha, beta);
    return cudaGetLastError();
}

// ---------------------------------------------------------------- cuBLAS
cublasHandle_t g_fp32 = nullptr, g_tf32 = nullptr;
cudaError_t cublas_fp32(const float* A, const float* B, float* C, size_t m, size_t n, size_t k,
                        float alpha, float beta, cudaStream_t s) {
    CHECK_CUBLAS(cublasSetStream(g_fp32, s));
    CHECK_CUBLAS(cublasSgemm(g_fp32, CUBLAS_OP_N, CUBLAS_OP_N, int(n), int(m), int(k), &alpha, B,
                             int(n), A, int(k), &beta, C, int(n)));
    return cudaGetLastError();
}
cudaError_t cublas_tf32(const float* A, const float* B, float* C, size_t m, size_t n, size_t k,
                        float alpha, float beta, cudaStream_t s) {
    CHECK_CUBLAS(cublasSetStream(g_tf32, s));
    CHECK_CUBLAS(cublasGemmEx(g_tf32, CUBLAS_OP_N, CUBLAS_OP_N, int(n), int(m), int(k), &alpha, B,
                              CUDA_R_32F, int(n), A, CUDA_R_32F, int(k), &beta, C, CUDA_R_32F,
                              int(n), CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT));
    return cudaGetLastError();
}

// ---------------------------------------------------------------- helpers
__global__ void fill_kernel(float* p, size_t n, unsigned long long seed) {
    for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
         i += size_t{gridDim.x} * blockDim.x) {
        unsigned long long z = seed + i * 0x9e3779b97f4a7c15ull;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        p[i] = float(z >> 40) * (2.0f / 16777216.0f) - 1.0f;  // uniform in [-1, 1)
    }
}
// max |got - want| and max |want| (non-negative floats compare as their bits)
__global__ void diff_kernel(const float* got, const float* want, size_t n, unsigned* out) {
    float d = 0.0f, w = 0.0f;
    for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
         i += size_t{gridDim.x} * blockDim.x) {
        const float g = got[i];
        d = fmaxf(d, g == g ? fabsf(g - want[i]) : INFINITY);
        w = fmaxf(w, fabsf(want[i]));
    }
    atomicMax(&out[0], __float_as_uint(d));
    atomicMax(&out[1], __float_as_uint(w));
}

struct Shape {
    size_t m, n, k;
    const char* name;
};
struct Row {
    std::string name;
    double us[2] = {0, 0}, err[2] = {0, 0};
    bool ran[2] = {false, false};
};

int main(int argc, char** argv) {
    std::vector<std::pair<std::string, GemmFn>> fns;
    for (int i = 1; i < argc; ++i) {
        void* h = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            std::fprintf(stderr, "%s\n", dlerror());
            return 1;
        }
        auto fn = reinterpret_cast<GemmFn>(dlsym(h, "gemm"));
        if (!fn) {
            std::fprintf(stderr, "%s: no gemm\n", argv[i]);
            return 1;
        }
        std::string name = argv[i];
        name = name.substr(name.find_last_of('/') + 1);
        name = "step " + name.substr(0, name.size() - 3);
        fns.push_back({name, fn});
        if (name.rfind("step 01", 0) == 0) fns.push_back({"step 01, lanes on rows", naive_rows});
        if (name.rfind("step 04", 0) == 0) {
            fns.push_back({"04 As unpadded (gpu-run-1's step 4)", step4_layout<0, false, false>});
            fns.push_back({"04 As unpadded, columns 16 apart", step4_layout<0, true, false>});
            fns.push_back({"04 As +1, columns 16 apart", step4_layout<1, true, false>});
        }
    }
    // Capstone variants: <BM, BN, BK, WM, WN, WMITER, WNITER, TM, TN, Stages, Prefetch[, Pad[,
    // MinBlocks]]>; MinBlocks 2: 256 threads at <= 128 registers, two blocks per SM.
    // Prefetch alone, double buffering alone and both, at k slices of 8 and 16:
    fns.push_back({"07 128x128x8  8w 64x32 1buf prefetch",
                   gemm_with<GemmConfig<128, 128, 8, 64, 32, 2, 2, 4, 4, 1, true>>});
    fns.push_back({"07 128x128x8  8w 64x32 2buf no prefetch",
                   gemm_with<GemmConfig<128, 128, 8, 64, 32, 2, 2, 4, 4, 2, false>>});
    fns.push_back({"07 128x128x8  8w 64x32 2buf prefetch",
                   gemm_with<GemmConfig<128, 128, 8, 64, 32, 2, 2, 4, 4, 2, true>>});
    fns.push_back({"07 128x128x16 8w 64x32 1buf prefetch",
                   gemm_with<GemmConfig<128, 128, 16, 64, 32, 2, 2, 4, 4, 1, true>>});
    fns.push_back({"07 128x128x16 8w 64x32 1buf prefetch 2 blk/SM",
                   gemm_with<GemmConfig<128, 128, 16, 64, 32, 2, 2, 4, 4, 1, true, 4, 2>>});
    fns.push_back({"07 128x128x16 8w 64x32 2buf no prefetch",
                   gemm_with<GemmConfig<128, 128, 16, 64, 32, 2, 2, 4, 4, 2, false>>});
    fns.push_back({"07 128x128x16 8w 64x32 2buf prefetch (default)", gemm_with<DefaultConfig>});
    fns.push_back({"07 128x128x16 8w 64x32 2buf prefetch, no cap",
                   gemm_with<GemmConfig<128, 128, 16, 64, 32, 2, 2, 4, 4, 2, true>>});
    // Around the default: the warp's shape, its lanes' sub-tiles, As's padding.
    fns.push_back({"07 128x128x16 8w 32x64 2buf prefetch",
                   gemm_with<GemmConfig<128, 128, 16, 32, 64, 1, 4, 4, 4, 2, true, 4, 2>>});
    fns.push_back({"07 128x128x16 8w 64x32 sub 16x32 2buf",
                   gemm_with<GemmConfig<128, 128, 16, 64, 32, 4, 1, 4, 4, 2, true, 4, 2>>});
    fns.push_back({"07 128x128x16 8w 64x32 sub 64x8 2buf",
                   gemm_with<GemmConfig<128, 128, 16, 64, 32, 1, 4, 4, 4, 2, true, 4, 2>>});
    fns.push_back({"07 128x128x16 8w 64x32 2buf As unpadded",
                   gemm_with<GemmConfig<128, 128, 16, 64, 32, 2, 2, 4, 4, 2, true, 0, 2>>});
    // Bigger tiles, 128 outputs per lane (one block of 8 warps per SM): 48 KiB of static shared
    // memory holds two k16 buffers only with As unpadded.
    fns.push_back({"07 128x256x8  8w 64x64 2buf prefetch",
                   gemm_with<GemmConfig<128, 256, 8, 64, 64, 2, 4, 4, 4, 2, true>>});
    fns.push_back({"07 128x256x16 8w 64x64 2buf As unpadded",
                   gemm_with<GemmConfig<128, 256, 16, 64, 64, 2, 4, 4, 4, 2, true, 0>>});
    fns.push_back({"07 256x128x16 8w 64x64 2buf As unpadded",
                   gemm_with<GemmConfig<256, 128, 16, 64, 64, 2, 4, 4, 4, 2, true, 0>>});
    CHECK_CUBLAS(cublasCreate(&g_fp32));
    CHECK_CUBLAS(cublasSetMathMode(g_fp32, CUBLAS_DEFAULT_MATH));
    CHECK_CUBLAS(cublasCreate(&g_tf32));
    CHECK_CUBLAS(cublasSetMathMode(g_tf32, CUBLAS_TF32_TENSOR_OP_MATH));
    const size_t cublas_index = fns.size();
    fns.push_back({"cublasSgemm (fp32, default math)", cublas_fp32});
    fns.push_back({"cuBLAS TF32 tensor cores (other precision)", cublas_tf32});

    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    int clock_khz = 0;
    CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
    // FP32 peak: 128 FP32 lanes per SM on sm_80+ consumer parts and sm_90 (2 flops per FMA).
    const double peak_tflops = 2.0 * 128.0 * prop.multiProcessorCount * clock_khz * 1e3 / 1e12;
    std::printf("GPU: %s, %d SMs, %.0f MHz (max): FP32 peak %.1f TFLOP/s (128 lanes x 2 flops)\n",
                prop.name, prop.multiProcessorCount, clock_khz / 1e3, peak_tflops);

    const Shape shapes[2] = {{4096, 4096, 4096, "4096^3"}, {16384, 16384, 256, "16384x16384x256"}};
    const float alpha = 1.5f, beta = -0.5f;
    std::vector<Row> rows(fns.size());
    for (size_t f = 0; f < fns.size(); ++f) rows[f].name = fns[f].first;

    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    const sweep::L2Flush flush;
    unsigned* diff;
    CHECK(cudaMalloc(&diff, 8));

    for (int si = 0; si < 2; ++si) {
        const Shape sh = shapes[si];
        float *A, *B, *C, *C0, *Cref;
        CHECK(cudaMalloc(&A, sh.m * sh.k * 4));
        CHECK(cudaMalloc(&B, sh.k * sh.n * 4));
        CHECK(cudaMalloc(&C, sh.m * sh.n * 4));
        CHECK(cudaMalloc(&C0, sh.m * sh.n * 4));
        CHECK(cudaMalloc(&Cref, sh.m * sh.n * 4));
        fill_kernel<<<4096, 256, 0, s>>>(A, sh.m * sh.k, 1);
        fill_kernel<<<4096, 256, 0, s>>>(B, sh.k * sh.n, 2);
        fill_kernel<<<4096, 256, 0, s>>>(C0, sh.m * sh.n, 3);
        CHECK(cudaGetLastError());
        // The reference values: cuBLAS fp32.
        CHECK(cudaMemcpyAsync(Cref, C0, sh.m * sh.n * 4, cudaMemcpyDeviceToDevice, s));
        CHECK(cublas_fp32(A, B, Cref, sh.m, sh.n, sh.k, alpha, beta, s));
        CHECK(cudaStreamSynchronize(s));
        std::printf("\n%s (m=%zu n=%zu k=%zu), alpha=%.2f beta=%.2f\n", sh.name, sh.m, sh.n, sh.k,
                    alpha, beta);
        const double flops = 2.0 * sh.m * sh.n * sh.k;
        for (size_t f = 0; f < fns.size(); ++f) {
            auto call = [&] {
                CHECK(cudaMemcpyAsync(C, C0, sh.m * sh.n * 4, cudaMemcpyDeviceToDevice, s));
                flush.run(s);
                cudaEvent_t e0, e1;
                CHECK(cudaEventCreate(&e0));
                CHECK(cudaEventCreate(&e1));
                CHECK(cudaEventRecord(e0, s));
                CHECK(fns[f].second(A, B, C, sh.m, sh.n, sh.k, alpha, beta, s));
                CHECK(cudaEventRecord(e1, s));
                CHECK(cudaEventSynchronize(e1));
                float ms = 0;
                CHECK(cudaEventElapsedTime(&ms, e0, e1));
                CHECK(cudaEventDestroy(e0));
                CHECK(cudaEventDestroy(e1));
                return 1000.0 * ms;
            };
            const double first = call();  // warm-up (and the size of a sample)
            call();
            const int samples = std::max(3, std::min(30, int(1e6 / std::max(first, 1.0))));
            std::vector<double> t;
            for (int i = 0; i < samples; ++i) t.push_back(call());
            std::sort(t.begin(), t.end());
            const double med = t[t.size() / 2];
            CHECK(cudaMemsetAsync(diff, 0, 8, s));
            diff_kernel<<<1024, 256, 0, s>>>(C, Cref, sh.m * sh.n, diff);
            unsigned d[2];
            CHECK(cudaMemcpyAsync(d, diff, 8, cudaMemcpyDeviceToHost, s));
            CHECK(cudaStreamSynchronize(s));
            float dmax, wmax;
            std::memcpy(&dmax, &d[0], 4);
            std::memcpy(&wmax, &d[1], 4);
            rows[f].us[si] = med;
            rows[f].err[si] = dmax / std::max(wmax, 1e-30f);
            rows[f].ran[si] = true;
            std::printf("  %-46s %10.1f us  %6.2f TFLOP/s  rel err %.1e  (%d samples)\n",
                        fns[f].first.c_str(), med, flops / med / 1e6, rows[f].err[si], samples);
            std::fflush(stdout);
        }
        CHECK(cudaFree(A));
        CHECK(cudaFree(B));
        CHECK(cudaFree(C));
        CHECK(cudaFree(C0));
        CHECK(cudaFree(Cref));
    }

    std::printf(
        "\nSummary (%s; median us, TFLOP/s, %% of FP32 peak %.1f, x cublasSgemm; "
        "'WRONG' where rel err > 1e-4, TF32 excepted):\n",
        prop.name, peak_tflops);
    std::printf("%-46s | %-36s | %-36s\n", "kernel", shapes[0].name, shapes[1].name);
    for (size_t f = 0; f < fns.size(); ++f) {
        std::printf("%-46s", rows[f].name.c_str());
        for (int si = 0; si < 2; ++si) {
            const double flops = 2.0 * shapes[si].m * shapes[si].n * shapes[si].k;
            const double tf = flops / rows[f].us[si] / 1e6;
            const bool tf32 = f == cublas_index + 1;
            std::printf(" | %9.1f %6.2f %5.1f%% %5.3fx%s", rows[f].us[si], tf,
                        100.0 * tf / peak_tflops, rows[cublas_index].us[si] / rows[f].us[si],
                        !tf32 && rows[f].err[si] > 1e-4 ? " WRONG" : "      ");
        }
        std::printf("\n");
    }
    return 0;
}
