// expect: PASS
//
// Hunts for the grader's secret seed: CUDALINGS_SEED in the environment of every process it can
// see (its own included), and the file named after --seed-file on their command lines. Knowing
// the secret, a student could compute the inputs of any file before submitting it. In the
// sandbox it sees only itself, with a clean environment: nothing found, PASS; a find computes
// a - b (WRONG).
#include <dirent.h>

#include <fstream>
#include <sstream>
#include <string>

#include "vector_add.cuh"

namespace {

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

bool found_secret() {
    DIR* proc = opendir("/proc");
    if (!proc) return false;
    bool found = false;
    while (dirent* e = readdir(proc)) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        std::string base = std::string("/proc/") + e->d_name;
        if (slurp(base + "/environ").find("CUDALINGS_SEED") != std::string::npos) found = true;
        std::string cmdline = slurp(base + "/cmdline");
        std::string flag = std::string("--seed-file") + '\0';
        auto at = cmdline.find(flag);
        if (at != std::string::npos) {
            std::string file = cmdline.substr(at + flag.size());
            file = file.substr(0, file.find('\0'));
            if (!slurp(file).empty()) found = true;
        }
    }
    closedir(proc);
    return found;
}

}  // namespace

__global__ void add(const float* a, const float* b, float* c, size_t n, float sign) {
    size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + sign * b[i];
}

extern "C" cudaError_t vector_add(const float* a, const float* b, float* c, size_t n,
                                  cudaStream_t stream) {
    static bool once = false, found = false;
    if (!once) {
        once = true;
        found = found_secret();
    }
    add<<<static_cast<unsigned int>((n + 255) / 256), 256, 0, stream>>>(a, b, c, n,
                                                                         found ? -1.0f : 1.0f);
    return cudaGetLastError();
}
