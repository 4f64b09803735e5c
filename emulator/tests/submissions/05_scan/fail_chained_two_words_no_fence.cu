// step: 05_scan/06_chained_scan.cu
// emulated: MEMORY_ERROR
// reason: race
//
// Buggy: a chained scan whose status is two words, a plain float prefix and a volatile flag,
// written one after the other with no __threadfence() between them. volatile keeps the poll a
// real load, but it does not order the two stores for another SM: the successor can see the
// flag and read the old prefix (the NaN the workspace held). Almost always right on a GPU; the
// plain read of the prefix races with the predecessor's plain store.
#include "scan.cuh"

constexpr unsigned int kBlock = kTile;  // one element per thread
constexpr unsigned int kWarps = kBlock / 32;
static_assert(kWarps == 32, "warp 0 scans one warp total per lane");

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
            const volatile unsigned int* ready = &flags[tile - 1];
            while (*ready == 0u) {
            }
            carry = prefixes[tile - 1];
        }
        prefixes[tile] = carry + s_warp[kWarps - 1];
        *reinterpret_cast<volatile unsigned int*>(&flags[tile]) = 1u;  // BUG: no __threadfence()
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
