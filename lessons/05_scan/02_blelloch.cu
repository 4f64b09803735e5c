// Lesson 05, step 2 — Blelloch: a work-efficient tile scan, and its bank conflicts.
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
// What to do:
//   1. the up-sweep; 2. clear the root; 3. the down-sweep; 4. write the inclusive result;
//   5. once it passes, note the time, then pad the shared-memory index (kPad) and check again.
// Read "Step 2" in lessons/05_scan/README.md first.
//
// Check:  ./cudalings check 05_scan/02_blelloch
// Stuck:  ./cudalings hint 05_scan/02_blelloch
//
// As given, this file compiles and runs but writes nothing, so every test fails.

#include "scan.cuh"

constexpr unsigned int kBlockSize = kTile / 2;  // 512 threads, two elements each
// TODO(5 of 5, ~2 lines): set kPad to true, and make at() return k + (k >> 5) when kPad: one
//   unused word after every 32, so that slots 32 apart land in different banks. The result
//   must not change; the time should.
constexpr bool kPad = false;
constexpr unsigned int kSharedWords = kPad ? kTile + kTile / 32 : kTile;

// The shared-memory slot of element k of the tile.
__device__ __forceinline__ unsigned int at(unsigned int k) { return k; }

__global__ void __launch_bounds__(kBlockSize)
    blelloch_kernel(const float* __restrict__ in, float* __restrict__ out, size_t n) {
    __shared__ float s[kSharedWords];
    const unsigned int t = threadIdx.x;
    const size_t base = static_cast<size_t>(blockIdx.x) * kTile;

    // Thread t loads elements t and t + 512: each load instruction of a warp reads 32
    // consecutive floats (coalesced). Elements past n count as 0.
    const unsigned int ka = t, kb = t + kBlockSize;
    const float xa = base + ka < n ? in[base + ka] : 0.0f;
    const float xb = base + kb < n ? in[base + kb] : 0.0f;
    s[at(ka)] = xa;
    s[at(kb)] = xb;

    // TODO(1 of 5, ~6 lines): the up-sweep. offset = 1; for active = 512, 256, ..., 1:
    //     __syncthreads();
    //     if (t < active) { left = offset * (2t + 1) - 1; right = offset * (2t + 2) - 1;
    //                       s[at(right)] += s[at(left)]; }
    //     offset *= 2;
    //   Always index s through at(), never s[k] directly: TODO 5 changes at().

    // TODO(2 of 5, ~1 line): thread 0 sets the root, s[at(kTile - 1)], to 0.

    // TODO(3 of 5, ~8 lines): the down-sweep. For active = 1, 2, ..., 512: offset >>= 1;
    //   __syncthreads(); if (t < active), with left and right as above:
    //     l = s[at(left)]; s[at(left)] = s[at(right)]; s[at(right)] += l;
    //   Then one more __syncthreads() before anyone reads the result.

    // TODO(4 of 5, ~3 lines): s now holds the exclusive scan. Write the inclusive one:
    //   out[base + ka] = s[at(ka)] + xa (if base + ka < n), and the same for kb.
    //   Delete the (void) line when you are done.
    (void)out, (void)s[0];
}

extern "C" cudaError_t tile_scan(const float* in, float* out, size_t n, cudaStream_t stream) {
    const size_t tiles = tile_count(n);
    blelloch_kernel<<<static_cast<unsigned int>(tiles), kBlockSize, 0, stream>>>(in, out, n);
    return cudaGetLastError();
}
