// expect: PASS
//
// Tries to rewrite its own source (to pass a later round) and to leave a file beside it. The
// graded copy is read-only in the sandbox: both fail and the step passes. If either works, it
// computes a - b (WRONG).
#include <fcntl.h>
#include <unistd.h>

#include <string>

#include "vector_add.cuh"

namespace {

bool write_beside_me() {
    bool wrote = false;
    int fd = open(__FILE__, O_WRONLY | O_APPEND);
    if (fd >= 0) {
        wrote = write(fd, "\n// rewritten\n", 14) == 14;
        close(fd);
    }
    std::string dir = __FILE__;
    dir = dir.substr(0, dir.find_last_of('/'));
    fd = open((dir + "/.cudalings-hostile-was-here").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
        wrote = true;
        close(fd);
    }
    return wrote;
}

}  // namespace

__global__ void add(const float* a, const float* b, float* c, size_t n, float sign) {
    size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + sign * b[i];
}

extern "C" cudaError_t vector_add(const float* a, const float* b, float* c, size_t n,
                                  cudaStream_t stream) {
    static bool once = false, wrote = false;
    if (!once) {
        once = true;
        wrote = write_beside_me();
    }
    add<<<static_cast<unsigned int>((n + 255) / 256), 256, 0, stream>>>(a, b, c, n,
                                                                         wrote ? -1.0f : 1.0f);
    return cudaGetLastError();
}
