// A child program that never ends (and ignores SIGTERM): supervision must kill it.
#include <csignal>
#include <unistd.h>

int main() {
    std::signal(SIGTERM, SIG_IGN);
    for (;;) pause();
}
