// Library baselines of lesson 07, timed beside its steps at p = 0.5 and p = 0.1 (GPU only):
//   cub          cub::DeviceSelect::If with the same predicate (x > threshold): stable, so it
//                meets compact_unordered's weaker contract too
//   cub_flagged  step 1's shape with the library doing the scan and the scatter: a flags kernel
//                (one byte per element, in the workspace), then cub::DeviceSelect::Flagged
#include <cub/device/device_select.cuh>

#include <cstdint>

#include "compact.cuh"
#include "kit.h"

namespace {

struct Above {
    float threshold;
    __host__ __device__ bool operator()(float x) const { return x > threshold; }
};

cudaError_t cub_select_if(const float* in, float* out, unsigned int* count, size_t n,
                          float threshold, void*, size_t, cudaStream_t s) {
    const auto items = static_cast<std::int64_t>(n);
    size_t bytes = 0;
    cudaError_t e =
        cub::DeviceSelect::If(nullptr, bytes, in, out, count, items, Above{threshold}, s);
    if (e != cudaSuccess) return e;
    return cub::DeviceSelect::If(kit::library_scratch(bytes), bytes, in, out, count, items,
                                 Above{threshold}, s);
}

__global__ void flags_kernel(const float* __restrict__ in, size_t n, float threshold,
                             unsigned char* __restrict__ flags) {
    for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
         i += size_t{gridDim.x} * blockDim.x)
        flags[i] = in[i] > threshold;
}

cudaError_t cub_select_flagged(const float* in, float* out, unsigned int* count, size_t n,
                               float threshold, void* workspace, size_t workspace_bytes,
                               cudaStream_t s) {
    if (workspace_bytes < n) return cudaErrorInvalidValue;
    auto* flags = static_cast<unsigned char*>(workspace);
    const auto items = static_cast<std::int64_t>(n);
    size_t bytes = 0;
    cudaError_t e = cub::DeviceSelect::Flagged(nullptr, bytes, in, flags, out, count, items, s);
    if (e != cudaSuccess) return e;
    void* temp = kit::library_scratch(bytes);
    unsigned int grid = 0;
    e = one_wave_grid(256, (n + 255) / 256, &grid);
    if (e != cudaSuccess) return e;
    flags_kernel<<<grid, 256, 0, s>>>(in, n, threshold, flags);
    e = cudaGetLastError();
    if (e != cudaSuccess) return e;
    return cub::DeviceSelect::Flagged(temp, bytes, in, flags, out, count, items, s);
}

}  // namespace

CUDALINGS_BASELINE("compact", "cub", cub_select_if);
CUDALINGS_BASELINE("compact", "cub_flagged", cub_select_flagged);
CUDALINGS_BASELINE("compact_unordered", "cub", cub_select_if);
