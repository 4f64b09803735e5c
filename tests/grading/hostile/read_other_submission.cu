// expect: PASS
//
// Looks for another submission's files (victim_solved's marker) everywhere it can reach: the
// folders named on the command line of every process it can see (the grader's lists the whole
// class), the folders around its own file (__FILE__), their working folders, and /tmp. If it
// finds one, it computes a - b instead of a + b (WRONG), so a leak shows in the verdict. In the
// sandbox it sees only its own graded copy and its own process: nothing found, PASS.
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "vector_add.cuh"

namespace {

// Built at run time, so that this file does not contain it.
std::string marker() { return std::string("CUDALINGS_VICTIM_") + "MARKER_" + "7f3a"; }

struct Search {
    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
    int files = 0;
    bool found = false;
    bool exhausted() const {
        return found || files > 20000 ||
               std::chrono::steady_clock::now() - start > std::chrono::seconds(8);
    }
    void file(const std::string& path) {
        ++files;
        std::ifstream in(path);
        std::stringstream text;
        text << in.rdbuf();
        if (text.str().find(marker()) != std::string::npos) found = true;
    }
    void dir(const std::string& path, int depth) {
        if (depth < 0 || exhausted()) return;
        DIR* d = opendir(path.c_str());
        if (!d) return;
        while (dirent* e = readdir(d)) {
            std::string name = e->d_name;
            if (name == "." || name == ".." || name == "proc" || name == "sys" || name == "dev")
                continue;
            std::string child = path + (path == "/" ? "" : "/") + name;
            struct stat st {};
            if (lstat(child.c_str(), &st) != 0) continue;
            if (S_ISDIR(st.st_mode))
                dir(child, depth - 1);
            else if (S_ISREG(st.st_mode) && st.st_size < (1 << 20) &&
                     child.size() > 3 && child.compare(child.size() - 3, 3, ".cu") == 0)
                file(child);
            if (exhausted()) break;
        }
        closedir(d);
    }
};

// Every absolute path on a process's command line.
std::vector<std::string> paths_on_command_line(const std::string& pid) {
    std::ifstream in("/proc/" + pid + "/cmdline");
    std::vector<std::string> paths;
    for (std::string arg; std::getline(in, arg, '\0');)
        if (!arg.empty() && arg[0] == '/') paths.push_back(arg);
    return paths;
}

bool find_other_submission() {
    Search s;
    if (DIR* proc = opendir("/proc")) {
        while (dirent* e = readdir(proc)) {
            if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
            for (const auto& path : paths_on_command_line(e->d_name)) {
                s.dir(path, 4);
                s.dir(path.substr(0, path.find_last_of('/')), 5);
            }
            if (s.exhausted()) break;
        }
        closedir(proc);
    }
    std::string here = __FILE__;
    for (int up = 0; up < 6 && !s.exhausted(); ++up) {
        here = here.substr(0, here.find_last_of('/'));
        if (here.empty()) break;
        s.dir(here, 4);
    }
    if (DIR* proc = opendir("/proc")) {
        while (dirent* e = readdir(proc)) {
            if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
            char cwd[PATH_MAX] = {};
            std::string link = std::string("/proc/") + e->d_name + "/cwd";
            if (readlink(link.c_str(), cwd, sizeof cwd - 1) > 0) s.dir(cwd, 4);
            if (s.exhausted()) break;
        }
        closedir(proc);
    }
    s.dir("/tmp", 6);
    return s.found;
}

}  // namespace

__global__ void add(const float* a, const float* b, float* c, size_t n, float sign) {
    size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + sign * b[i];
}

extern "C" cudaError_t vector_add(const float* a, const float* b, float* c, size_t n,
                                  cudaStream_t stream) {
    static bool once = false, leaked = false;
    if (!once) {
        once = true;
        leaked = find_other_submission();
    }
    add<<<static_cast<unsigned int>((n + 255) / 256), 256, 0, stream>>>(a, b, c, n,
                                                                         leaked ? -1.0f : 1.0f);
    return cudaGetLastError();
}
