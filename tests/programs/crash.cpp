// A child program that dies of a signal: argv[1] = "segv" or "abort".
#include <cstdlib>
#include <cstring>

int main(int argc, char** argv) {
    if (argc > 1 && std::strcmp(argv[1], "abort") == 0) std::abort();
    volatile int* p = nullptr;
    *p = 1;
    return 0;
}
