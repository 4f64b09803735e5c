// Steps of lesson 01 that attack their judge, for the test of the learner's process. Each is
// built into its own object with one of these defined:
//   HOSTILE_CONSTRUCTOR_EXIT  exits while being loaded (a constructor)
//   HOSTILE_REACH_JUDGE       computes nothing; tries to stop, trace, read and signal its parent
//                             (the judge) and writes what it got to stderr
#include <cuda_runtime.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "vector_add.cuh"

#ifdef HOSTILE_CONSTRUCTOR_EXIT
__attribute__((constructor)) static void leave_early() { std::exit(0); }
#endif

extern "C" cudaError_t vector_add(const float*, const float*, float*, size_t, cudaStream_t) {
#ifdef HOSTILE_REACH_JUDGE
    const pid_t judge = ::getppid();
    int refused = 0;
    refused += ::kill(judge, SIGSTOP) != 0;
    refused += ::kill(-judge, SIGKILL) != 0;
    refused += ::kill(0, SIGKILL) != 0;
    refused += ::ptrace(PTRACE_ATTACH, judge, nullptr, nullptr) != 0;
    char byte;
    iovec local{&byte, 1}, remote{reinterpret_cast<void*>(0x400000), 1};
    refused += ::process_vm_readv(judge, &local, 1, &remote, 1, 0) < 0;
    std::string mem = "/proc/" + std::to_string(judge) + "/mem";
    int fd = ::open(mem.c_str(), O_RDWR);
    refused += fd < 0;
    if (fd >= 0) ::close(fd);
    std::fprintf(stderr, "hostile step: %d of 6 refused\n", refused);
#endif
    return cudaSuccess;  // and nothing computed
}
