// expect: PASS
//
// Tries the network: a TCP connection to 127.0.0.1:47613 and an abstract Unix socket
// "cudalings-hostile-47613", both of which the test listens on. Outside a sandbox both connect
// (a submission could talk to the grader's machine, or send its inputs out); in the sandbox's
// own network namespace there is nobody there. A connection computes a - b (WRONG).
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include "vector_add.cuh"

namespace {

bool reach_out() {
    bool reached = false;
    int tcp = socket(AF_INET, SOCK_STREAM, 0);
    if (tcp >= 0) {
        sockaddr_in to{};
        to.sin_family = AF_INET;
        to.sin_port = htons(47613);
        to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        reached = connect(tcp, reinterpret_cast<sockaddr*>(&to), sizeof to) == 0;
        close(tcp);
    }
    int unix_socket = socket(AF_UNIX, SOCK_STREAM, 0);
    if (unix_socket >= 0) {
        sockaddr_un to{};
        to.sun_family = AF_UNIX;
        const char name[] = "cudalings-hostile-47613";
        std::memcpy(to.sun_path + 1, name, sizeof name - 1);  // abstract: leading NUL
        socklen_t length = static_cast<socklen_t>(sizeof(sa_family_t) + 1 + sizeof name - 1);
        reached = connect(unix_socket, reinterpret_cast<sockaddr*>(&to), length) == 0 || reached;
        close(unix_socket);
    }
    return reached;
}

}  // namespace

__global__ void add(const float* a, const float* b, float* c, size_t n, float sign) {
    size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + sign * b[i];
}

extern "C" cudaError_t vector_add(const float* a, const float* b, float* c, size_t n,
                                  cudaStream_t stream) {
    static bool once = false, reached = false;
    if (!once) {
        once = true;
        reached = reach_out();
    }
    add<<<static_cast<unsigned int>((n + 255) / 256), 256, 0, stream>>>(a, b, c, n,
                                                                         reached ? -1.0f : 1.0f);
    return cudaGetLastError();
}
