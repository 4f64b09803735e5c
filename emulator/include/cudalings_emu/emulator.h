// The emulator's control interface, for the programs that host emulated code (the emulated
// runner, the tests): options, and the diagnostics found so far.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#define CUDALINGS_EMU_API __attribute__((visibility("default")))

namespace cudalings_emu {

struct Options {
    bool lockstep = true;  // lanes of a warp advance one memory access at a time
    bool check = true;     // races, uninitialised shared reads (needs instrumented code)
    bool explain = false;  // teaching metrics: bank conflicts, sectors, warp efficiency
    std::size_t stack_bytes = 128 * 1024;  // per CUDA thread
};

// Read once from the environment: CUDALINGS_EMU_MODE=plain|check|explain,
// CUDALINGS_EMU_LOCKSTEP=0|1. set_options overrides.
CUDALINGS_EMU_API Options get_options();
CUDALINGS_EMU_API void set_options(const Options& o);

struct Diagnostic {
    std::string kind;      // "race", "out-of-bounds", "use-after-free", "host-pointer",
                           // "uninitialised-shared", "misaligned", "divergent-barrier",
                           // "skipped-barrier", "deadlock", "warp-mask", "memcpy",
                           // "launch", "metric"
    std::string severity;  // "error", "warning", "info"
    std::string file;      // the learner's file (when known)
    int line = 0;
    std::string message;   // one line
    std::string detail;    // more lines (the other access, waiting threads, ...)
    std::uint64_t count = 1;  // how many times this exact finding occurred
};

// Everything found since the last call (duplicates merged); clears the list.
CUDALINGS_EMU_API std::vector<Diagnostic> take_diagnostics();
// Text for a learner: "file:line: error: message" lines with details indented.
CUDALINGS_EMU_API std::string format(const std::vector<Diagnostic>& diagnostics);

struct Statistics {
    std::uint64_t launches = 0, blocks = 0, threads = 0;
};
CUDALINGS_EMU_API Statistics statistics();

}  // namespace cudalings_emu
