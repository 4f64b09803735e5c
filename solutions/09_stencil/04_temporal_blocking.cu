// Lesson 09, step 4 — temporal blocking: several time steps per pass, in registers (solution).
//
// Teaches: trading recomputation for traffic. Steps 1 to 3 read and write the whole array
// once per time step: 8n bytes per step. Here one pass does K = min(steps, 8) time steps on a
// tile that stays on chip, so 8 steps cost 8n bytes instead of 64n. A block owns a tile of
// 256 x 16 = 4096 consecutive cells, 16 per thread in registers:
//
//     [ H halo cells | 4096 - 2H interior cells | H halo cells ]      H >= K * R
//
// After each time step, the cells within R of the tile's edges are wrong (their neighbours
// are outside the tile): the valid region shrinks by R per step. With H >= K * R, after K
// steps the interior is still exact, and only it is written. Neighbouring tiles overlap by
// 2H cells, loaded and updated twice: the price of needing no communication between blocks.
//
// In one time step a thread needs R cells on each side of its 16:
//   - from the lanes next door, by __shfl_up_sync / __shfl_down_sync (registers to
//     registers);
//   - lanes 0 and 31 take them from the neighbouring warps, through shared memory that is
//     double-buffered by the parity of the step, so one barrier per step is enough;
//   - cells outside [0, n) obey the boundary rule at every step, not the stencil: with zero
//     they are reset to 0, with clamp to the current value of cell 0 or n - 1 (which some
//     thread of the same tile holds, and publishes in shared memory). With wrap they are real
//     cells (positions mod n), loaded as such, and evolve like any other.
// Radius 1 and 8 are compiled (the radii the checker times); other radii take step 1's kernel.
//
// Check:  ./cudalings check 09_stencil/04_temporal_blocking
// Stuck:  ./cudalings hint 09_stencil/04_temporal_blocking

#include "stencil.cuh"

constexpr unsigned int kBlockSize = 256;  // threads per block, also for step 1's kernel
constexpr unsigned int kWarps = kBlockSize / 32;
constexpr int kCells = 16;                       // cells per thread, in registers
constexpr int kTileCells = kBlockSize * kCells;  // 4096 cells per tile
constexpr int kMaxFused = 8;                     // time steps per pass at most
constexpr unsigned int kFullMask = 0xffffffffu;

// x[i] for any position i, inside [0, n) or not, by the boundary rule. i is signed: windows
// reach below 0.
__device__ __forceinline__ float load(const float* __restrict__ x, long long i, size_t n,
                                      int boundary) {
    const long long len = static_cast<long long>(n);
    if (i >= 0 && i < len) return x[i];  // the common case: one compare pair, one load
    if (boundary == kZero) return 0.0f;
    if (boundary == kClamp) return x[i < 0 ? 0 : len - 1];
    // kWrap: C++'s % keeps the sign of i (-1 % 5 == -1), so add len and take % again. Adding len
    // once (i + len) is not enough: with n = 3 and a halo of 8, i = -8 + 3 is still negative.
    return x[((i % len) + len) % len];
}

// Step 1's kernel, for the radii this step does not compile a fused kernel for.
__global__ void __launch_bounds__(kBlockSize)
    stencil_global_kernel(const float* __restrict__ x, float* __restrict__ y, size_t n,
                          const __grid_constant__ StencilWeights w, int radius, int boundary) {
    const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc = 0.0f;
    // j = -R .. R; w.w[radius + j] is the weight of x[i + j].
    for (int j = -radius; j <= radius; ++j)
        acc += w.w[radius + j] * load(x, static_cast<long long>(i) + j, n, boundary);
    y[i] = acc;
}

// Cell m of this thread in the current time step, for m in [-R, kCells + R): its own cells,
// or the neighbours' R cells on either side.
template <int R>
__device__ __forceinline__ float cell(const float (&c)[kCells], const float (&left)[R],
                                      const float (&right)[R], int m) {
    return m < 0 ? left[R + m] : m >= kCells ? right[m - kCells] : c[m];
}

