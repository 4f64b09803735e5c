// What an out-of-bounds report calls the memory it missed (test_naming.cpp): an index read from
// memory nobody wrote (the checker's poison) sends an access gigabytes away from every
// allocation, which is a wild address, not an overrun of whichever array lies below it; a small
// overrun names the array, by the learner's name for it or the checker's, never by the line in
// the checker's kit that allocated it; an access in an inlined helper names the line that called
// it. Each `naming_*` entry point returns 0 when the launch faulted as a GPU's would.
#include <cuda_runtime.h>

#include <cstdint>

#include "cudalings_emu/abi.h"

namespace {
constexpr std::uint32_t kPoison = 0x7fdeadbfu;  // the checker's (checker/kit/data.h)
bool faulted() { return cudaDeviceSynchronize() == cudaErrorIllegalAddress; }
}  // namespace

// As a learner writes them: kernels and a helper at namespace scope.
__global__ void read_status_at_counter(const unsigned long long* status, const unsigned* counter,
                                       unsigned long long* out) {
    const unsigned tile = *counter;  // never cleared: the poison
    out[0] = status[tile];
}

__device__ __forceinline__ unsigned load_word(const unsigned* p) {
    return *reinterpret_cast<const volatile unsigned*>(p);  // the helper's line
}

__global__ void read_past_end(const unsigned* words, unsigned n, unsigned* out) {
    out[0] = load_word(&words[n + 1]);  // naming: call site
}

__global__ void read_far_away(const float* x, float* out) {
    out[0] = x[std::size_t{1} << 42];  // 16 TiB past x: outside device memory altogether
}

// A counter the launcher never cleared holds the poison; the kernel indexes the status words
// with it, 16 GiB past them.
extern "C" int naming_poisoned_index() {
    unsigned char* workspace = nullptr;
    unsigned long long* out = nullptr;
    if (cudaMalloc(&workspace, 4096) != cudaSuccess || cudaMalloc(&out, 8) != cudaSuccess) return 1;
    cudalings_emu::cudalings_emu_set_poison(kPoison);
    const std::uint32_t poison[64] = {kPoison};
    if (cudaMemcpy(workspace, poison, sizeof poison, cudaMemcpyHostToDevice) != cudaSuccess)
        return 2;
    read_status_at_counter<<<1, 1>>>(reinterpret_cast<unsigned long long*>(workspace + 256),
                                     reinterpret_cast<unsigned*>(workspace), out);
    const bool ok = faulted();
    cudalings_emu::cudalings_emu_set_poison(0);
    cudaFree(workspace);
    cudaFree(out);
    return ok ? 0 : 3;
}

// The learner's own array, read one element past its end through a helper.
extern "C" int naming_learner_overrun() {
    unsigned *words = nullptr, *out = nullptr;
    if (cudaMalloc(&words, 64 * sizeof(unsigned)) != cudaSuccess ||
        cudaMalloc(&out, sizeof(unsigned)) != cudaSuccess)
        return 1;
    read_past_end<<<1, 1>>>(words, 64, out);
    const bool ok = faulted();
    cudaFree(words);
    cudaFree(out);
    return ok ? 0 : 3;
}

// Memory the checker's kit allocated for itself (dev::allocate marks it so): named by the
// buffer's name when the checker gave it one (`name`), else as the checker's own.
extern "C" int naming_checker_overrun(const char* name) {
    unsigned *words = nullptr, *out = nullptr;
    if (cudaMalloc(&words, 64 * sizeof(unsigned)) != cudaSuccess ||
        cudaMalloc(&out, sizeof(unsigned)) != cudaSuccess)
        return 1;
    cudalings_emu::cudalings_emu_checker_memory(words);
    if (name && *name) cudalings_emu::cudalings_emu_name_array(words, name, sizeof(unsigned));
    read_past_end<<<1, 1>>>(words, 64, out);
    const bool ok = faulted();
    cudaFree(words);
    cudaFree(out);
    return ok ? 0 : 3;
}

// An address outside device memory computed from a device pointer: no host pointer was passed.
extern "C" int naming_far_outside() {
    float *x = nullptr, *out = nullptr;
    if (cudaMalloc(&x, 1024) != cudaSuccess || cudaMalloc(&out, 4) != cudaSuccess) return 1;
    read_far_away<<<1, 1>>>(x, out);
    const bool ok = faulted();
    cudaFree(x);
    cudaFree(out);
    return ok ? 0 : 3;
}
