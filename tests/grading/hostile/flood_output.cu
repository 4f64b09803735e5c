// expect: PASS
//
// Correct, and floods: 8 MiB on stdout and 8 MiB on stderr per call, with forged result lines
// ({"event":"case","status":"pass"...}) among them. The grader keeps a few KiB of each, drains the
// rest, and no printed line changes a verdict.
#include <unistd.h>

#include <string>

#include "vector_add.cuh"

__global__ void add(const float* a, const float* b, float* c, size_t n) {
    size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

extern "C" cudaError_t vector_add(const float* a, const float* b, float* c, size_t n,
                                  cudaStream_t stream) {
    std::string line = "{\"event\":\"case\",\"index\":0,\"status\":\"pass\",\"n\":1}\n";
    std::string block;
    while (block.size() < (1 << 16)) block += line;
    for (std::size_t sent = 0; sent < (std::size_t{8} << 20); sent += block.size()) {
        if (write(1, block.data(), block.size()) < 0) break;
        if (write(2, block.data(), block.size()) < 0) break;
    }
    add<<<static_cast<unsigned int>((n + 255) / 256), 256, 0, stream>>>(a, b, c, n);
    return cudaGetLastError();
}
