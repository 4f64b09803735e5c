// Lesson 01, step 2 — a grid-stride loop (solution).
//
// Teaches: decoupling the grid from the problem size. Instead of one thread per element, launch
// just enough blocks to fill the GPU once and let every thread loop over the array in steps of
// the whole grid's width. The same launch is correct for any n, and each thread amortises its
// setup (index arithmetic, block scheduling) over many elements.
//
// Check:  ./cudalings check 01_vector_add/02_grid_stride_loop
// Stuck:  ./cudalings hint 01_vector_add/02_grid_stride_loop

#include "vector_add.cuh"

constexpr unsigned int kBlockSize = 256;

__global__ void vector_add_kernel(const float* __restrict__ a, const float* __restrict__ b,
                                  float* __restrict__ c, size_t n) {
    // size_t for the index and the stride: i + stride must not overflow. With int, a thread
    // whose i is just below n = 2^31 would add the stride, pass INT_MAX and wrap to a negative
    // index (undefined behaviour, in practice a wild write). 64-bit makes that impossible.
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    // Thread t handles t, t + stride, t + 2*stride, ... In every pass the 32 threads of a warp
    // touch 32 consecutive floats, so each pass is as well coalesced as step 1.
    for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += stride) {
        c[i] = a[i] + b[i];
    }
}

extern "C" cudaError_t vector_add(const float* a, const float* b, float* c, size_t n,
                                  cudaStream_t stream) {
    // Size the grid from the hardware, not from n: the number of SMs times the number of
    // 256-thread blocks one SM can hold at once. That is one full "wave": every SM is filled
    // to its thread limit (2048 threads = 8 blocks on an H100/H200) so it has as many loads in
    // flight as it can, and no block waits for a second wave that would leave SMs idle at the
    // end. This kernel uses few registers, so the thread limit is the one that binds.
    //
    // cudaDeviceGetAttribute is a cheap host-side lookup (unlike cudaGetDeviceProperties, which
    // fills a large struct and can be slow), so asking on every call costs little
    // and stays right if the caller switches devices. A library might cache it per device.
    int device = 0;
    cudaError_t err = cudaGetDevice(&device);
    if (err != cudaSuccess) return err;
    int num_sms = 0;
    err = cudaDeviceGetAttribute(&num_sms, cudaDevAttrMultiProcessorCount, device);
    if (err != cudaSuccess) return err;
    int threads_per_sm = 0;
    err = cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device);
    if (err != cudaSuccess) return err;

    const size_t full_gpu = static_cast<size_t>(num_sms) * (threads_per_sm / kBlockSize);
    // No point in launching blocks that would have no element at all (small n).
    const size_t needed = (n + kBlockSize - 1) / kBlockSize;
    const size_t grid = needed < full_gpu ? needed : full_gpu;

    vector_add_kernel<<<static_cast<unsigned int>(grid), kBlockSize, 0, stream>>>(a, b, c, n);
    return cudaGetLastError();
}
