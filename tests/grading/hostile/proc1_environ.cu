// expect: PASS
//
// Hunts for the grader's environment through the sandbox's PID 1: the test sets a token in the
// grader's environment (CUDALINGS_HOSTILE_GRADER_TOKEN). Before the fix, bwrap's own init was
// PID 1, started with the grader's whole environment and a command line of every bind path, and
// /proc/1/environ, /proc/1/mem and /proc/1/fd were open to this code. Now PID 1 is the
// sandbox's init, not dumpable: those files cannot be opened, and no process it can see has
// anything of the grader's. Anything found is written to stderr and the step aborts (CRASH,
// with the text in the result, where the test looks for the token); nothing found: PASS.
//
// It looks only when its PID is tiny (the first processes of a fresh PID namespace).
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "vector_add.cuh"

namespace {

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

void look() {
    std::string found;
    for (const char* path : {"/proc/1/environ", "/proc/1/mem", "/proc/1/fd/0", "/proc/1/fd/1",
                             "/proc/1/fd/2", "/proc/1/maps"}) {
        int fd = ::open(path, O_RDONLY);
        if (fd >= 0) {
            found += std::string("opened ") + path + "\n";
            ::close(fd);
        }
    }
    DIR* proc = ::opendir("/proc");
    while (dirent* e = proc ? ::readdir(proc) : nullptr) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        const std::string base = std::string("/proc/") + e->d_name;
        for (const char* file : {"/environ", "/cmdline"}) {
            std::string text = slurp(base + file);
            if (text.find("GRADER_TOKEN") != std::string::npos ||
                text.find("--ro-bind") != std::string::npos)
                found += base + file + ": " + text + "\n";
        }
    }
    if (proc) ::closedir(proc);
    if (!found.empty()) {
        (void)!::write(2, found.data(), found.size());
        std::abort();
    }
}

}  // namespace

__global__ void add(const float* a, const float* b, float* c, size_t n) {
    size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

extern "C" cudaError_t vector_add(const float* a, const float* b, float* c, size_t n,
                                  cudaStream_t stream) {
    static bool once = false;
    if (!once && ::getpid() < 100) {
        once = true;
        look();
    }
    add<<<static_cast<unsigned int>((n + 255) / 256), 256, 0, stream>>>(a, b, c, n);
    return cudaGetLastError();
}
