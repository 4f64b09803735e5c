// Lesson 07 step 4's tuning bench (a GPU machine, sm_90): variants of the single-pass
// compaction (built by variants.py from the solution, one shared object each) timed against
// cub::DeviceSelect::If at 2^28 uniform floats in [-1, 1), p = 0.5 (threshold 0) and p = 0.1
// (threshold 0.8), as the checker times them (bench/sweep/sweep.cuh).
// The variants and CUB are sampled in turns, round by round, so a drift of the clocks touches
// them all alike. Every variant's count and kept elements are compared with CUB's first.
// Shares no code with the checker.
//
//   bench/sweep/run.sh compact_sweep 07_compact   (builds the variants and this bench, runs it)
//   compact_sweep NAME=VARIANT.so ...
#include <dlfcn.h>
#include <cub/device/device_select.cuh>

#include <cstring>

#include "../sweep/sweep.cuh"

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

int main(int argc, char** argv) {
    const size_t n = size_t{1} << 28;
    const float thresholds[2] = {0.0f, 0.8f};
    const char* labels[2] = {"p = 0.5", "p = 0.1"};
    std::vector<sweep::Side> sides =
        sweep::load_sides("cub::DeviceSelect::If", argc, argv, "compact");
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("%s, %d SMs, L2 %d MiB\n", prop.name, prop.multiProcessorCount,
                prop.l2CacheSize >> 20);
    float *in, *out, *ref_out;
    unsigned int *count, *ref_count;
    void* ws;
    const size_t ws_bytes = n * sizeof(unsigned) + n / 16 + (size_t{1} << 20);
    CHECK(cudaMalloc(&in, n * 4));
    CHECK(cudaMalloc(&out, n * 4));
    CHECK(cudaMalloc(&ref_out, n * 4));
    CHECK(cudaMalloc(&count, 4));
    CHECK(cudaMalloc(&ref_count, 4));
    CHECK(cudaMalloc(&ws, ws_bytes));
    fill_uniform<<<1024, 256>>>(in, n, 12345);
    CHECK(cudaGetLastError());
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    size_t cub_bytes = 0;
    CHECK(cub::DeviceSelect::If(nullptr, cub_bytes, in, out, count, n, Above{0.0f}, s));
    void* cub_tmp;
    CHECK(cudaMalloc(&cub_tmp, cub_bytes));
    auto call = [&](const sweep::Side& side, float t, float* o, unsigned* c) {
        if (side.fn) {
            CHECK(reinterpret_cast<CompactFn>(side.fn)(in, o, c, n, t, ws, ws_bytes, s));
        } else {
            size_t b = cub_bytes;
            CHECK(cub::DeviceSelect::If(cub_tmp, b, in, o, c, n, Above{t}, s));
        }
    };
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
                sides[v].ok = false;
            }
        }
    }
    sweep::time_in_turns(sides, sweep::rounds(15), s, [&](const sweep::Side& side, int p) {
        call(side, thresholds[p], out, count);
    });
    sweep::report(sides, labels);
    return 0;
}
