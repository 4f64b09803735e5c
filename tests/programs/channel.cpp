// A child program that writes a line on the result channel (fd 3), then exits with argv[1].
#include <unistd.h>
#include <cstdlib>
#include <cstring>

int main(int argc, char** argv) {
    const char* line = "{\"event\":\"hello\"}\n";
    if (write(3, line, std::strlen(line)) < 0) return 99;
    return argc > 1 ? std::atoi(argv[1]) : 0;
}
