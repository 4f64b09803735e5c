// Lesson 02 — reduce: the signature every step of this lesson implements.
//
// The checker calls your function with device pointers it allocated itself (cudaMalloc, so
// each pointer is at least 256-byte aligned), with n >= 1, and with a stream: put all GPU
// work on that stream, allocate nothing, do not synchronize. Return the launch status
// (cudaGetLastError() after the last launch) so launch errors are reported.
#pragma once

#include <cuda_runtime.h>
#include <cstddef>

// *out = in[0] + in[1] + ... + in[n - 1].
//
//   in               n floats on the device (read only)
//   out              ONE float on the device: the sum goes here
//   workspace        scratch memory on the device for the per-block partial sums, at least
//                    reduce_workspace_bytes(n) bytes, 256-byte aligned. Its contents are
//                    garbage (NaN) when your function is called: write before you read.
//   workspace_bytes  its size in bytes: never touch a byte past it
extern "C" cudaError_t reduce_sum(const float* in, size_t n, float* out, void* workspace,
                                  size_t workspace_bytes, cudaStream_t stream);

// The workspace the checker passes for n elements: one float for every 128 inputs, plus 4096
// floats (16 KiB). That is more than any step needs: steps 1-6 keep one partial sum per block
// of 256 or 512 inputs (plus the next level of partials), steps 7-9 one per block of the grid.
inline size_t reduce_workspace_bytes(size_t n) { return (n / 128 + 4096) * sizeof(float); }
