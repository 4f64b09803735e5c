// Lesson 13 step 4's tuning bench (a GPU machine, sm_90): variants of the onesweep solution
// (built by variants.py from it, one shared object each) timed against
// cub::DeviceRadixSort::SortKeys (all 32 bits) at 2^28 keys, uniform and drawn from 16 values,
// as the checker times them: the L2 flushed before every sample (a read+write pass, then a
// read-only pass, over 2 x 256 MiB), CUDA events around one call, the median. The variants and
// CUB are sampled in turns, round by round. Every variant's output is compared with CUB's first.
// Shares no code with the checker.
//
//   bench/sort_sweep/run.sh        (builds the variants and this bench, then runs it)
//   sort_sweep NAME=VARIANT.so ...
#include <dlfcn.h>
#include <cub/device/device_radix_sort.cuh>

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

using SortFn = cudaError_t (*)(const unsigned*, unsigned*, size_t, unsigned*, void*, size_t,
                               cudaStream_t);

__device__ unsigned long long mix(unsigned long long z) {  // splitmix64
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
__global__ void fill_keys(unsigned* p, size_t n, unsigned long long seed, unsigned distinct) {
    for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
         i += size_t{gridDim.x} * blockDim.x) {
        const unsigned long long r = mix(seed + i * 0x9E3779B97F4A7C15ull);
        p[i] = distinct ? static_cast<unsigned>(mix(seed ^ (r % distinct)))
                        : static_cast<unsigned>(r >> 32);
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

__global__ void count_differences(const unsigned* a, const unsigned* b, size_t n,
                                  unsigned long long* differ) {
    unsigned long long mine = 0;
    for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
         i += size_t{gridDim.x} * blockDim.x)
        mine += a[i] != b[i];
    if (mine) atomicAdd(differ, mine);
}

struct Side {
    std::string name;
    SortFn fn = nullptr;  // nullptr: CUB
    std::vector<float> samples[2];
};

int main(int argc, char** argv) {
    const size_t n = size_t{1} << 28;
    const char* labels[2] = {"uniform", "16 values"};
    const int rounds = std::getenv("ROUNDS") ? std::atoi(std::getenv("ROUNDS")) : 11;
    std::vector<Side> sides(1);
    sides[0].name = "cub::DeviceRadixSort::SortKeys";
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
        s.fn = reinterpret_cast<SortFn>(dlsym(h, "radix_sort_keys"));
        if (!s.fn) {
            std::fprintf(stderr, "%s: no radix_sort_keys\n", arg.c_str());
            return 1;
        }
        sides.push_back(s);
    }
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("%s, %d SMs\n", prop.name, prop.multiProcessorCount);
    unsigned *in[2], *out, *alt, *ref;
    float* sink;
    void* ws;
    const size_t ws_bytes = (n + 1023) / 1024 * 256 * sizeof(unsigned) + (size_t{1} << 16);
    const size_t fl = (size_t{256} << 20) / sizeof(float4);
    float4 *fbuf, *cbuf;
    for (int d = 0; d < 2; ++d) CHECK(cudaMalloc(&in[d], n * 4));
    CHECK(cudaMalloc(&out, n * 4));
    CHECK(cudaMalloc(&alt, n * 4));
    CHECK(cudaMalloc(&ref, n * 4));
    CHECK(cudaMalloc(&ws, ws_bytes));
    CHECK(cudaMalloc(&fbuf, fl * sizeof(float4)));
    CHECK(cudaMalloc(&cbuf, fl * sizeof(float4)));
    CHECK(cudaMalloc(&sink, 4));
    CHECK(cudaMemset(fbuf, 0, fl * sizeof(float4)));
    CHECK(cudaMemset(cbuf, 0, fl * sizeof(float4)));
    fill_keys<<<1024, 256>>>(in[0], n, 12345, 0);
    fill_keys<<<1024, 256>>>(in[1], n, 777, 16);
    CHECK(cudaGetLastError());
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    size_t cub_bytes = 0;
    CHECK(cub::DeviceRadixSort::SortKeys(nullptr, cub_bytes, in[0], out, n, 0, 32, s));
    void* cub_tmp;
    CHECK(cudaMalloc(&cub_tmp, cub_bytes));
    auto call = [&](const Side& side, int d, unsigned* o) {
        if (side.fn)
            CHECK(side.fn(in[d], o, n, alt, ws, ws_bytes, s));
        else {
            size_t b = cub_bytes;
            CHECK(cub::DeviceRadixSort::SortKeys(cub_tmp, b, in[d], o, n, 0, 32, s));
        }
    };
    std::vector<bool> ok(sides.size(), true);
    unsigned long long* differ;
    CHECK(cudaMalloc(&differ, sizeof(unsigned long long)));
    for (int d = 0; d < 2; ++d) {
        call(sides[0], d, ref);
        CHECK(cudaStreamSynchronize(s));
        for (size_t v = 1; v < sides.size(); ++v) {
            if (!ok[v]) continue;
            CHECK(cudaMemset(out, 0xab, n * 4));
            call(sides[v], d, out);
            CHECK(cudaStreamSynchronize(s));
            CHECK(cudaMemset(differ, 0, sizeof(unsigned long long)));
            count_differences<<<1024, 256, 0, s>>>(out, ref, n, differ);
            unsigned long long wrong = 0;
            CHECK(cudaMemcpy(&wrong, differ, sizeof wrong, cudaMemcpyDeviceToHost));
            if (wrong != 0) {
                std::printf("WRONG %s on %s keys: %llu keys differ from CUB's\n",
                            sides[v].name.c_str(), labels[d], wrong);
                ok[v] = false;
            }
        }
    }
    for (int r = 0; r < rounds; ++r)
        for (int d = 0; d < 2; ++d)
            for (size_t v = 0; v < sides.size(); ++v) {
                if (!ok[v]) continue;
                flush_kernel<<<1024, 256, 0, s>>>(fbuf, fl);
                clean_kernel<<<1024, 256, 0, s>>>(cbuf, fl, sink);
                CHECK(cudaStreamSynchronize(s));
                CHECK(cudaEventRecord(e0, s));
                call(sides[v], d, out);
                CHECK(cudaEventRecord(e1, s));
                CHECK(cudaEventSynchronize(e1));
                float ms = 0;
                CHECK(cudaEventElapsedTime(&ms, e0, e1));
                sides[v].samples[d].push_back(ms * 1000.0f);
            }
    auto median = [](std::vector<float> v) {
        std::sort(v.begin(), v.end());
        return v.empty() ? 0.0f : v[v.size() / 2];
    };
    const float cub[2] = {median(sides[0].samples[0]), median(sides[0].samples[1])};
    std::printf("%-32s %12s %12s %8s %8s %8s\n", "variant", "uniform us", "16 vals us", "x unif",
                "x 16", "min x");
    std::string best;
    float best_score = 0;
    for (size_t v = 0; v < sides.size(); ++v) {
        if (!ok[v]) continue;
        const float a = median(sides[v].samples[0]), b = median(sides[v].samples[1]);
        const float xa = cub[0] / a, xb = cub[1] / b, worst = std::min(xa, xb);
        std::printf("%-32s %12.1f %12.1f %8.3f %8.3f %8.3f\n", sides[v].name.c_str(), a, b, xa, xb,
                    worst);
        if (v > 0 && worst > best_score) best_score = worst, best = sides[v].name;
    }
    std::printf("BEST %s %.3f\n", best.c_str(), best_score);
    return 0;
}
