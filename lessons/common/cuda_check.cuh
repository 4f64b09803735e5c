// cuda_check.cuh — one macro to check every CUDA runtime call.
//
// Almost every CUDA runtime function returns a cudaError_t. Ignoring it is the most common way to
// lose a day: a failed cudaMalloc or a bad launch goes unnoticed and a later, unrelated call (or
// a wrong result) is where you finally see it. Wrap every call:
//
//     CUDA_CHECK(cudaMalloc(&d_a, bytes));
//     my_kernel<<<grid, block>>>(...);
//     CUDA_CHECK(cudaGetLastError());        // launch errors: bad grid/block, too much smem, ...
//     CUDA_CHECK(cudaDeviceSynchronize());   // errors while the kernel ran: bad address, ...
//
// On failure it prints file:line, the error's name and description and the call that failed,
// then exits. That is the right policy for examples and tests; a library would return the error
// to its caller instead (as the lesson's vector_add() functions do).
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

// The function does the work; the macro below only adds where the call was made.
inline void cuda_check(cudaError_t err, const char* call, const char* file, int line) {
    if (err == cudaSuccess) return;
    std::fprintf(stderr, "%s:%d: CUDA error %s: %s\n    in %s\n", file, line, cudaGetErrorName(err),
                 cudaGetErrorString(err), call);
    std::exit(EXIT_FAILURE);
}

// A macro (not a function) so that __FILE__, __LINE__ and the call's text (#call) are the
// caller's. It expands to one expression, so `if (x) CUDA_CHECK(f()); else ...` works.
#define CUDA_CHECK(call) cuda_check((call), #call, __FILE__, __LINE__)
