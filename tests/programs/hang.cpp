// A child program that never ends (and ignores SIGTERM): supervision must kill it.
#include <unistd.h>
#include <csignal>

int main() {
    std::signal(SIGTERM, SIG_IGN);
    for (;;) pause();
}
