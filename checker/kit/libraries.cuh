// The lesson kit, for baselines only (GPU builds: it includes CUB): library calls that more than
// one lesson times beside its steps.
#pragma once

#include <cub/device/device_reduce.cuh>

#include "problem.h"

namespace kit {

// cub::DeviceReduce::Sum of n floats into *out (int items: the 32-bit offsets of the usual call,
// n <= 2^28 here), its temporary storage from library_scratch.
inline cudaError_t cub_device_sum(const float* in, size_t n, float* out, cudaStream_t stream) {
    size_t bytes = 0;
    const cudaError_t e =
        cub::DeviceReduce::Sum(nullptr, bytes, in, out, static_cast<int>(n), stream);
    if (e != cudaSuccess) return e;
    return cub::DeviceReduce::Sum(library_scratch(bytes), bytes, in, out, static_cast<int>(n),
                                  stream);
}

}  // namespace kit
