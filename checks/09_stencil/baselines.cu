// Baseline of lesson 09, timed beside its steps (GPU only). No library computes this stencil, so
// the row to measure against is the speed of light: a device-to-device cudaMemcpyAsync of in to
// out, which reads the n floats and writes the n floats that any stencil must, and nothing
// more. It has stencil_1d's signature and is checked as the copy it is (problem stencil_copy,
// whose timed cases are the stencil's: same sizes, same columns, same bytes).
#include "kit.h"
#include "stencil.cuh"

namespace {

cudaError_t copy_in_to_out(const float* in, float* out, size_t n, const float*, int, int, int,
                           void*, size_t, cudaStream_t stream) {
    return cudaMemcpyAsync(out, in, n * sizeof(float), cudaMemcpyDeviceToDevice, stream);
}

}  // namespace

CUDALINGS_BASELINE("stencil_copy", "memcpy", copy_in_to_out);
