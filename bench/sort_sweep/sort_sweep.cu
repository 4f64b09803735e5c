// Lesson 13 step 4's tuning bench (a GPU machine, sm_90): variants of the onesweep solution
// (built by variants.py from it, one shared object each) timed against
// cub::DeviceRadixSort::SortKeys (all 32 bits) at 2^28 keys, uniform and drawn from 16 values,
// as the checker times them (bench/sweep/sweep.cuh). Every variant's output is compared with
// CUB's first.
// Shares no code with the checker.
//
//   bench/sweep/run.sh sort_sweep 13_sort   (builds the variants and this bench, runs it)
//   sort_sweep NAME=VARIANT.so ...
#include <dlfcn.h>
#include <cub/device/device_radix_sort.cuh>

#include "../sweep/sweep.cuh"

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
__global__ void count_differences(const unsigned* a, const unsigned* b, size_t n,
                                  unsigned long long* differ) {
    unsigned long long mine = 0;
    for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
         i += size_t{gridDim.x} * blockDim.x)
        mine += a[i] != b[i];
    if (mine) atomicAdd(differ, mine);
}

int main(int argc, char** argv) {
    const size_t n = size_t{1} << 28;
    const char* labels[2] = {"uniform", "16 values"};
    std::vector<sweep::Side> sides =
        sweep::load_sides("cub::DeviceRadixSort::SortKeys", argc, argv, "radix_sort_keys");
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("%s, %d SMs\n", prop.name, prop.multiProcessorCount);
    unsigned *in[2], *out, *alt, *ref;
    void* ws;
    const size_t ws_bytes = (n + 1023) / 1024 * 256 * sizeof(unsigned) + (size_t{1} << 16);
    for (int d = 0; d < 2; ++d) CHECK(cudaMalloc(&in[d], n * 4));
    CHECK(cudaMalloc(&out, n * 4));
    CHECK(cudaMalloc(&alt, n * 4));
    CHECK(cudaMalloc(&ref, n * 4));
    CHECK(cudaMalloc(&ws, ws_bytes));
    fill_keys<<<1024, 256>>>(in[0], n, 12345, 0);
    fill_keys<<<1024, 256>>>(in[1], n, 777, 16);
    CHECK(cudaGetLastError());
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    size_t cub_bytes = 0;
    CHECK(cub::DeviceRadixSort::SortKeys(nullptr, cub_bytes, in[0], out, n, 0, 32, s));
    void* cub_tmp;
    CHECK(cudaMalloc(&cub_tmp, cub_bytes));
    auto call = [&](const sweep::Side& side, int d, unsigned* o) {
        if (side.fn)
            CHECK(reinterpret_cast<SortFn>(side.fn)(in[d], o, n, alt, ws, ws_bytes, s));
        else {
            size_t b = cub_bytes;
            CHECK(cub::DeviceRadixSort::SortKeys(cub_tmp, b, in[d], o, n, 0, 32, s));
        }
    };
    unsigned long long* differ;
    CHECK(cudaMalloc(&differ, sizeof(unsigned long long)));
    for (int d = 0; d < 2; ++d) {
        call(sides[0], d, ref);
        CHECK(cudaStreamSynchronize(s));
        for (size_t v = 1; v < sides.size(); ++v) {
            if (!sides[v].ok) continue;
            CHECK(cudaMemsetAsync(out, 0xab, n * 4, s));
            call(sides[v], d, out);
            CHECK(cudaStreamSynchronize(s));
            CHECK(cudaMemsetAsync(differ, 0, sizeof(unsigned long long), s));
            count_differences<<<1024, 256, 0, s>>>(out, ref, n, differ);
            CHECK(cudaStreamSynchronize(s));  // s does not wait for the legacy stream's copies
            unsigned long long wrong = 0;
            CHECK(cudaMemcpy(&wrong, differ, sizeof wrong, cudaMemcpyDeviceToHost));
            if (wrong != 0) {
                std::printf("WRONG %s on %s keys: %llu keys differ from CUB's\n",
                            sides[v].name.c_str(), labels[d], wrong);
                sides[v].ok = false;
            }
        }
    }
    sweep::time_in_turns(sides, sweep::rounds(11), s,
                         [&](const sweep::Side& side, int d) { call(side, d, out); });
    sweep::report(sides, labels);
    return 0;
}
