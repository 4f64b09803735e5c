// A child program that floods stdout and stderr (argv[1] MiB each), then forks a grandchild
// that keeps writing forever: the supervisor must cap the output and kill the whole group.
#include <unistd.h>
#include <cstdlib>
#include <cstring>

int main(int argc, char** argv) {
    long mib = argc > 1 ? std::atol(argv[1]) : 64;
    char line[1024];
    std::memset(line, 'x', sizeof line);
    line[sizeof line - 1] = '\n';
    for (long i = 0; i < mib * 1024; ++i) {
        if (write(1, line, sizeof line) < 0) return 1;
        if (write(2, line, sizeof line) < 0) return 1;
    }
    if (argc > 2 && fork() == 0) {
        for (;;)
            if (write(1, line, sizeof line) < 0) return 0;
    }
    return 3;
}
