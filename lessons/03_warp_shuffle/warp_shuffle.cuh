// Lesson 03 — warp shuffles: the signatures of the five steps.
//
// Every step works on *segments*: the input of n floats is cut into consecutive segments of
// `width` elements (32 in steps 1 to 4; 8 or 16 in step 5), and each segment is processed on
// its own. Segment s holds the elements [s * width, min((s + 1) * width, n)).
//
// What n may be: any n >= 1. n need not be a multiple of the segment width: when it is not,
// the LAST segment is partial, with only n % width elements, and every result for it is
// computed over the elements it has (its sum is the sum of those elements, its scan stops at
// n, its count counts only those). So there are ceil(n / width) segments, and every output
// indexed by segment has that many elements.
//
// The checker calls your function with device pointers it allocated itself (cudaMalloc, so
// each pointer is at least 256-byte aligned: float4 loads of in are legal), and with a stream:
// put all GPU work on that stream and return cudaGetLastError() after the launch. No
// allocation, no synchronisation, no printing.
#pragma once

#include <cuda_runtime.h>
#include <cstddef>

// Step 1 (01_segment_sum.cu): sums[s] = the sum of the elements of segment s (width 32),
// for s in [0, ceil(n / 32)).
extern "C" cudaError_t segment_sum(const float* in, float* sums, size_t n, cudaStream_t stream);

// Step 2 (02_segment_normalize.cu): out[i] = in[i] / (the sum of the segment that holds i),
// width 32. The checker's inputs are positive (weights), so a segment's sum is positive:
// afterwards the elements of each segment add up to 1.
extern "C" cudaError_t segment_normalize(const float* in, float* out, size_t n,
                                         cudaStream_t stream);

// Step 3 (03_segment_scan.cu): the inclusive scan of each segment (width 32):
// out[i] = in[32 s] + in[32 s + 1] + ... + in[i], where s = i / 32.
extern "C" cudaError_t segment_scan(const float* in, float* out, size_t n, cudaStream_t stream);

// Step 4 (04_ballot_rank.cu): element i is *kept* when in[i] > threshold. Per segment
// (width 32):
//   counts[s] = how many elements of segment s are kept, for s in [0, ceil(n / 32));
//   ranks[i]  = how many kept elements of i's segment come before i (for a kept element: its
//               rank among the kept ones, 0 for the first), for every i in [0, n).
// (A kept element's final place in a compacted array is its segment's offset + its rank:
// lesson 07 builds on exactly this.)
extern "C" cudaError_t segment_select_rank(const float* in, unsigned* ranks, unsigned* counts,
                                           size_t n, float threshold, cudaStream_t stream);

// Step 5 (05_narrow_segments.cu): segments of `width` elements, width 8 or 16 (the code may
// assume a power of two from 1 to 32). Centre each segment on zero:
//   out[i] = in[i] - mean of the segment that holds i,
// where the mean of a segment of m elements (m = width, or fewer for a partial last segment)
// is its sum / m.
extern "C" cudaError_t segment_center(const float* in, float* out, size_t n, int width,
                                      cudaStream_t stream);

// The mask of every warp intrinsic in this lesson: all 32 lanes of the warp take part (see
// "Masks" in the README).
constexpr unsigned int kFullMask = 0xffffffffu;

// One full wave of `block_size`-thread blocks on this GPU (lesson 01, step 2), but no more
// than `needed` blocks and at least 1. Every step's launcher uses it.
inline cudaError_t one_wave_grid(unsigned block_size, size_t needed, unsigned* grid) {
    int device = 0;
    cudaError_t err = cudaGetDevice(&device);
    if (err != cudaSuccess) return err;
    int num_sms = 0;
    err = cudaDeviceGetAttribute(&num_sms, cudaDevAttrMultiProcessorCount, device);
    if (err != cudaSuccess) return err;
    int threads_per_sm = 0;
    err = cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device);
    if (err != cudaSuccess) return err;
    const size_t wave = static_cast<size_t>(num_sms) * (threads_per_sm / block_size);
    size_t blocks = needed < wave ? needed : wave;
    if (blocks == 0) blocks = 1;
    *grid = static_cast<unsigned>(blocks);
    return cudaSuccess;
}
