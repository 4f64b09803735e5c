// step: 05_scan/06_chained_scan.cu
// emulated: PASS
//
// Correct: a chained scan written with libcu++ instead of volatile. The status is two words per
// tile, a plain float (the inclusive prefix) and a flag; the flag is published with
// cuda::atomic_ref<..., thread_scope_device>::store(1, memory_order_release) after the plain
// store of the prefix, and the successor spins on load(memory_order_acquire) before it reads
// the prefix plainly. Release/acquire at device scope orders the two (CUDA C++ memory model:
// the store of the prefix happens before the successor's read), so no __threadfence() is
// needed. Tiles of 1024, one element per thread (1024 threads), tile numbers from a counter.
// (Emulator, 2026-12: MEMORY_ERROR "race", a FALSE POSITIVE: only __threadfence() publishes a
// plain store; the memory order of libcu++ atomics and atomic_thread_fence is ignored.)
#include <cuda/atomic>

#include "scan.cuh"

constexpr unsigned int kBlock = kTile;  // one element per thread
constexpr unsigned int kWarps = kBlock / 32;
static_assert(kWarps == 32, "warp 0 scans one warp total per lane");

using flag_ref = cuda::atomic_ref<unsigned int, cuda::thread_scope_device>;

__device__ float warp_scan(float v) {
    const unsigned int lane = threadIdx.x & 31u;
    for (unsigned int d = 1; d < 32; d <<= 1) {
        const float other = __shfl_up_sync(0xffffffffu, v, d);
        if (lane >= d) v += other;
    }
    return v;
}

__global__ void chained_kernel(const float* in, float* out, size_t n, unsigned int* counter,
                               unsigned int* flags, float* prefixes) {
    __shared__ unsigned int s_tile;
    __shared__ float s_warp[kWarps];
    __shared__ float s_carry;
    if (threadIdx.x == 0) s_tile = atomicAdd(counter, 1u);
    __syncthreads();
    const unsigned int tile = s_tile;
    const unsigned int lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    const size_t i = static_cast<size_t>(tile) * kBlock + threadIdx.x;

    float v = warp_scan(i < n ? in[i] : 0.0f);
    if (lane == 31) s_warp[warp] = v;
    __syncthreads();
    if (warp == 0) s_warp[lane] = warp_scan(s_warp[lane]);  // inclusive warp totals
    __syncthreads();
    if (warp > 0) v += s_warp[warp - 1];

    if (threadIdx.x == 0) {
        float carry = 0.0f;
        if (tile > 0) {
            flag_ref ready(flags[tile - 1]);
            while (ready.load(cuda::memory_order_acquire) == 0u) {
            }
            carry = prefixes[tile - 1];
        }
        prefixes[tile] = carry + s_warp[kWarps - 1];
        flag_ref(flags[tile]).store(1u, cuda::memory_order_release);
        s_carry = carry;
    }
    __syncthreads();
    if (i < n) out[i] = v + s_carry;
}

extern "C" cudaError_t inclusive_scan(const float* in, float* out, size_t n, void* workspace,
                                      size_t workspace_bytes, cudaStream_t stream) {
    const size_t tiles = tile_count(n);
    // [counter | 255 bytes] [flags: tiles x 4 bytes] [prefixes: tiles x 4 bytes]
    const size_t flag_bytes = 256 + tiles * sizeof(unsigned int);
    if (workspace_bytes < flag_bytes + tiles * sizeof(float)) return cudaErrorInvalidValue;
    auto* counter = static_cast<unsigned int*>(workspace);
    auto* flags = reinterpret_cast<unsigned int*>(static_cast<char*>(workspace) + 256);
    auto* prefixes = reinterpret_cast<float*>(static_cast<char*>(workspace) + flag_bytes);
    cudaError_t err = cudaMemsetAsync(workspace, 0, flag_bytes, stream);  // counter and flags
    if (err != cudaSuccess) return err;
    chained_kernel<<<static_cast<unsigned int>(tiles), kBlock, 0, stream>>>(in, out, n, counter,
                                                                            flags, prefixes);
    return cudaGetLastError();
}
