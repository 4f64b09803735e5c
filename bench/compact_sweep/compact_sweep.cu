// Lesson 07 step 4's tuning bench (a GPU machine, sm_90): variants of the single-pass
// compaction (built by variants.py from the solution, one shared object each) timed against
// cub::DeviceSelect::If at 2^28 uniform floats in [-1, 1), p = 0.5 (threshold 0) and p = 0.1
// (threshold 0.8), as the checker times them: the L2 flushed before every sample (a read+write
// pass, then a read-only pass, over 2 x 256 MiB), CUDA events around one call, the median.
// The variants and CUB are sampled in turns, round by round, so a drift of the clocks touches
// them all alike. Every variant's count and kept elements are compared with CUB's first.
// Shares no code with the checker.
//
//   bench/compact_sweep/run.sh        (builds the variants and this bench, then runs it)
//   compact_sweep NAME=VARIANT.so ...
#include <dlfcn.h>
#include <cub/device/device_select.cuh>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

using CompactFn = cudaError_t (*)(const float*, float*, unsigned int*, size_t, float, void*, size_t,
                                  cudaStream_t);

struct Above {
    float threshold;
    __host__ __device__ bool operator()(float x) const { return x > threshold; }
};

__global__ void fill_uniform(float* p, size_t n, unsigned long long seed) {
    for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
         i += size_t{gridDim.x} * blockDim.x) {
        unsigned long long z = seed + i * 0x9E3779B97F4A7C15ull;  // splitmix64
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        p[i] = static_cast<float>(z >> 40) * (2.0f / 16777216.0f) - 1.0f;  // [-1, 1)
    }
}
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
    if (acc == 1.0f) *sink = acc;
}

struct Side {
    std::string name;
    CompactFn fn = nullptr;  // nullptr: CUB
    std::vector<float> samples[2];
};