// One pass: `sub_steps` time steps of the radius-R stencil on tiles of kTileCells cells with
// `halo` cells on each side (a multiple of 4, >= sub_steps * R).
template <int R>
__global__ void __launch_bounds__(kBlockSize)
    stencil_temporal_kernel(const float* __restrict__ x, float* __restrict__ y, size_t n,
                            StencilWeights w, int boundary, int sub_steps, int halo) {
    // The edges of every warp, and cells 0 and n - 1, published once per time step. Two
    // copies, by the parity of the step: a thread that runs ahead into the next step writes
    // the other copy, never the one a slower thread may still be reading.
    __shared__ float warp_first[2][kWarps][R];  // lane 0's first R cells
    __shared__ float warp_last[2][kWarps][R];   // lane 31's last R cells
    __shared__ float ends[2][2];                // clamp: cell 0 and cell n - 1

    const unsigned int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const long long len = static_cast<long long>(n);
    const long long interior = kTileCells - 2 * halo;
    const long long tile0 = static_cast<long long>(blockIdx.x) * interior - halo;
    const long long p0 = tile0 + static_cast<long long>(threadIdx.x) * kCells;  // my first cell
    // The same for the whole block: does the tile reach outside [0, n)? Only the first and the
    // last tile (or one tile, for small n) pay for the boundary rule below.
    const bool below = (tile0 < 0);
    const bool above = (tile0 + kTileCells > len);

    // Load my 16 cells: four float4 where they lie inside the array (p0 is a multiple of 4:
    // tile0 is, because halo and interior are), cell by cell through load() elsewhere.
    float c[kCells];
#pragma unroll
    for (int g = 0; g < kCells / 4; ++g) {
        const long long q = p0 + 4 * g;
        if (q >= 0 && q + 4 <= len) {
            const float4 v = reinterpret_cast<const float4*>(x)[q / 4];
            c[4 * g] = v.x, c[4 * g + 1] = v.y, c[4 * g + 2] = v.z, c[4 * g + 3] = v.w;
        } else {
#pragma unroll
            for (int e = 0; e < 4; ++e) c[4 * g + e] = load(x, q + e, n, boundary);
        }
    }

    for (int s = 0; s < sub_steps; ++s) {
        const int buf = s & 1;
        // Publish what other warps need from me, then one barrier.
        if (lane == 0)
#pragma unroll
            for (int j = 0; j < R; ++j) warp_first[buf][warp][j] = c[j];
        if (lane == 31)
#pragma unroll
            for (int j = 0; j < R; ++j) warp_last[buf][warp][j] = c[kCells - R + j];
        if ((below || above) && boundary == kClamp) {
#pragma unroll
            for (int k = 0; k < kCells; ++k) {
                if (p0 + k == 0) ends[buf][0] = c[k];
                if (p0 + k == len - 1) ends[buf][1] = c[k];
            }
        }
        __syncthreads();

        // The boundary rule, at this step, for my cells outside [0, n) (zero and clamp).
        float lo_value = 0.0f, hi_value = 0.0f;
        const bool fix = (below || above) && boundary != kWrap;
        if (fix) {
            if (boundary == kClamp) {
                if (below) lo_value = ends[buf][0];
                if (above) hi_value = ends[buf][1];
            }
#pragma unroll
            for (int k = 0; k < kCells; ++k) {
                if (p0 + k < 0) c[k] = lo_value;
                if (p0 + k >= len) c[k] = hi_value;
            }
        }

        // R neighbours on each side: from the lanes next door, or for lanes 0 and 31 from the
        // neighbouring warps. The tile's outermost lanes have no neighbour: they repeat their
        // own edge cell, which only spoils cells of the halo that are given up anyway.
        float left[R], right[R];
#pragma unroll
        for (int j = 0; j < R; ++j) {
            left[j] = __shfl_up_sync(kFullMask, c[kCells - R + j], 1);
            right[j] = __shfl_down_sync(kFullMask, c[j], 1);
        }
        if (lane == 0)
#pragma unroll
            for (int j = 0; j < R; ++j) left[j] = warp > 0 ? warp_last[buf][warp - 1][j] : c[0];
        if (lane == 31)
#pragma unroll
            for (int j = 0; j < R; ++j)
                right[j] = warp + 1 < kWarps ? warp_first[buf][warp + 1][j] : c[kCells - 1];
        if (fix) {  // the cells from shared memory were published before the rule above
#pragma unroll
            for (int j = 0; j < R; ++j) {
                const long long l = p0 - R + j, r = p0 + kCells + j;
                if (l < 0) left[j] = lo_value;
                if (l >= len) left[j] = hi_value;
                if (r < 0) right[j] = lo_value;
                if (r >= len) right[j] = hi_value;
            }
        }

        // The step itself, into a second array: every new cell reads old ones.
        float next[kCells];
#pragma unroll
        for (int k = 0; k < kCells; ++k) {
            float acc = 0.0f;
#pragma unroll
            for (int j = -R; j <= R; ++j) acc += w.w[R + j] * cell<R>(c, left, right, k + j);
            next[k] = acc;
        }
#pragma unroll
        for (int k = 0; k < kCells; ++k) c[k] = next[k];
    }

    // Write the interior, [tile0 + halo, tile0 + halo + interior), clipped to n: float4 where
    // all four cells are in it, one by one at its two ends.
    const long long lo = tile0 + halo;
    const long long hi = lo + interior < len ? lo + interior : len;
#pragma unroll
    for (int g = 0; g < kCells / 4; ++g) {
        const long long q = p0 + 4 * g;
        if (q >= lo && q + 4 <= hi) {
            reinterpret_cast<float4*>(y)[q / 4] =
                make_float4(c[4 * g], c[4 * g + 1], c[4 * g + 2], c[4 * g + 3]);
        } else {
#pragma unroll
            for (int e = 0; e < 4; ++e)
                if (q + e >= lo && q + e < hi) y[q + e] = c[4 * g + e];
        }
    }
}

