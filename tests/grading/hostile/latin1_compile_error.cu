// expect: COMPILE_ERROR
// reason: undeclared_scale
//
// An honest mistake, written by a student whose editor saves Latin-1: a typo on a line whose
// string holds "caf\xe9" as one byte 0xE9 (not UTF-8). The compiler quotes the line, byte and all;
// before the fix nlohmann's strict dump threw on it and the grading worker died: no verdict,
// no Gradescope file, the batch exited 3. Every captured text is now valid UTF-8 (U+FFFD for
// that byte): COMPILE_ERROR, with the compiler's message.
#include <cstdio>

#include "vector_add.cuh"

__global__ void add(const float* a, const float* b, float* c, size_t n) {
    size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

extern "C" cudaError_t vector_add(const float* a, const float* b, float* c, size_t n,
                                  cudaStream_t stream) {
    float scale = undeclared_scale; const char* note = "café au lait";  // le café
    (void)scale;
    (void)note;
    add<<<static_cast<unsigned int>((n + 255) / 256), 256, 0, stream>>>(a, b, c, n);
    return cudaGetLastError();
}
