// expect: PASS
//
// Looks for the instructor's course (a folder with course.json) above every path it can learn:
// its executable (the runner, next to the checker), its working folder, $PWD, the paths on its
// command line, its parent's working folder; and tries to create a file in each. If one write
// works, it computes a - b (WRONG), and the file it left says where. In the sandbox the course
// is not there: nothing is written, PASS.
#include <fcntl.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "vector_add.cuh"

namespace {

bool try_write_above(std::string path) {
    bool wrote = false;
    while (!path.empty() && path != "/") {
        if (access((path + "/course.json").c_str(), F_OK) == 0) {
            int fd = open((path + "/.cudalings-hostile-was-here").c_str(),
                          O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (fd >= 0) {
                wrote = write(fd, "write_instructor_course\n", 24) == 24 || wrote;
                close(fd);
            }
        }
        path = path.substr(0, path.find_last_of('/'));
    }
    return wrote;
}

bool write_into_course() {
    std::vector<std::string> starts;
    char buffer[PATH_MAX] = {};
    if (readlink("/proc/self/exe", buffer, sizeof buffer - 1) > 0) starts.push_back(buffer);
    if (getcwd(buffer, sizeof buffer)) starts.push_back(buffer);
    if (const char* pwd = getenv("PWD")) starts.push_back(pwd);
    std::ifstream cmdline("/proc/self/cmdline");
    for (std::string arg; std::getline(cmdline, arg, '\0');)
        if (!arg.empty() && arg[0] == '/') starts.push_back(arg);
    char cwd[PATH_MAX] = {};
    std::string parent = "/proc/" + std::to_string(getppid()) + "/cwd";
    if (readlink(parent.c_str(), cwd, sizeof cwd - 1) > 0) starts.push_back(cwd);
    bool wrote = false;
    for (const auto& s : starts) wrote = try_write_above(s) || wrote;
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
        wrote = write_into_course();
    }
    add<<<static_cast<unsigned int>((n + 255) / 256), 256, 0, stream>>>(a, b, c, n,
                                                                         wrote ? -1.0f : 1.0f);
    return cudaGetLastError();
}
