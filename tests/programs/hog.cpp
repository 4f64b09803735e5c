// A child program that allocates and touches argv[1] MiB of host memory, holds it argv[2]
// seconds (0 when not given), then exits 0.
#include <unistd.h>

#include <cstdlib>
#include <cstring>

int main(int argc, char** argv) {
    long mib = argc > 1 ? std::atol(argv[1]) : 1024;
    for (long i = 0; i < mib; ++i) {
        char* p = static_cast<char*>(std::malloc(1 << 20));
        if (!p) return 2;
        std::memset(p, 1, 1 << 20);
    }
    if (argc > 2) ::usleep(static_cast<useconds_t>(std::atof(argv[2]) * 1e6));
    return 0;
}
