// Lesson 12's tuning sweep: the solutions of steps 4 (softmax, a block per row) and 5
// (LayerNorm) built with other values of their compile-time knobs (bench/row_ops/sweep.sh builds
// each variant as a shared object), each timed on the cells where the issue sets a goal, beside a
// device-to-device copy of 1 GiB timed in the same run, as the checker measures the copy rate.
//
//   sweep LABEL=PATH.so ...    LABEL starts with "softmax" or "layernorm": which entry point
//
// Each cell: 2^28 floats as rows of `cols` (uniform in [-1, 1)), the L2 flushed before every
// sample, median of 15 samples after a warm-up. Bytes as the checker counts them: softmax 8 per
// element, LayerNorm 8 per element plus gamma and beta once. The last lines are the table.
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#define CHECK(call)                                                            \
    do {                                                                       \
        cudaError_t e_ = (call);                                               \
        if (e_ != cudaSuccess) {                                               \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, \
                         cudaGetErrorString(e_));                              \
            std::exit(1);                                                      \
        }                                                                      \
    } while (0)

using SoftmaxFn = cudaError_t (*)(const float*, float*, size_t, size_t, cudaStream_t);
using LayerNormFn = cudaError_t (*)(const float*, const float*, const float*, float*, size_t,
                                    size_t, float, cudaStream_t);

constexpr size_t kN = size_t{1} << 28;  // floats per timed problem, as the checker's
constexpr int kSamples = 15;

struct Bench {
    cudaStream_t s;
    cudaEvent_t a, b;
    void* flush;
    size_t flush_bytes;
    template <typename F>
    double median_us(F&& call) {
        for (int i = 0; i < 3; ++i) call();  // warm-up
        CHECK(cudaStreamSynchronize(s));
        std::vector<double> t;
        for (int i = 0; i < kSamples; ++i) {
            CHECK(cudaMemsetAsync(flush, i, flush_bytes, s));  // the L2 holds none of the inputs
            CHECK(cudaEventRecord(a, s));
            call();
            CHECK(cudaEventRecord(b, s));
            CHECK(cudaEventSynchronize(b));
            float ms = 0;
            CHECK(cudaEventElapsedTime(&ms, a, b));
            t.push_back(ms * 1e3);
        }
        std::sort(t.begin(), t.end());
        return t[t.size() / 2];
    }
};

struct Row {
    std::string label;
    std::vector<std::pair<size_t, double>> pct;  // cols, % of copy
};

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s LABEL=PATH.so ...\n", argv[0]);
        return 2;
    }
    cudaDeviceProp p{};
    CHECK(cudaGetDeviceProperties(&p, 0));
    Bench bench{};
    CHECK(cudaStreamCreate(&bench.s));
    CHECK(cudaEventCreate(&bench.a));
    CHECK(cudaEventCreate(&bench.b));
    bench.flush_bytes = 2 * static_cast<size_t>(p.l2CacheSize);
    CHECK(cudaMalloc(&bench.flush, bench.flush_bytes));

    float *x, *y, *gamma, *beta;
    CHECK(cudaMalloc(&x, kN * sizeof(float)));
    CHECK(cudaMalloc(&y, kN * sizeof(float)));
    CHECK(cudaMalloc(&gamma, 32768 * sizeof(float)));
    CHECK(cudaMalloc(&beta, 32768 * sizeof(float)));
    {
        std::vector<float> h(kN);
        std::mt19937 g(12);
        std::uniform_real_distribution<float> u(-1.0f, 1.0f);
        for (auto& v : h) v = u(g);
        CHECK(cudaMemcpy(x, h.data(), kN * sizeof(float), cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(gamma, h.data(), 32768 * sizeof(float), cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(beta, h.data() + 32768, 32768 * sizeof(float), cudaMemcpyHostToDevice));
    }

    const double copy_us = bench.median_us([&] {
        CHECK(cudaMemcpyAsync(y, x, kN * sizeof(float), cudaMemcpyDeviceToDevice, bench.s));
    });
    const double copy_gbps = 2.0 * kN * sizeof(float) / copy_us / 1e3;
    std::printf("%s: copy of 1 GiB %.1f us, %.0f GB/s\n", p.name, copy_us, copy_gbps);

    std::vector<Row> rows;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const size_t eq = arg.find('=');
        const std::string label = arg.substr(0, eq), path = arg.substr(eq + 1);
        void* so = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!so) {
            std::printf("%-28s cannot load %s: %s\n", label.c_str(), path.c_str(), dlerror());
            continue;
        }
        const bool softmax = label.rfind("softmax", 0) == 0;
        Row row{label, {}};
        const std::vector<size_t> widths =
            softmax ? std::vector<size_t>{1024, 32768} : std::vector<size_t>{128, 1024, 32768};
        for (size_t cols : widths) {
            const size_t rows_n = kN / cols;
            double us = 0, bytes = 8.0 * kN;
            if (softmax) {
                auto f = reinterpret_cast<SoftmaxFn>(dlsym(so, "softmax_rows"));
                us = bench.median_us([&] { CHECK(f(x, y, rows_n, cols, bench.s)); });
            } else {
                auto f = reinterpret_cast<LayerNormFn>(dlsym(so, "layernorm_rows"));
                us = bench.median_us(
                    [&] { CHECK(f(x, gamma, beta, y, rows_n, cols, 1e-5f, bench.s)); });
                bytes += 8.0 * cols;
            }
            const double pct = 100.0 * (bytes / copy_gbps / 1e3) / us;
            std::printf("%-28s width %5zu: %8.1f us  %5.1f%% of copy\n", label.c_str(), cols, us,
                        pct);
            std::fflush(stdout);
            row.pct.push_back({cols, pct});
        }
        rows.push_back(row);
    }

    std::printf("\n== row_ops sweep, %s, copy %.0f GB/s: %% of copy (goal >= 90)\n", p.name,
                copy_gbps);
    std::printf("%-28s %12s %12s %12s\n", "variant", "width 128", "width 1024", "width 32768");
    for (const Row& r : rows) {
        std::printf("%-28s", r.label.c_str());
        for (size_t cols : {size_t{128}, size_t{1024}, size_t{32768}}) {
            auto it = std::find_if(r.pct.begin(), r.pct.end(),
                                   [&](const auto& c) { return c.first == cols; });
            if (it == r.pct.end())
                std::printf(" %12s", "-");
            else
                std::printf(" %10.1f%s", it->second, it->second >= 90 ? " ✓" : "  ");
        }
        std::printf("\n");
    }
    return 0;
}
