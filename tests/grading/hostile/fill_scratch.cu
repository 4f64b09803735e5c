// expect: PASS
//
// Writes into its scratch space ($TMPDIR, else /tmp) until the disk says no, up to 1 GiB. In the
// sandbox that space is a tmpfs of --scratch-mb (the test gives 64 MiB): the write stops there,
// the file is removed, and the step passes. If 1 GiB went through, nothing limited it: a - b
// (WRONG).
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "vector_add.cuh"

namespace {

bool fill() {
    const char* dir = getenv("TMPDIR");
    std::string path = std::string(dir && *dir ? dir : "/tmp") + "/cudalings-fill";
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) return false;
    std::vector<char> chunk(1 << 20, 'x');
    std::size_t written = 0;
    while (written < (std::size_t{1} << 30)) {
        ssize_t got = write(fd, chunk.data(), chunk.size());
        if (got <= 0) break;
        written += static_cast<std::size_t>(got);
    }
    close(fd);
    unlink(path.c_str());
    return written >= (std::size_t{1} << 30);
}

}  // namespace

__global__ void add(const float* a, const float* b, float* c, size_t n, float sign) {
    size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + sign * b[i];
}

extern "C" cudaError_t vector_add(const float* a, const float* b, float* c, size_t n,
                                  cudaStream_t stream) {
    static bool once = false, unlimited = false;
    if (!once) {
        once = true;
        unlimited = fill();
    }
    add<<<static_cast<unsigned int>((n + 255) / 256), 256, 0, stream>>>(a, b, c, n,
                                                                         unlimited ? -1.0f : 1.0f);
    return cudaGetLastError();
}