int main(int argc, char** argv) {
    const size_t n = size_t{1} << 28;
    const float thresholds[2] = {0.0f, 0.8f};
    const char* labels[2] = {"p = 0.5", "p = 0.1"};
    const int rounds = std::getenv("ROUNDS") ? std::atoi(std::getenv("ROUNDS")) : 15;
    std::vector<Side> sides(1);
    sides[0].name = "cub::DeviceSelect::If";
    for (int a = 1; a < argc; ++a) {
        std::string arg = argv[a];
        const size_t eq = arg.find('=');
        Side s;
        s.name = arg.substr(0, eq);
        void* h = dlopen(arg.substr(eq + 1).c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            std::fprintf(stderr, "%s\n", dlerror());
            return 1;
        }
        s.fn = reinterpret_cast<CompactFn>(dlsym(h, "compact"));
        if (!s.fn) {
            std::fprintf(stderr, "%s: no compact\n", arg.c_str());
            return 1;
        }
        sides.push_back(s);
    }
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("%s, %d SMs, L2 %d MiB\n", prop.name, prop.multiProcessorCount,
                prop.l2CacheSize >> 20);
    float *in, *out, *ref_out, *sink;
    unsigned int *count, *ref_count;
    void* ws;
    const size_t ws_bytes = n * sizeof(unsigned) + n / 16 + (size_t{1} << 20);
    const size_t fl = (size_t{256} << 20) / sizeof(float4);
    float4 *fbuf, *cbuf;
    CHECK(cudaMalloc(&in, n * 4));
    CHECK(cudaMalloc(&out, n * 4));
    CHECK(cudaMalloc(&ref_out, n * 4));
    CHECK(cudaMalloc(&count, 4));
    CHECK(cudaMalloc(&ref_count, 4));
    CHECK(cudaMalloc(&ws, ws_bytes));
    CHECK(cudaMalloc(&fbuf, fl * sizeof(float4)));
    CHECK(cudaMalloc(&cbuf, fl * sizeof(float4)));
    CHECK(cudaMalloc(&sink, 4));
    CHECK(cudaMemset(fbuf, 0, fl * sizeof(float4)));
    CHECK(cudaMemset(cbuf, 0, fl * sizeof(float4)));
    fill_uniform<<<1024, 256>>>(in, n, 12345);
    CHECK(cudaGetLastError());
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    size_t cub_bytes = 0;
    CHECK(cub::DeviceSelect::If(nullptr, cub_bytes, in, out, count, n, Above{0.0f}, s));
    void* cub_tmp;
    CHECK(cudaMalloc(&cub_tmp, cub_bytes));
    auto call = [&](const Side& side, float t, float* o, unsigned* c) {
        if (side.fn)
            CHECK(side.fn(in, o, c, n, t, ws, ws_bytes, s));
        else {
            size_t b = cub_bytes;
            CHECK(cub::DeviceSelect::If(cub_tmp, b, in, o, c, n, Above{t}, s));
        }
    };
    std::vector<bool> ok(sides.size(), true);
    for (int p = 0; p < 2; ++p) {  // correctness against CUB
        call(sides[0], thresholds[p], ref_out, ref_count);
        CHECK(cudaStreamSynchronize(s));
        unsigned rc = 0;
        CHECK(cudaMemcpy(&rc, ref_count, 4, cudaMemcpyDeviceToHost));
        std::vector<float> want(rc), got(rc);
        CHECK(cudaMemcpy(want.data(), ref_out, rc * 4ull, cudaMemcpyDeviceToHost));
        for (size_t v = 1; v < sides.size(); ++v) {
            call(sides[v], thresholds[p], out, count);
            CHECK(cudaStreamSynchronize(s));
            unsigned c = 0;
            CHECK(cudaMemcpy(&c, count, 4, cudaMemcpyDeviceToHost));
            if (c == rc) CHECK(cudaMemcpy(got.data(), out, rc * 4ull, cudaMemcpyDeviceToHost));
            if (c != rc || std::memcmp(got.data(), want.data(), rc * 4ull) != 0) {
                std::printf("WRONG %s at %s (count %u, want %u)\n", sides[v].name.c_str(),
                            labels[p], c, rc);
                ok[v] = false;
            }
        }
    }
    for (int r = 0; r < rounds; ++r)
        for (int p = 0; p < 2; ++p)
            for (size_t v = 0; v < sides.size(); ++v) {
                if (!ok[v]) continue;
                flush_kernel<<<1024, 256, 0, s>>>(fbuf, fl);
                clean_kernel<<<1024, 256, 0, s>>>(cbuf, fl, sink);
                CHECK(cudaStreamSynchronize(s));
                CHECK(cudaEventRecord(e0, s));
                call(sides[v], thresholds[p], out, count);
                CHECK(cudaEventRecord(e1, s));
                CHECK(cudaEventSynchronize(e1));
                float ms = 0;
                CHECK(cudaEventElapsedTime(&ms, e0, e1));
                sides[v].samples[p].push_back(ms * 1000.0f);
            }
    auto median = [](std::vector<float> v) {
        std::sort(v.begin(), v.end());
        return v.empty() ? 0.0f : v[v.size() / 2];
    };
    const float cub[2] = {median(sides[0].samples[0]), median(sides[0].samples[1])};
    std::printf("%-28s %12s %12s %8s %8s %8s\n", "variant", "p=0.5 us", "p=0.1 us", "x0.5", "x0.1",
                "min x");
    std::string best;
    float best_score = 0;
    for (size_t v = 0; v < sides.size(); ++v) {
        if (!ok[v]) continue;
        const float a = median(sides[v].samples[0]), b = median(sides[v].samples[1]);
        const float xa = cub[0] / a, xb = cub[1] / b, worst = std::min(xa, xb);
        std::printf("%-28s %12.1f %12.1f %8.3f %8.3f %8.3f\n", sides[v].name.c_str(), a, b, xa, xb,
                    worst);
        if (v > 0 && worst > best_score) best_score = worst, best = sides[v].name;
    }
    std::printf("BEST %s %.3f\n", best.c_str(), best_score);
    return 0;
}
