// Lesson 09, step 3 — float4, several packs in flight, a tile per warp.
//
// Teaches: lessons 01 to 04's recipe for streaming at the memory's speed, on a stencil, with
// the neighbours taken from registers instead of memory. The array is cut into packs of four
// cells, and the grid into warp tiles:
//   - warp k of the grid owns 32 * U consecutive packs (U = kPacksFor<R>): lane l loads
//     packs s + l, s + 32 + l, ... as float4 (one coalesced load per row), every load before
//     any arithmetic. No loop: the grid covers the array, one tile per warp;
//   - the 2R neighbours of a pack are cells of the packs one or two lanes away: rotations by
//     __shfl_sync bring them over, and only the tile's edge lanes load the cells beyond it;
//   - a tile that reaches outside [0, n) reads its cells through load() and the rule;
//   - the last n % 4 outputs are done one by one by the first threads of block 0;
//   - __ldcs / __stcs: streaming loads and stores, every byte is used once.
// The radius is a template parameter (the window is an array in registers); the launcher
// compiles radius 1 and radius 8 and sends other radii to step 1's kernel. load(), step 1's
// kernel, the neighbour tables, apply(), the interior tiles' loads and the launcher are
// given. Read "Step 3" in lessons/09_stencil/README.md.
//
// Check:  ./cudalings check 09_stencil/03_float4
// Stuck:  ./cudalings hint 09_stencil/03_float4
//
// As given, this file compiles and runs but writes nothing at radius 1 and 8, so most tests
// fail.

#include "stencil.cuh"

constexpr unsigned int kBlockSize = 256;
constexpr unsigned int kWarpsPerBlock = kBlockSize / 32;
constexpr unsigned int kFullMask = 0xffffffffu;

// Packs per lane. A wider radius holds more neighbour cells per pack (2R), so it keeps fewer
// packs in flight.
template <int R>
constexpr int kPacksFor = R <= 2 ? 4 : 2;

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

// Step 1's kernel, for the radii this step does not compile a float4 kernel for.
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

// Component k (0..3) of a float4; k is a compile-time constant once the loops are unrolled.
__device__ __forceinline__ float part(const float4& v, int k) {
    return k == 0 ? v.x : k == 1 ? v.y : k == 2 ? v.z : v.w;
}

// Where a neighbour cell of pack p comes from. Left cell m (m = 1 .. R, position 4p - m) is
// component left_part(m) of the pack left_lanes(m) lanes down; right cell j (j = 0 .. R - 1,
// position 4p + 4 + j) is component right_part(j) of the pack right_lanes(j) lanes up.
__host__ __device__ constexpr int left_lanes(int m) { return (m + 3) / 4; }
__host__ __device__ constexpr int left_part(int m) { return 4 * left_lanes(m) - m; }
__host__ __device__ constexpr int right_lanes(int j) { return 1 + j / 4; }
__host__ __device__ constexpr int right_part(int j) { return j % 4; }

// Output e of a window (0 <= e < 4): the 2R + 1 products, j = -R .. R. With R and e known at
// compile time, each weight is read straight from the kernel's parameters.
template <int R>
__device__ __forceinline__ float apply(const StencilWeights& w, const float (&c)[4 + 2 * R],
                                       int e) {
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k < 2 * R + 1; ++k) acc += w.w[k] * c[e + k];
    return acc;
}

