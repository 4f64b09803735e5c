// Lesson 01 — vector add: the signature every step of this lesson implements.
//
// The checker calls your function with device pointers it allocated itself
// (cudaMalloc, so each pointer is at least 256-byte aligned), with n >= 1, and
// with a stream: put all GPU work on that stream. Return the launch status
// (cudaGetLastError() right after the launch) so launch errors are reported.
#pragma once

#include <cstddef>
#include <cuda_runtime.h>

// c[i] = a[i] + b[i] for every i in [0, n).
extern "C" cudaError_t vector_add(const float* a, const float* b, float* c, size_t n,
                                  cudaStream_t stream);
