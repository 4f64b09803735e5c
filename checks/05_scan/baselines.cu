// Library baseline of lesson 05, timed beside steps 4-7 (GPU only): cub::DeviceScan::InclusiveSum,
// its temporary storage from the kit (the step's workspace is left alone).
#include <cub/device/device_scan.cuh>

#include "kit.h"
#include "scan.cuh"

namespace {

// int items: the 32-bit offsets of the usual call (the header promises n < 2^31), as lesson 04's
// cub::DeviceReduce::Sum.
cudaError_t cub_inclusive_sum(const float* in, float* out, size_t n, void*, size_t,
                              cudaStream_t stream) {
    size_t bytes = 0;
    const cudaError_t e =
        cub::DeviceScan::InclusiveSum(nullptr, bytes, in, out, static_cast<int>(n), stream);
    if (e != cudaSuccess) return e;
    return cub::DeviceScan::InclusiveSum(kit::library_scratch(bytes), bytes, in, out,
                                         static_cast<int>(n), stream);
}

}  // namespace

CUDALINGS_BASELINE("inclusive_scan", "cub", cub_inclusive_sum);
