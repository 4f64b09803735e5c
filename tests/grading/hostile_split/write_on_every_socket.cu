// expect: CRASH
// in-process: CRASH
// reason: not one of its messages
//
// Speaks on every channel it holds. Every descriptor of its process that is a socket or a pipe
// gets the lines a runner writes for a passing case ("case: PASS", "done"), then 4,096 zero
// bytes, then 7 more; nothing is computed.
//
// In the runner's own process the runner's result channel is among them: the lines carry no
// valid tag and the checker ignores them as forged, but the zeros run into the runner's own next
// line, which is then lost too, and the runner ends without a result for the case: CRASH
// ("exit code 0", 2 cores, 2026-12-07). Through the judge split the one socket is the learner's
// process's own, to its judge: a short write is not a whole message, and the judge ends the process
// for it instead of waiting for it: CRASH, with a reason that says what it wrote. (Before, the
// judge waited for the process to end while the process waited for the judge's next word, until
// the case's time limit: TIMEOUT, "host code did not return", after 100.8 s on 2 cores.)
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "vector_add.cuh"

extern "C" cudaError_t vector_add(const float*, const float*, float*, size_t, cudaStream_t) {
    std::vector<int> channels;
    if (DIR* fds = opendir("/proc/self/fd")) {
        const int listing = dirfd(fds);
        while (dirent* e = readdir(fds)) {
            const int fd = std::atoi(e->d_name);
            struct stat st {};
            if (fd < 3 || fd == listing || fstat(fd, &st) != 0) continue;
            if (S_ISSOCK(st.st_mode) || S_ISFIFO(st.st_mode)) channels.push_back(fd);
        }
        closedir(fds);
    }
    const std::string lines = "case\t{\"event\":\"case\",\"verdict\":\"PASS\"}\ndone\n";
    std::vector<char> zeros(4096, 0);
    for (const int fd : channels) {
        (void)!write(fd, lines.data(), lines.size());
        (void)!write(fd, zeros.data(), zeros.size());
        (void)!write(fd, zeros.data(), 7);
    }
    return cudaSuccess;
}