// ceil(steps / kMaxFused) passes of the radius-R kernel, alternating between the workspace
// and out so that the last one writes out (as in step 1, pass by pass).
template <int R>
cudaError_t run_passes(const float* in, float* out, size_t n, const StencilWeights& w, int boundary,
                       int steps, float* scratch, cudaStream_t stream) {
    const int passes = (steps + kMaxFused - 1) / kMaxFused;
    const float* src = in;
    int done = 0;
    for (int p = 0; p < passes; ++p) {
        const int sub = steps - done < kMaxFused ? steps - done : kMaxFused;
        const int halo = (sub * R + 3) / 4 * 4;  // >= sub * R, a multiple of 4 (float4 tiles)
        const size_t interior = kTileCells - 2 * halo;
        const unsigned int grid = static_cast<unsigned int>((n + interior - 1) / interior);
        float* dst = (passes - 1 - p) % 2 == 0 ? out : scratch;
        stencil_temporal_kernel<R>
            <<<grid, kBlockSize, 0, stream>>>(src, dst, n, w, boundary, sub, halo);
        src = dst;
        done += sub;
    }
    return cudaGetLastError();
}

extern "C" cudaError_t stencil_1d(const float* in, float* out, size_t n, const float* weights,
                                  int radius, int boundary, int steps, void* workspace,
                                  size_t workspace_bytes, cudaStream_t stream) {
    if (!stencil_arguments_valid(n, weights, radius, boundary, steps, workspace, workspace_bytes))
        return cudaErrorInvalidValue;
    const StencilWeights w = stencil_weights(weights, radius);
    float* scratch = static_cast<float*>(workspace);
    if (radius == 1) return run_passes<1>(in, out, n, w, boundary, steps, scratch, stream);
    if (radius == kMaxRadius)
        return run_passes<kMaxRadius>(in, out, n, w, boundary, steps, scratch, stream);
    // Any other radius: step 1's kernel, one launch per time step.
    const unsigned int grid = static_cast<unsigned int>((n + kBlockSize - 1) / kBlockSize);
    const float* src = in;
    for (int s = 0; s < steps; ++s) {
        float* dst = (steps - 1 - s) % 2 == 0 ? out : scratch;
        stencil_global_kernel<<<grid, kBlockSize, 0, stream>>>(src, dst, n, w, radius, boundary);
        src = dst;
    }
    return cudaGetLastError();
}
