// Baselines of lesson 03, timed beside its steps (GPU only): cub::DeviceSegmentedReduce::Sum on
// step 1's segments, and for every step the same layout as its reference (grid, loads in flight,
// lanes) with one difference: values move between lanes through a shared-memory slot per thread
// instead of shuffles. Within a warp the exchange needs no block barrier, only __syncwarp()
// between a write and the reads of it (and before a slot is written again). Plus "plain": step 1
// with the simplest layout (one float per lane, a warp per segment).
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <cub/device/device_segmented_reduce.cuh>

#include <cstdint>

#include "kit.h"
#include "warp_shuffle.cuh"

namespace {

// Segment s of step 1 is [32 s, min(32 s + 32, n)): iterators, so no offset array is read.
struct SegmentBegin {
    __host__ __device__ std::int64_t operator()(std::int64_t s) const { return 32 * s; }
};
struct SegmentEnd {
    std::int64_t n;
    __host__ __device__ std::int64_t operator()(std::int64_t s) const {
        return 32 * s + 32 < n ? 32 * s + 32 : n;
    }
};

cudaError_t cub_segment_sum(const float* in, float* sums, size_t n, cudaStream_t s) {
    const auto first = thrust::make_counting_iterator<std::int64_t>(0);
    const auto begins = thrust::make_transform_iterator(first, SegmentBegin{});
    const auto ends =
        thrust::make_transform_iterator(first, SegmentEnd{static_cast<std::int64_t>(n)});
    const auto segments = static_cast<std::int64_t>((n + 31) / 32);
    size_t bytes = 0;
    const cudaError_t e =
        cub::DeviceSegmentedReduce::Sum(nullptr, bytes, in, sums, segments, begins, ends, s);
    if (e != cudaSuccess) return e;
    return cub::DeviceSegmentedReduce::Sum(kit::library_scratch(bytes), bytes, in, sums, segments,
                                           begins, ends, s);
}

constexpr unsigned kBlock = 256;
constexpr unsigned kWarps = kBlock / 32;
constexpr int kMaxRegisters = 32;  // a full SM of 256-thread blocks fits
constexpr int kUnroll = 4;         // steps 2-5 and "plain": 32-float chunks per warp in flight

// The sum of v over each aligned group of kGroup lanes, returned to every lane of the group,
// through the block's slots `buf` (t = threadIdx.x): a tree, then the total read from the
// group's first slot.
template <unsigned kGroup>
__device__ __forceinline__ float smem_group_sum(float* buf, unsigned t, float v) {
    buf[t] = v;
    __syncwarp();
#pragma unroll
    for (unsigned d = kGroup / 2; d > 0; d /= 2) {
        if (t % kGroup < d) buf[t] += buf[t + d];
        __syncwarp();
    }
    const float total = buf[t - t % kGroup];
    __syncwarp();  // everyone has read before the slots are written again
    return total;
}

// Inclusive scan over the warp through the slots (Hillis-Steele).
template <typename T>
__device__ __forceinline__ T smem_warp_scan(T* buf, unsigned t, T v) {
    const unsigned lane = t % 32;
    buf[t] = v;
    __syncwarp();
#pragma unroll
    for (unsigned d = 1; d < 32; d *= 2) {
        const T below = lane >= d ? buf[t - d] : T(0);
        __syncwarp();  // every read of this round before any write
        v += below;
        buf[t] = v;
        __syncwarp();
    }
    return v;
}

// Grid-stride over 32-float chunks (one float per lane), kUnroll chunks loaded before any is
// used, as in the references of steps 2 to 5: body(x, chunk, lane), element chunk * 32 + lane.
template <typename Body>
__device__ __forceinline__ void for_each_chunk(const float* __restrict__ in, std::uint64_t n,
                                               Body body) {
    const unsigned lane = threadIdx.x % 32;
    const std::uint64_t warp = (blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x) / 32;
    const std::uint64_t num_warps = std::uint64_t{gridDim.x} * kWarps;
    const std::uint64_t chunks = (n + 31) / 32;
    for (std::uint64_t c = warp; c < chunks; c += kUnroll * num_warps) {
        float x[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
            const std::uint64_t i = (c + u * num_warps) * 32 + lane;
            x[u] = i < n ? in[i] : 0.0f;
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) body(x[u], c + u * num_warps, lane);
    }
}

// Step 1's reference (a warp per tile of 32 segments, 8 float4 loads per lane in flight, one
// block per 8 tiles) with the 8-lane trees in shared memory.
__global__ void __launch_bounds__(kBlock)
    smem_sum_kernel(const float* __restrict__ in, float* __restrict__ sums, std::uint64_t n) {
    constexpr int kLoads = 8;
    constexpr std::uint64_t kTile = 1024;
    __shared__ float buf[kBlock];
    const unsigned t = threadIdx.x, lane = t % 32;
    const std::uint64_t tile = (blockIdx.x * std::uint64_t{blockDim.x} + t) / 32;
    if (tile * kTile >= n) return;
    const std::uint64_t first = tile * (kTile / 4) + lane;
    const float4* in4 = reinterpret_cast<const float4*>(in);
    float4 v[kLoads];
    const bool whole = (tile + 1) * kTile <= n;
#pragma unroll
    for (int k = 0; k < kLoads; ++k) {
        const std::uint64_t p = first + k * 32, i = 4 * p;
        v[k] = whole || i + 3 < n ? in4[p]
                                  : make_float4(i < n ? in[i] : 0.0f, i + 1 < n ? in[i + 1] : 0.0f,
                                                i + 2 < n ? in[i + 2] : 0.0f, 0.0f);
    }
    const std::uint64_t segments = (n + 31) / 32;
#pragma unroll
    for (int k = 0; k < kLoads; ++k) {
        const float s = smem_group_sum<8>(buf, t, (v[k].x + v[k].y) + (v[k].z + v[k].w));
        const std::uint64_t segment = tile * 32 + 4 * k + lane / 8;
        if (lane % 8 == 0 && segment < segments) sums[segment] = s;
    }
}

// One float per lane, a warp per segment, 5 shuffles (the layout step 1 improves on).
__global__ void __maxnreg__(kMaxRegisters)
    plain_sum_kernel(const float* __restrict__ in, float* __restrict__ sums, std::uint64_t n) {
    for_each_chunk(in, n, [&](float x, std::uint64_t segment, unsigned lane) {
#pragma unroll
        for (int d = 16; d > 0; d /= 2) x += __shfl_down_sync(kFullMask, x, d);
        if (lane == 0 && segment * 32 < n) sums[segment] = x;
    });
}

__global__ void __maxnreg__(kMaxRegisters)
    smem_normalize_kernel(const float* __restrict__ in, float* __restrict__ out, std::uint64_t n) {
    __shared__ float buf[kBlock];
    for_each_chunk(in, n, [&](float x, std::uint64_t segment, unsigned lane) {
        const float total = smem_group_sum<32>(buf, threadIdx.x, x);
        const std::uint64_t i = segment * 32 + lane;
        if (i < n) out[i] = x / total;
    });
}

__global__ void __maxnreg__(kMaxRegisters)
    smem_scan_kernel(const float* __restrict__ in, float* __restrict__ out, std::uint64_t n) {
    __shared__ float buf[kBlock];
    for_each_chunk(in, n, [&](float x, std::uint64_t segment, unsigned lane) {
        const float prefix = smem_warp_scan(buf, threadIdx.x, x);
        const std::uint64_t i = segment * 32 + lane;
        if (i < n) out[i] = prefix;
    });
}

// The ballot and the popcounts become a scan of 0/1 flags in shared memory.
__global__ void __maxnreg__(kMaxRegisters)
    smem_select_kernel(const float* __restrict__ in, unsigned* __restrict__ ranks,
                       unsigned* __restrict__ counts, std::uint64_t n, float threshold) {
    __shared__ unsigned buf[kBlock];
    for_each_chunk(in, n, [&](float x, std::uint64_t segment, unsigned lane) {
        const std::uint64_t i = segment * 32 + lane;
        const unsigned keep = i < n && x > threshold ? 1u : 0u;
        const unsigned inclusive = smem_warp_scan(buf, threadIdx.x, keep);
        if (i < n) ranks[i] = inclusive - keep;
        if (lane == 31 && segment * 32 < n) counts[segment] = inclusive;
    });
}

template <unsigned kWidth>
__global__ void __maxnreg__(kMaxRegisters)
    smem_center_kernel(const float* __restrict__ in, float* __restrict__ out, std::uint64_t n) {
    __shared__ float buf[kBlock];
    for_each_chunk(in, n, [&](float x, std::uint64_t chunk, unsigned lane) {
        const float sum = smem_group_sum<kWidth>(buf, threadIdx.x, x);
        const std::uint64_t i = chunk * 32 + lane;
        if (i < n) {
            const std::uint64_t left = n - (i - lane % kWidth);
            const float m = static_cast<float>(left < kWidth ? left : kWidth);
            out[i] = x - sum / m;
        }
    });
}

// One wave of kBlock-thread blocks, no more than `warps` warps' worth.
unsigned wave(std::uint64_t warps) {
    unsigned grid = 0;
    DEV_CHECK(one_wave_grid(kBlock, (warps + kWarps - 1) / kWarps, &grid));
    return grid;
}

cudaError_t smem_segment_sum(const float* in, float* sums, size_t n, cudaStream_t s) {
    const std::uint64_t tiles = (n + 1023) / 1024;
    smem_sum_kernel<<<static_cast<unsigned>((tiles + kWarps - 1) / kWarps), kBlock, 0, s>>>(
        in, sums, n);
    return cudaGetLastError();
}

cudaError_t plain_segment_sum(const float* in, float* sums, size_t n, cudaStream_t s) {
    plain_sum_kernel<<<wave((n + 31) / 32), kBlock, 0, s>>>(in, sums, n);
    return cudaGetLastError();
}

cudaError_t smem_segment_normalize(const float* in, float* out, size_t n, cudaStream_t s) {
    smem_normalize_kernel<<<wave((n + 31) / 32), kBlock, 0, s>>>(in, out, n);
    return cudaGetLastError();
}

cudaError_t smem_segment_scan(const float* in, float* out, size_t n, cudaStream_t s) {
    smem_scan_kernel<<<wave((n + 31) / 32), kBlock, 0, s>>>(in, out, n);
    return cudaGetLastError();
}

cudaError_t smem_segment_select_rank(const float* in, unsigned* ranks, unsigned* counts, size_t n,
                                     float threshold, cudaStream_t s) {
    smem_select_kernel<<<wave((n + 31) / 32), kBlock, 0, s>>>(in, ranks, counts, n, threshold);
    return cudaGetLastError();
}

cudaError_t smem_segment_center(const float* in, float* out, size_t n, int width, cudaStream_t s) {
    const unsigned grid = wave((n + 31) / 32);
    switch (width) {
        case 8:
            smem_center_kernel<8><<<grid, kBlock, 0, s>>>(in, out, n);
            break;
        case 16:
            smem_center_kernel<16><<<grid, kBlock, 0, s>>>(in, out, n);
            break;
        default:
            return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}
}  // namespace

CUDALINGS_BASELINE("segment_sum", "cub", cub_segment_sum);
CUDALINGS_BASELINE("segment_sum", "plain", plain_segment_sum);
CUDALINGS_BASELINE("segment_sum", "smem", smem_segment_sum);
CUDALINGS_BASELINE("segment_normalize", "smem", smem_segment_normalize);
CUDALINGS_BASELINE("segment_scan", "smem", smem_segment_scan);
CUDALINGS_BASELINE("segment_select_rank", "smem", smem_segment_select_rank);
CUDALINGS_BASELINE("segment_center", "smem", smem_segment_center);
