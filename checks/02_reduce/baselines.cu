// Library baselines of lesson 02, timed beside its steps (GPU only).
#include "kit.h"
#include "libraries.cuh"
#include "reduce.cuh"

namespace {
cudaError_t cub_sum(const float* in, size_t n, float* out, void*, size_t, cudaStream_t stream) {
    return kit::cub_device_sum(in, n, out, stream);
}
}  // namespace

CUDALINGS_BASELINE("reduce_sum", "cub", cub_sum);
