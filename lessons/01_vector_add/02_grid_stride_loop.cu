// Lesson 01, step 2 — a grid-stride loop.
//
// Teaches: decoupling the grid from the problem size. Instead of one thread per element, launch
// just enough blocks to fill the GPU once and let every thread loop over the array in steps of
// the whole grid's width. The same launch is correct for any n, and each thread amortises its
// setup (index arithmetic, block scheduling) over many elements.
//
// What to do:
//   1. In the kernel: a loop that starts at this thread's global index and advances by the
//      total number of threads in the grid (gridDim.x * blockDim.x) while i < n.
//   2. In the launcher: size the grid from the GPU (SM count x blocks per SM), not from n.
// Read "Grid-stride loops" in lessons/01_vector_add/README.md first.
//
// Check:  ./cudalings check 01_vector_add/02_grid_stride_loop
// Stuck:  ./cudalings hint 01_vector_add/02_grid_stride_loop
//
// As given, this file compiles and runs but writes nothing, so every test fails.

#include "vector_add.cuh"

constexpr unsigned int kBlockSize = 256;

__global__ void vector_add_kernel(const float* __restrict__ a, const float* __restrict__ b,
                                  float* __restrict__ c, size_t n) {
    // TODO(1 of 2, ~5 lines): a grid-stride loop.
    //   - stride = gridDim.x * blockDim.x, the number of threads in the whole grid;
    //   - for (i = this thread's global index; i < n; i += stride) c[i] = a[i] + b[i];
    //   Use size_t for i and stride (widen before multiplying): with int, i + stride overflows
    //   once n nears 2^31. Delete the (void) line when you are done.
    (void)a, (void)b, (void)c, (void)n;
}

extern "C" cudaError_t vector_add(const float* a, const float* b, float* c, size_t n,
                                  cudaStream_t stream) {
    // TODO(2 of 2, ~10 lines): size the grid from the hardware instead of this placeholder.
    //   - cudaGetDevice(&device), then cudaDeviceGetAttribute(&num_sms,
    //     cudaDevAttrMultiProcessorCount, device) and the same with
    //     cudaDevAttrMaxThreadsPerMultiProcessor; return any error these calls give;
    //   - one full wave = num_sms * (threads_per_sm / kBlockSize) blocks;
    //   - but no more blocks than n needs: the smaller of that and ceil(n / kBlockSize).
    //   The loop is correct for any grid, so a bad grid here costs speed, not correctness.
    size_t grid = 32;  // placeholder: a guess that ignores the GPU
    vector_add_kernel<<<static_cast<unsigned int>(grid), kBlockSize, 0, stream>>>(a, b, c, n);
    return cudaGetLastError();
}
