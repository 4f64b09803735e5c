// Lesson 05, step 2 — Blelloch: a work-efficient tile scan, and its bank conflicts (solution).
//
// Teaches: a scan with as few additions as a sequential loop (times two), and what shared
// memory's banks do to an access pattern with a power-of-two stride. 512 threads scan a tile of
// 1024 elements, two per thread, as a balanced tree in place:
//
//   up-sweep (reduce): round with `offset` = 1, 2, 4, ..., 512: slot offset*(2k+2) - 1 adds slot
//                      offset*(2k+1) - 1 for k < 512 / offset. The root (slot 1023) ends up
//                      holding the tile's total; every other right child a partial sum.
//   clear the root:    slot 1023 = 0.
//   down-sweep:        offset = 512, ..., 1: the left child gets the parent's value, the right
//                      child the parent's value plus the old left child. Afterwards slot k holds
//                      the EXCLUSIVE prefix x[0] + ... + x[k - 1] (slot 0 holds 0).
//   inclusive:         add each element's own value back.
//
//   8 slots:          a    b    c    d    e    f    g    h
//   up   offset 1:    a   a+b   c   c+d   e   e+f   g   g+h
//        offset 2:    a   a+b   c   a..d  e   e+f   g   e..h
//        offset 4:    a   a+b   c   a..d  e   e+f   g   a..h
//   clear root:       a   a+b   c   a..d  e   e+f   g    0
//   down offset 4:    a   a+b   c    0    e   e+f   g   a..d
//        offset 2:    a    0    c   a+b   e   a..d  g   a..f
//        offset 1:    0    a   a+b  a..c a..d a..e a..f a..g     (exclusive)
//
// Work: 2 x 1023 additions per tile (plus 1024 for inclusive), against 9,217 in step 1. Depth:
// 2 x 10 rounds, each with a barrier, and most threads idle in most rounds.
//
// Bank conflicts: shared memory has 32 banks, word k in bank k % 32. In the round with
// offset 16, the 32 lanes of warp 0 touch words 32k + 15: all in bank 15, a 32-way conflict that
// the hardware serializes into 32 accesses. Padding fixes it: at(k) = k + k / 32 inserts one
// unused word after every 32, so words 32 apart fall into neighbouring banks. Set kPad = false
// and check again to see the unpadded time (slower than step 1 on an H200).
//
// Check:  ./cudalings check 05_scan/02_blelloch
// Stuck:  ./cudalings hint 05_scan/02_blelloch

#include "scan.cuh"

constexpr unsigned int kBlockSize = kTile / 2;  // 512 threads, two elements each
constexpr bool kPad = true;                     // skip one shared word after every 32
constexpr unsigned int kSharedWords = kPad ? kTile + kTile / 32 : kTile;

// The shared-memory slot of element k of the tile.
__device__ __forceinline__ unsigned int at(unsigned int k) { return kPad ? k + (k >> 5) : k; }

__global__ void __launch_bounds__(kBlockSize)
    blelloch_kernel(const float* __restrict__ in, float* __restrict__ out, size_t n) {
    __shared__ float s[kSharedWords];
    const unsigned int t = threadIdx.x;
    const size_t base = static_cast<size_t>(blockIdx.x) * kTile;

    // Thread t loads elements t and t + 512: each load instruction of a warp reads 32
    // consecutive floats (coalesced), and at() keeps 32 consecutive slots in 32 banks.
    const unsigned int ka = t, kb = t + kBlockSize;
    const float xa = base + ka < n ? in[base + ka] : 0.0f;
    const float xb = base + kb < n ? in[base + kb] : 0.0f;
    s[at(ka)] = xa;
    s[at(kb)] = xb;

    // Up-sweep: 512 additions, then 256, ..., then 1.
    unsigned int offset = 1;
    for (unsigned int active = kTile / 2; active > 0; active >>= 1) {
        __syncthreads();
        if (t < active) {
            const unsigned int left = offset * (2 * t + 1) - 1;
            const unsigned int right = offset * (2 * t + 2) - 1;
            s[at(right)] += s[at(left)];
        }
        offset *= 2;
    }

    // Clear the root: the exclusive prefix of the tile's first element is 0.
    if (t == 0) s[at(kTile - 1)] = 0.0f;

    // Down-sweep: 1 swap-and-add, then 2, ..., then 512.
    for (unsigned int active = 1; active < kTile; active *= 2) {
        offset >>= 1;
        __syncthreads();
        if (t < active) {
            const unsigned int left = offset * (2 * t + 1) - 1;
            const unsigned int right = offset * (2 * t + 2) - 1;
            const float l = s[at(left)];
            s[at(left)] = s[at(right)];
            s[at(right)] += l;
        }
    }
    __syncthreads();

    // s now holds the exclusive scan; the inclusive one adds each element's own value.
    if (base + ka < n) out[base + ka] = s[at(ka)] + xa;
    if (base + kb < n) out[base + kb] = s[at(kb)] + xb;
}

extern "C" cudaError_t tile_scan(const float* in, float* out, size_t n, cudaStream_t stream) {
    const size_t tiles = tile_count(n);
    blelloch_kernel<<<static_cast<unsigned int>(tiles), kBlockSize, 0, stream>>>(in, out, n);
    return cudaGetLastError();
}
