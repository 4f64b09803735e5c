// Lesson 09, step 3 — float4, several packs in flight, a tile per warp (solution).
//
// Teaches: lessons 01 to 04's recipe for streaming at the memory's speed, on a stencil, with
// the neighbours taken from registers instead of memory. The array is cut into packs of four
// cells, and the grid into warp tiles:
//   - warp k of the grid owns 32 * U consecutive packs, U rows of 32 (U = kPacksFor<R>: 4 at
//     radius 1, a tile of 512 cells; 2 at radius 8): lane l loads packs s + l, s + 32 + l, ...
//     (one coalesced float4 per instruction, 16-byte aligned: pack p starts at byte 16p),
//     every load before any arithmetic (lesson 04, step 5): 64 bytes of new data in flight per
//     thread at radius 1. No loop: a block of 8 warps loads, computes, stores and exits, and
//     the block scheduler starts the next one on whichever SM has room (lesson 08, step 5 is
//     built the same way), so no SM waits on a fixed share of the array;
//   - the 2R neighbours of a pack are cells of the packs one or two lanes away, which are
//     already in registers. A rotation, __shfl_sync(v, (l - d) & 31) (lesson 03), gives lanes
//     d .. 31 the cell from d lanes down, and lanes 0 .. d - 1 the cell from the top of the
//     warp: exactly what those lanes need for the *next* pack of the tile. Only the tile's two
//     ends need memory: lane 0 (and 1 at radius 8) loads the cells left of the tile, lane 31
//     (and 30) those right of it, beside the float4 loads;
//   - a tile whose cells or halo reach outside [0, n) reads them through load() and its
//     boundary rule; only the first tile and the last one or two take that path;
//   - the last n % 4 outputs are done one by one by the first threads of block 0;
//   - every byte is used once, so the packs are read with __ldcs and the outputs written with
//     __stcs (ld/st.global.cs, "evict first": no cache keeps lines nobody reads again).
// Why shuffles rather than scalar loads of the neighbours: those loads hit the L1, but a warp's
// scalar load of a neighbour spans 512 bytes, 4 or 5 cache lines, so 4 or 5 wavefronts in the
// L1's pipe (which shared memory and shuffles share), where a shuffle takes one. Per float4 of
// a warp that is about 4 + 4.5 x 2R wavefronts with scalar neighbours (13 at radius 1, 76 at
// radius 8) against 4 + 2R here, plus the halo's share (6.5 and 28).
// Registers (nvcc 13, sm_90): 40 per thread at radius 1, so 6 blocks of 256 per SM (96 KB of
// packs in flight per SM); 71 at radius 8 with 2 packs per lane, 3 blocks per SM.
// The radius is a template parameter: the window is an array in registers, so its size must
// be known when the kernel is compiled. Each instance costs compile time, so the launcher
// builds the two radii the checker times, 1 and kMaxRadius = 8; any other radius takes step
// 1's kernel (given), correct but not tuned.
//
// Check:  ./cudalings check 09_stencil/03_float4
// Stuck:  ./cudalings hint 09_stencil/03_float4

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
            // A tile at an end of the array. A pack past the last whole one (n4 and up) holds
            // its four cells by the rule: tail cells, or cells outside the array. It has no
            // output of its own, but the packs below it read their right neighbours from it.
            // The halo goes through the rule too.
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const unsigned int p = s + 32 * u + lane;
                const long long i = 4 * static_cast<long long>(p);
                v[u] = p < n4
                           ? __ldcs(x4 + p)
                           : make_float4(load(x, i, n, boundary), load(x, i + 1, n, boundary),
                                         load(x, i + 2, n, boundary), load(x, i + 3, n, boundary));
            }
#pragma unroll
            for (int m = 1; m <= R; ++m)
                halo_left[m - 1] =
                    lane < left_lanes(m)
                        ? load(x, 4 * static_cast<long long>(s + lane) - m, n, boundary)
                        : 0.0f;
#pragma unroll
            for (int j = 0; j < R; ++j)
                halo_right[j] = lane + right_lanes(j) > 31
                                    ? load(x, 4 * static_cast<long long>(last) + 4 + j, n, boundary)
                                    : 0.0f;
        }

        // 2. Rotations. left[u][m - 1], in lane l, is cell m of the pack d = left_lanes(m)
        //    lanes down, read from lane (l - d) mod 32: for lanes l >= d that is left cell m
        //    of pack u; lanes l < d receive the cell from lane 32 + l - d, which is left cell
        //    m of the same lane's pack in row u + 1. right[u][j]: the same, d lanes up, and
        //    lanes l > 31 - d receive right cell j of their pack in row u - 1.
        float left[U][R], right[U][R];
#pragma unroll
        for (int u = 0; u < U; ++u) {
#pragma unroll
            for (int m = 1; m <= R; ++m)
                left[u][m - 1] =
                    __shfl_sync(kFullMask, part(v[u], left_part(m)), (lane - left_lanes(m)) & 31);
#pragma unroll
            for (int j = 0; j < R; ++j)
                right[u][j] =
                    __shfl_sync(kFullMask, part(v[u], right_part(j)), (lane + right_lanes(j)) & 31);
        }

        // 3. Each pack's window of 4 + 2R cells (c[k] = x[4p - R + k]), its four sums, one
        //    float4 store. The lanes whose rotation wrapped take their cell from the rotation
        //    of row u - 1 (left) or row u + 1 (right), or from the halo in the first (last)
        //    row. (The rows u - 1 and u + 1 are clamped so that the branch not taken never
        //    names a row outside [0, U).)
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const unsigned int p = s + 32 * u + lane;
            if (p < n4) {
                float c[4 + 2 * R];
#pragma unroll
                for (int m = 1; m <= R; ++m)
                    c[R - m] = lane >= left_lanes(m) ? left[u][m - 1]
                               : u > 0               ? left[u > 0 ? u - 1 : 0][m - 1]
                                                     : halo_left[m - 1];
                c[R] = v[u].x;
                c[R + 1] = v[u].y;
                c[R + 2] = v[u].z;
                c[R + 3] = v[u].w;
#pragma unroll
                for (int j = 0; j < R; ++j)
                    c[R + 4 + j] = lane + right_lanes(j) <= 31 ? right[u][j]
                                   : u < U - 1                 ? right[u < U - 1 ? u + 1 : u][j]
                                                               : halo_right[j];
                __stcs(y4 + p,  // streaming store: evict first
                       make_float4(apply<R>(w, c, 0), apply<R>(w, c, 1), apply<R>(w, c, 2),
                                   apply<R>(w, c, 3)));
            }
        }
    }

    // The tail: outputs 4 * n4 .. n - 1 (at most 3), one per thread of block 0.
    const size_t i = 4 * static_cast<size_t>(n4) + threadIdx.x;
    if (blockIdx.x == 0 && i < n) {
        float acc = 0.0f;
#pragma unroll
        for (int j = -R; j <= R; ++j)
            acc += w.w[R + j] * load(x, static_cast<long long>(i) + j, n, boundary);
        __stcs(y + i, acc);
    }
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
