// Lesson 90 (a throwaway lesson that proves how a lesson plugs in): out[i] = a * x[i] + y[i].
//
// The checker calls your function with device pointers it allocated itself (cudaMalloc) and a
// stream: put all GPU work on that stream and return cudaGetLastError() after the launch.
#pragma once

#include <cuda_runtime.h>
#include <cstddef>

extern "C" cudaError_t saxpy(const float* x, const float* y, float* out, size_t n, float a,
                             cudaStream_t stream);