template <int R>
__global__ void __launch_bounds__(kBlockSize)
    stencil_float4_kernel(const float* __restrict__ x, float* __restrict__ y, size_t n,
                          StencilWeights w, int boundary) {
    constexpr int U = kPacksFor<R>;
    // n < 2^32, so n / 4 < 2^30 packs: every pack index below fits in 32 bits.
    const unsigned int n4 = static_cast<unsigned int>(n / 4);  // whole packs
    const unsigned int lane = threadIdx.x % 32;
    const unsigned int warp = blockIdx.x * kWarpsPerBlock + threadIdx.x / 32;
    const unsigned int s = warp * (32 * U);  // this warp's tile: packs s .. s + 32U - 1
    const float4* x4 = reinterpret_cast<const float4*>(x);
    float4* y4 = reinterpret_cast<float4*>(y);

    if (s < n4) {  // the same for the whole warp: all 32 lanes reach the shuffles below
        // 1. Every load of the tile first, so that they are all in flight together: the tile's
        //    packs (row u: pack s + 32u + l in lane l) and its halo. Left cell m of row 0 is in
        //    the previous tile for lanes l < left_lanes(m); right cell j of the last row is in
        //    the next tile for lanes l > 31 - right_lanes(j). Those lanes load it; the others
        //    keep 0 there (never read).
        float4 v[U];
        float halo_left[R], halo_right[R];
        const unsigned int last = s + 32 * (U - 1) + lane;  // this lane's pack in the last row
        if (s >= 2 && 4 * static_cast<size_t>(s + 32 * U) + R <= n) {
            // A tile inside the array, halo included (every tile but the first and the last):
            // plain loads, no rule. Every position here is below n < 2^32.
#pragma unroll
            for (int u = 0; u < U; ++u) v[u] = __ldcs(x4 + s + 32 * u + lane);  // streaming
#pragma unroll
            for (int m = 1; m <= R; ++m)
                halo_left[m - 1] = lane < left_lanes(m) ? x[4 * (s + lane) - m] : 0.0f;
#pragma unroll
            for (int j = 0; j < R; ++j)
                halo_right[j] = lane + right_lanes(j) > 31 ? x[4 * last + 4 + j] : 0.0f;
        } else {
            // TODO(1 of 4, ~14 lines): the same loads for a tile at an end of the array, every
            //   cell by the rule, since some positions are below 0 or at n and above:
            //   - v[u] for each row (#pragma unroll): p = s + 32u + lane; if p < n4, a float4
            //     as above; otherwise p is a pack past the last whole one. It has no output of
            //     its own, but the packs below it read their right neighbours from it, so it
            //     must hold its four cells by the rule: make_float4(load(x, i, n, boundary),
            //     ..., load(x, i + 3, n, boundary)) with i = 4 * (long long)p;
            //   - halo_left and halo_right for the same lanes as above, through load(x, position,
            //     n, boundary), positions computed as long long (they can be negative).
            //   Delete the (void) line when you are done.
            (void)boundary;
        }

        // 2. Rotations. left[u][m - 1], in lane l, is cell m of the pack d = left_lanes(m)
        //    lanes down, read from lane (l - d) mod 32: for lanes l >= d that is left cell m
        //    of pack u; lanes l < d receive the cell from lane 32 + l - d, which is left cell
        //    m of the same lane's pack in row u + 1. right[u][j]: the same, d lanes up, and
        //    lanes l > 31 - d receive right cell j of their pack in row u - 1.
        float left[U][R], right[U][R];
        // TODO(2 of 4, ~10 lines): the rotations, for every row u (#pragma unroll on the three
        //   loops): for m = 1 .. R, left[u][m - 1] = __shfl_sync(kFullMask, the component
        //   part(v[u], left_part(m)), from lane (lane - left_lanes(m)) & 31); for j = 0 .. R - 1,
        //   right[u][j] = the same with part(v[u], right_part(j)), from lane
        //   (lane + right_lanes(j)) & 31. Every lane runs every shuffle: no condition around
        //   them. Delete the (void) line when you are done.
        (void)kFullMask;

        // 3. Each pack's window of 4 + 2R cells (c[k] = x[4p - R + k]), its four sums, one
        //    float4 store. The lanes whose rotation wrapped take their cell from the rotation
        //    of row u - 1 (left) or row u + 1 (right), or from the halo in the first (last)
        //    row. (The rows u - 1 and u + 1 are clamped so that the branch not taken never
        //    names a row outside [0, U).)
        // TODO(3 of 4, ~20 lines): for each row u (#pragma unroll), p = s + 32u + lane; if
        //   p < n4, the window float c[4 + 2 * R]:
        //   - c[R - m] for m = 1 .. R: left[u][m - 1] where lane >= left_lanes(m); in the other
        //     lanes, left[u - 1][m - 1] (row u - 1's rotation), or halo_left[m - 1] in row 0;
        //   - c[R .. R + 3] = v[u].x, v[u].y, v[u].z, v[u].w;
        //   - c[R + 4 + j] for j = 0 .. R - 1: right[u][j] where lane + right_lanes(j) <= 31;
        //     in the other lanes, right[u + 1][j] (row u + 1's rotation), or halo_right[j] in
        //     the last row (u == U - 1);
        //   then __stcs(y4 + p, make_float4(apply<R>(w, c, 0), ..., apply<R>(w, c, 3))).
        //   Write the rows as left[u > 0 ? u - 1 : 0] and right[u < U - 1 ? u + 1 : u], so that
        //   a branch not taken never names a row outside [0, U).
        //   Delete the (void) line when you are done.
        (void)v, (void)halo_left, (void)halo_right, (void)last, (void)left, (void)right, (void)y4,
            (void)w;
    }

    // The tail: outputs 4 * n4 .. n - 1 (at most 3), one per thread of block 0.
    // TODO(4 of 4, ~7 lines): i = 4 * (size_t)n4 + threadIdx.x; in block 0, if i < n,
    //   __stcs(y + i, the sum over j = -R .. R of w.w[R + j] * load(x, (long long)i + j, n,
    //   boundary)).
}

// `steps` launches of the radius-R kernel, alternating between the workspace and out so that
// the last one writes out (as in step 1). The grid covers the array: one warp per tile of
// 32 * kPacksFor<R> packs, 8 tiles per block, and at least one block (n < 4 has no packs, but a
// tail).
template <int R>
cudaError_t run_steps(const float* in, float* out, size_t n, const StencilWeights& w, int boundary,
                      int steps, float* scratch, cudaStream_t stream) {
    const size_t tile = static_cast<size_t>(kPacksFor<R>) * kBlockSize;  // packs per block
    size_t blocks = (n / 4 + tile - 1) / tile;
    if (blocks == 0) blocks = 1;
    const unsigned int grid = static_cast<unsigned int>(blocks);

    const float* src = in;
    for (int s = 0; s < steps; ++s) {
        float* dst = (steps - 1 - s) % 2 == 0 ? out : scratch;
        stencil_float4_kernel<R><<<grid, kBlockSize, 0, stream>>>(src, dst, n, w, boundary);
        src = dst;
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
    if (radius == 1) return run_steps<1>(in, out, n, w, boundary, steps, scratch, stream);
    if (radius == kMaxRadius)
        return run_steps<kMaxRadius>(in, out, n, w, boundary, steps, scratch, stream);
    // Any other radius: step 1's kernel, one thread per element.
    const unsigned int grid = static_cast<unsigned int>((n + kBlockSize - 1) / kBlockSize);
    const float* src = in;
    for (int s = 0; s < steps; ++s) {
        float* dst = (steps - 1 - s) % 2 == 0 ? out : scratch;
        stencil_global_kernel<<<grid, kBlockSize, 0, stream>>>(src, dst, n, w, radius, boundary);
        src = dst;
    }
    return cudaGetLastError();
}
