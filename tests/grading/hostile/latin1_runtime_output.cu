// expect: CRASH
// reason: SIGABRT
//
// Correct code that, on its first call, writes bytes that are not UTF-8 to stderr (a Latin-1
// "caf\xe9", a byte 0xFF, a sequence cut short) and aborts. What it wrote is quoted in its result;
// before the fix a byte like these killed the grading worker in nlohmann's strict dump. Now
// every captured text is valid UTF-8 (U+FFFD for each bad byte): CRASH, with a result.
#include <cstdlib>
#include <unistd.h>

#include "vector_add.cuh"

__global__ void add(const float* a, const float* b, float* c, size_t n) {
    size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

extern "C" cudaError_t vector_add(const float* a, const float* b, float* c, size_t n,
                                  cudaStream_t stream) {
    const char said[] = "le caf\xe9 est froid \xff\xfe, \xe2\x82 et puis\n";
    (void)!::write(2, said, sizeof said - 1);
    std::abort();
    add<<<static_cast<unsigned int>((n + 255) / 256), 256, 0, stream>>>(a, b, c, n);
    return cudaGetLastError();
}
