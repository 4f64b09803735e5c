// host_example.cu — the whole life of a CUDA program, on one page.
//
// The exercises in this lesson only write the GPU side: the checker allocates, copies and
// checks for you. This file shows what the checker does around your function, so that you can
// write a complete program yourself:
//
//   1. make input on the host (CPU memory)
//   2. cudaMalloc   — allocate device (GPU) memory
//   3. cudaMemcpy   — copy the inputs host -> device
//   4. launch       — kernel<<<grid, block>>>(...), then check the launch
//   5. cudaMemcpy   — copy the result device -> host (this also waits for the kernel)
//   6. check the result on the CPU, free everything
//
// Build and run it from the repository root:
//
//   nvcc -o host_example lessons/01_vector_add/host_example.cu && ./host_example
//
// Exit code: 0 when the result is right, 1 on a CUDA error or a wrong result, 77 when this
// machine has no usable GPU (77 is the usual "skipped" code for test runners).

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "../common/cuda_check.cuh"

// One thread per element: thread i computes c[i]. The grid is rounded up to whole blocks, so
// the last block can hang over the end of the arrays: the `if` keeps those threads out.
__global__ void add_kernel(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;  // int is enough: n is small here
    if (i < n) c[i] = a[i] + b[i];
}

int main() {
    // No GPU (or no driver) is not a bug in this program: say so and exit with "skipped".
    int device_count = 0;
    cudaError_t err = cudaGetDeviceCount(&device_count);
    if (err != cudaSuccess || device_count == 0) {
        std::printf("host_example: no CUDA GPU available (%s), skipping.\n",
                    err != cudaSuccess ? cudaGetErrorString(err) : "0 devices found");
        return 77;
    }
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("GPU 0: %s, %d SMs\n", prop.name, prop.multiProcessorCount);

    // 1. Inputs on the host. A size that is not a multiple of the block size, on purpose.
    const int n = (1 << 20) + 3;
    const size_t bytes = n * sizeof(float);
    std::vector<float> h_a(n), h_b(n), h_c(n);
    for (int i = 0; i < n; ++i) {
        h_a[i] = 0.5f * i;
        h_b[i] = 1000.0f - i;
    }

    // 2. Device memory. These pointers are GPU addresses: the CPU must never dereference them.
    float *d_a = nullptr, *d_b = nullptr, *d_c = nullptr;
    CUDA_CHECK(cudaMalloc(&d_a, bytes));
    CUDA_CHECK(cudaMalloc(&d_b, bytes));
    CUDA_CHECK(cudaMalloc(&d_c, bytes));

    // 3. Host -> device.
    CUDA_CHECK(cudaMemcpy(d_a, h_a.data(), bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_b, h_b.data(), bytes, cudaMemcpyHostToDevice));

    // 4. Launch: enough 256-thread blocks to cover n, rounded up.
    const int block = 256;
    const int grid = (n + block - 1) / block;
    add_kernel<<<grid, block>>>(d_a, d_b, d_c, n);
    // A launch returns nothing. Errors in the launch itself (a grid or block that is too big,
    // say) are picked up by cudaGetLastError(); errors while the kernel runs (a bad address)
    // surface at the next call that waits for the GPU, so we synchronize and check that too.
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    std::printf("launched add_kernel<<<%d, %d>>> for n = %d\n", grid, block, n);

    // 5. Device -> host. cudaMemcpy waits for earlier work on the GPU before it copies.
    CUDA_CHECK(cudaMemcpy(h_c.data(), d_c, bytes, cudaMemcpyDeviceToHost));

    // 6. Check on the CPU. One float addition is correctly rounded on both sides (IEEE 754),
    //    so the GPU's answer must be bit-for-bit the CPU's: compare with ==, no tolerance.
    int wrong = 0;
    for (int i = 0; i < n; ++i) {
        if (h_c[i] != h_a[i] + h_b[i]) {
            if (wrong < 5) {
                std::printf("  c[%d] = %g, expected %g\n", i, h_c[i], h_a[i] + h_b[i]);
            }
            ++wrong;
        }
    }

    CUDA_CHECK(cudaFree(d_a));
    CUDA_CHECK(cudaFree(d_b));
    CUDA_CHECK(cudaFree(d_c));

    if (wrong != 0) {
        std::printf("FAILED: %d of %d elements wrong\n", wrong, n);
        return EXIT_FAILURE;
    }
    std::printf("OK: all %d elements of c = a + b are correct\n", n);
    return EXIT_SUCCESS;
}
