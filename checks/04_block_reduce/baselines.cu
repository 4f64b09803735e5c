// Library baselines of lesson 04, timed beside step 5 (GPU only): cub::DeviceReduce::Sum, and
// step 5's structure (float4 loads, kCubUnroll in flight, one wave, at most 32 registers) with
// cub::BlockReduce as the block stage, its partials in the step's workspace.
#include <cub/block/block_reduce.cuh>

#include <algorithm>
#include <cstdint>

#include "block_reduce.cuh"
#include "kit.h"
#include "libraries.cuh"

namespace {

constexpr unsigned int kCubBlock = 256;
constexpr unsigned int kCubUnroll = 4;
constexpr unsigned int kCubFinalBlock = 1024;

// At most 32 registers per thread, as in step 5: a full SM of blocks fits.
__global__ void __maxnreg__(32) cub_partials_kernel(const float* __restrict__ x, std::uint64_t n,
                                                    float* __restrict__ partials) {
    using BlockReduce = cub::BlockReduce<float, kCubBlock>;
    __shared__ typename BlockReduce::TempStorage temp;
    const float4* x4 = reinterpret_cast<const float4*>(x);
    const std::uint64_t n4 = n / 4;
    const std::uint64_t tid = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x;
    const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
    float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    std::uint64_t i = tid;
    for (; i + (kCubUnroll - 1) * stride < n4; i += kCubUnroll * stride) {
        float4 v[kCubUnroll];
#pragma unroll
        for (unsigned u = 0; u < kCubUnroll; ++u) v[u] = __ldg(&x4[i + u * stride]);
#pragma unroll
        for (unsigned u = 0; u < kCubUnroll; ++u) {
            acc.x += v[u].x;
            acc.y += v[u].y;
            acc.z += v[u].z;
            acc.w += v[u].w;
        }
    }
    for (; i < n4; i += stride) {
        const float4 v = __ldg(&x4[i]);
        acc.x += v.x;
        acc.y += v.y;
        acc.z += v.z;
        acc.w += v.w;
    }
    float s = (acc.x + acc.y) + (acc.z + acc.w);
    if (4 * n4 + tid < n) s += __ldg(&x[4 * n4 + tid]);
    const float total = BlockReduce(temp).Sum(s);
    if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

__global__ void __launch_bounds__(kCubFinalBlock)
    cub_final_kernel(const float* __restrict__ partials, unsigned count, float* __restrict__ sum) {
    using BlockReduce = cub::BlockReduce<float, kCubFinalBlock>;
    __shared__ typename BlockReduce::TempStorage temp;
    float acc = 0.0f;
    for (unsigned i = threadIdx.x; i < count; i += blockDim.x) acc += partials[i];
    const float total = BlockReduce(temp).Sum(acc);
    if (threadIdx.x == 0) *sum = total;
}

cudaError_t cub_block_reduce_sum(const float* x, std::uint64_t n, float* sum, float* partials,
                                 cudaStream_t s) {
    int device = 0, sms = 0, threads_per_sm = 0;
    cudaError_t err = cudaGetDevice(&device);
    if (err == cudaSuccess)
        err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    if (err == cudaSuccess)
        err =
            cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device);
    if (err != cudaSuccess) return err;
    std::uint64_t grid = static_cast<std::uint64_t>(sms) * (threads_per_sm / kCubBlock);
    std::uint64_t needed = (n / 4 + kCubBlock - 1) / kCubBlock;
    if (needed == 0) needed = 1;
    grid = std::min<std::uint64_t>(std::min<std::uint64_t>(grid, needed), kMaxBlocks);
    cub_partials_kernel<<<static_cast<unsigned>(grid), kCubBlock, 0, s>>>(x, n, partials);
    err = cudaGetLastError();
    if (err != cudaSuccess) return err;
    cub_final_kernel<<<1, kCubFinalBlock, 0, s>>>(partials, static_cast<unsigned>(grid), sum);
    return cudaGetLastError();
}

cudaError_t cub_device_reduce(const float* x, size_t n, float* sum, void*, size_t, cudaStream_t s) {
    return kit::cub_device_sum(x, n, sum, s);
}

cudaError_t cub_block_reduce(const float* x, size_t n, float* sum, void* workspace, size_t,
                             cudaStream_t s) {
    return cub_block_reduce_sum(x, n, sum, static_cast<float*>(workspace), s);
}

}  // namespace

CUDALINGS_BASELINE("device_sum_fast", "cub_device_reduce", cub_device_reduce);
CUDALINGS_BASELINE("device_sum_fast", "cub_block_reduce", cub_block_reduce);
