// Lesson 05, step 1 — Hillis-Steele: the scan of one tile in shared memory (solution).
//
// Teaches: the shortest parallel scan. One block of kTile = 1024 threads owns one tile, one
// element per thread. In round d = 1, 2, 4, ..., 512 every thread t >= d adds the value d
// places to its left; after round d, slot t holds the sum of the (up to) 2d elements ending at
// t, so after log2(1024) = 10 rounds it holds the sum of everything up to t.
//
//   slot:        0    1    2    3    4    5    6    7
//   input:       a    b    c    d    e    f    g    h
//   after d=1:   a   a+b  b+c  c+d  d+e  e+f  f+g  g+h
//   after d=2:   a   a+b  a..c a..d b..e c..f d..g e..h
//   after d=4:   a   a+b  a..c a..d a..e a..f a..g a..h
//
// Two buffers: in a round, thread t reads slot t - d while thread t - d may be writing it. With
// one buffer the result depends on which warp runs first (a race); with two, every round reads
// only the buffer the previous round wrote, and the barrier between rounds orders them.
//
// Depth: 10 rounds, each one barrier. Work: sum over d of (1024 - d) = 9,217 additions where a
// sequential loop needs 1,023 (9x): most threads add in every round.
//
// Check:  ./cudalings check 05_scan/01_hillis_steele
// Stuck:  ./cudalings hint 05_scan/01_hillis_steele

#include "scan.cuh"

constexpr unsigned int kBlockSize = kTile;  // one thread per element of the tile

__global__ void __launch_bounds__(kBlockSize)
    hillis_steele_kernel(const float* __restrict__ in, float* __restrict__ out, size_t n) {
    // buffer[0] and buffer[1] take turns: 2 x 4 KiB of shared memory.
    __shared__ float buffer[2][kTile];
    const unsigned int t = threadIdx.x;
    const size_t i = static_cast<size_t>(blockIdx.x) * kTile + t;

    // Threads past the end of the last tile load 0, the identity of +: the rounds then need no
    // bounds test, and the prefixes of the real elements are unchanged.
    unsigned int src = 0;
    buffer[src][t] = i < n ? in[i] : 0.0f;
    __syncthreads();

    for (unsigned int d = 1; d < kTile; d *= 2) {
        const float v = buffer[src][t];
        // Slots t < d already hold their final prefix: they copy it across unchanged, so the
        // other buffer is complete for the next round.
        buffer[1 - src][t] = t >= d ? buffer[src][t - d] + v : v;
        src = 1 - src;
        // Outside any if: every thread of the block must reach every barrier.
        __syncthreads();
    }

    if (i < n) out[i] = buffer[src][t];
}

extern "C" cudaError_t tile_scan(const float* in, float* out, size_t n, cudaStream_t stream) {
    const size_t tiles = tile_count(n);  // n < 2^31: at most 2^21 blocks
    hillis_steele_kernel<<<static_cast<unsigned int>(tiles), kBlockSize, 0, stream>>>(in, out, n);
    return cudaGetLastError();
}
