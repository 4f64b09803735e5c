// What the variant sweeps of the lessons' capstones share (bench/compact_sweep,
// bench/sort_sweep; bench/gemm_sweep its macro and flush): the variants as shared objects named on
// the command line, a library as the first side, and timing in turns as the checker times a call:
// the L2 flushed before every sample (a read+write pass, then a read-only pass, over 2 x 256 MiB),
// CUDA events around one call, the median of each side's samples. Shares no code with the checker.
#pragma once

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#define CHECK(call)                                                           \
    do {                                                                      \
        cudaError_t e_ = (call);                                              \
        if (e_ != cudaSuccess) {                                              \
            std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, \
                         cudaGetErrorString(e_));                             \
            std::exit(1);                                                     \
        }                                                                     \
    } while (0)

namespace sweep {

__global__ void flush_kernel(float4* b, size_t n) {
    for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
         i += size_t{gridDim.x} * blockDim.x) {
        float4 v = b[i];
        v.x += 1.0f;
        b[i] = v;
    }
}
__global__ void clean_kernel(const float4* b, size_t n, float* sink) {
    float acc = 0.0f;
    for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
         i += size_t{gridDim.x} * blockDim.x)
        acc += b[i].x;
    if (acc == 1.0f) *sink = acc;  // never true (the buffer is zero): keeps the loads alive
}

// A cold L2 before every sample, as the checker makes it: a read+write pass, then a read-only
// pass, each over 256 MiB.
struct L2Flush {
    size_t n = (size_t{256} << 20) / sizeof(float4);
    float4 *dirty = nullptr, *clean = nullptr;
    float* sink = nullptr;
    L2Flush() {
        CHECK(cudaMalloc(&dirty, n * sizeof(float4)));
        CHECK(cudaMalloc(&clean, n * sizeof(float4)));
        CHECK(cudaMalloc(&sink, sizeof(float)));
        CHECK(cudaMemset(dirty, 0, n * sizeof(float4)));
        CHECK(cudaMemset(clean, 0, n * sizeof(float4)));
    }
    ~L2Flush() {
        cudaFree(dirty);
        cudaFree(clean);
        cudaFree(sink);
    }
    L2Flush(const L2Flush&) = delete;
    L2Flush& operator=(const L2Flush&) = delete;
    // Queued on `s` (not waited for).
    void run(cudaStream_t s) const {
        flush_kernel<<<1024, 256, 0, s>>>(dirty, n);
        clean_kernel<<<1024, 256, 0, s>>>(clean, n, sink);
        CHECK(cudaGetLastError());
    }
};

// A library or a variant, and its samples in each of the two columns (inputs) of the sweep.
struct Side {
    std::string name;
    void* fn = nullptr;  // the variant's entry point; nullptr for the library
    bool ok = true;      // its output matched the library's
    std::vector<float> samples[2];
};

// The library first, then one side per NAME=VARIANT.so argument, `symbol` looked up in it.
inline std::vector<Side> load_sides(const char* library, int argc, char** argv,
                                    const char* symbol) {
    std::vector<Side> sides(1);
    sides[0].name = library;
    for (int a = 1; a < argc; ++a) {
        const std::string arg = argv[a];
        const size_t eq = arg.find('=');
        Side s;
        s.name = arg.substr(0, eq);
        void* h = dlopen(arg.substr(eq + 1).c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            std::fprintf(stderr, "%s\n", dlerror());
            std::exit(1);
        }
        s.fn = dlsym(h, symbol);
        if (!s.fn) {
            std::fprintf(stderr, "%s: no %s\n", arg.c_str(), symbol);
            std::exit(1);
        }
        sides.push_back(s);
    }
    return sides;
}

// Samples per side and column: ROUNDS, else `fallback`.
inline int rounds(int fallback) {
    const char* r = std::getenv("ROUNDS");
    return r ? std::atoi(r) : fallback;
}

// `rounds` rounds; in each, for each column, every side whose output was right: the L2
// flushed, then events around call(side, column). Sides take turns, so a drift of the clocks
// touches them all alike.
inline void time_in_turns(std::vector<Side>& sides, int rounds, cudaStream_t s,
                          const std::function<void(const Side&, int)>& call) {
    const L2Flush flush;
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    for (int r = 0; r < rounds; ++r)
        for (int column = 0; column < 2; ++column)
            for (Side& side : sides) {
                if (!side.ok) continue;
                flush.run(s);
                CHECK(cudaStreamSynchronize(s));
                CHECK(cudaEventRecord(e0, s));
                call(side, column);
                CHECK(cudaEventRecord(e1, s));
                CHECK(cudaEventSynchronize(e1));
                float ms = 0;
                CHECK(cudaEventElapsedTime(&ms, e0, e1));
                side.samples[column].push_back(ms * 1000.0f);
            }
    CHECK(cudaEventDestroy(e0));
    CHECK(cudaEventDestroy(e1));
}

inline float median(std::vector<float> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0f : v[v.size() / 2];
}

// Each side's medians and its speed as a multiple of the library's (side 0) in both columns,
// then "BEST name x": the variant whose lower multiple is highest.
inline void report(const std::vector<Side>& sides, const char* const labels[2]) {
    const float library[2] = {median(sides[0].samples[0]), median(sides[0].samples[1])};
    std::printf("variant, then the median in us and the multiple of %s's speed: %s, %s\n",
                sides[0].name.c_str(), labels[0], labels[1]);
    std::string best;
    float best_score = 0;
    for (size_t v = 0; v < sides.size(); ++v) {
        if (!sides[v].ok) continue;
        const float a = median(sides[v].samples[0]), b = median(sides[v].samples[1]);
        const float xa = library[0] / a, xb = library[1] / b, worst = std::min(xa, xb);
        std::printf("%-32s %12.1f %12.1f %8.3f %8.3f %8.3f\n", sides[v].name.c_str(), a, b, xa, xb,
                    worst);
        if (v > 0 && worst > best_score) best_score = worst, best = sides[v].name;
    }
    std::printf("BEST %s %.3f\n", best.c_str(), best_score);
}

}  // namespace sweep
