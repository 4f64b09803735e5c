// Lesson 07, step 1 — flags, a library scan, a scatter.
//
// Teaches: recognise the skeleton, and use the library first. Stream compaction is three
// textbook pieces:
//
//   in         8   1   6   2   9         threshold 5
//   flags      1   0   1   0   1         flags[i] = in[i] > threshold
//   positions  0   1   1   2   2         exclusive scan of the flags
//   out        8   6   9                 out[positions[i]] = in[i] where flags[i] == 1
//   count      3                         positions[n - 1] + flags[n - 1]
//
// The scan is the hard part (lesson 05), and CUB has a fast one: cub::DeviceScan::ExclusiveSum.
// This step, and only this step, may use CUB. Its two-call idiom: a first call with a null temp
// pointer only reports how many bytes of temporary storage the scan needs; the second call does
// the work. Our contract allows no allocation: carve the positions and CUB's storage out of the
// workspace. The scan may run in place (the flags become the positions).
//
// What to do: the flags kernel, the two CUB calls, the scatter kernel.
// Read "Step 1" in lessons/07_compact/README.md first.
//
// Check:  ./cudalings check 07_compact/01_flags_scan_scatter   (the first build takes 6-14 s:
//         CUB is a large header library; later checks reuse the cached build)
// Stuck:  ./cudalings hint 07_compact/01_flags_scan_scatter
//
// As given, this file compiles and runs but writes neither out nor *count, so every test fails.

// CUB marks its calls with NVTX ranges for profilers, and the NVTX code can load a profiler's
// library (dlopen), which the checker never allows in a step. This turns the ranges off (the
// checker's build turns them off too, hence the #ifndef: one definition, no warning).
#ifndef CCCL_DISABLE_NVTX
#define CCCL_DISABLE_NVTX
#endif
#include <cub/device/device_scan.cuh>

#include "compact.cuh"

constexpr unsigned int kBlockSize = 256;

__global__ void flags_kernel(const float* __restrict__ in, unsigned int* __restrict__ flags,
                             size_t n, float threshold) {
    // TODO(1 of 3, ~4 lines): a grid-stride loop (size_t index) setting
    //   flags[i] = in[i] > threshold ? 1u : 0u. (Use exactly `>`: equal values and NaN are not
    //   kept, and `x > t` is false for a NaN.) Delete the (void) line when you are done.
    (void)in, (void)flags, (void)n, (void)threshold;
}

__global__ void scatter_kernel(const float* __restrict__ in,
                               const unsigned int* __restrict__ positions, float* __restrict__ out,
                               unsigned int* __restrict__ count, size_t n, float threshold) {
    // TODO(3 of 3, ~7 lines): a grid-stride loop: x = in[i]; keep = x > threshold (the scan
    //   overwrote the flags, and evaluating the predicate again is cheaper than keeping them);
    //   if keep, out[positions[i]] = x. The thread with i == n - 1 also writes
    //   *count = positions[i] + (keep ? 1 : 0): the exclusive scan stops one short of the total.
    //   Delete the (void) line when you are done.
    (void)in, (void)positions, (void)out, (void)count, (void)n, (void)threshold;
}

extern "C" cudaError_t compact(const float* in, float* out, unsigned int* count, size_t n,
                               float threshold, void* workspace, size_t workspace_bytes,
                               cudaStream_t stream) {
    if (n == 0) {  // nothing to scan: the count is 0
        cudaError_t err = cudaMemsetAsync(count, 0, sizeof(unsigned int), stream);
        if (err != cudaSuccess) return err;
        return cudaGetLastError();
    }
    // The workspace: n positions, then (256-byte aligned) CUB's temporary storage, which
    // starts at static_cast<char*>(workspace) + positions_bytes.
    unsigned int* positions = static_cast<unsigned int*>(workspace);
    const size_t positions_bytes = (n * sizeof(unsigned int) + 255) / 256 * 256;
    const unsigned int items = static_cast<unsigned int>(n);  // n < 2^32: 32-bit offsets

    cudaError_t err = cudaSuccess;
    unsigned int grid = 0;
    err = one_wave_grid(kBlockSize, (n + kBlockSize - 1) / kBlockSize, &grid);
    if (err != cudaSuccess) return err;
    flags_kernel<<<grid, kBlockSize, 0, stream>>>(in, positions, n, threshold);
    err = cudaGetLastError();
    if (err != cudaSuccess) return err;

    // TODO(2 of 3, ~8 lines): the scan, in place: positions <- exclusive scan of positions.
    //   - size_t temp_bytes = 0; cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, positions,
    //     items, stream) only fills in temp_bytes (check its error all the same);
    //   - if positions_bytes + temp_bytes > workspace_bytes, return cudaErrorInvalidValue;
    //   - with temp = static_cast<char*>(workspace) + positions_bytes,
    //     cub::DeviceScan::ExclusiveSum(temp, temp_bytes, positions, items, stream) does the
    //     scan, on our stream. Return its error if it fails. Delete the (void) line.
    (void)positions_bytes, (void)items, (void)workspace_bytes;

    scatter_kernel<<<grid, kBlockSize, 0, stream>>>(in, positions, out, count, n, threshold);
    return cudaGetLastError();
}
