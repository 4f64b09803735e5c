// expect: CRASH
// reason: host code read device memory in vector_add()
// reason-emulated: in vector_add() at line 13: on a GPU this is a segmentation fault
//
// Computes the sums on the CPU through the device pointers and launches nothing. Under the
// emulator "device" memory is host memory, so this once passed there; on a GPU the first
// dereference is a segmentation fault. Through the judge split the emulator's device memory
// is closed to host code outside kernels: the learner's CRASH, as on a GPU.
#include "vector_add.cuh"

extern "C" cudaError_t vector_add(const float* a, const float* b, float* c, size_t n,
                                  cudaStream_t) {
    for (size_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
    return cudaSuccess;
}
