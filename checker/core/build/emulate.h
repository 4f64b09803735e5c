// Running a step on the CPU emulator (no GPU, or `--emulate`): when to, what cannot be
// emulated, and how the learner's file is built for it (after nvcc has accepted it).
// See docs/emulator.md.
#pragma once

#include <string>
#include <vector>

namespace cudalings {

// The label every emulated report carries.
inline constexpr const char* kEmulatedLabel =
    "none — emulated on the CPU: correctness only, no timing";

// Case sizes are capped under emulation (the edge cases stay): the emulator runs a CUDA
// thread in tens of nanoseconds, a GPU runs billions per second.
inline constexpr unsigned long long kEmulatedMaxN = (1ull << 16) + 3;

// ... and when every one of those passed, one larger case runs for its values only (the race
// checks off, bounds on): the largest of the lesson's cases up to this size, else its first
// bigger case cut down to it. 2^20 + 1025 elements is where a grid, a final pass or a second
// level sized for the small cases runs out (1024 tiles or partial sums and one more).
inline constexpr unsigned long long kEmulatedLargeN = (1ull << 20) + 1025;

// That size for a step whose manifest cuts it ("emulated": {"values_up_to": ...}, StepInfo):
// the step's own, kept above kEmulatedMaxN and at most kEmulatedLargeN (`dev check` refuses one
// outside); 0 gives kEmulatedLargeN.
inline constexpr unsigned long long emulated_large_n(unsigned long long values_up_to) {
    return values_up_to == 0 || values_up_to > kEmulatedLargeN ? kEmulatedLargeN
           : values_up_to <= kEmulatedMaxN                     ? kEmulatedMaxN + 1
                                                               : values_up_to;
}

// The hazard pass of a GPU check runs the cases up to this size on the emulator: every edge
// case, and a few blocks' worth of elements.
inline constexpr unsigned long long kHazardMaxN = (1ull << 12) + 3;

// Emulate when forced, or when there is no GPU.
bool should_emulate(bool forced, bool gpu_present);

// Why this source cannot run on the emulator ("it uses CUB", "inline PTX (asm)"), or "".
std::string emulation_blocker(const std::string& source_text);

struct EmulatedBuild {
    std::string rewriter;  // cudalings-emu-rewrite
    std::string cxx = "g++";
    std::string emulator_include;           // holds cudalings_emu/cuda_emu.h
    std::string cuda_include;               // NVIDIA's headers (host-safe parts are used)
    std::vector<std::string> include_dirs;  // lesson header, common headers
    std::string source;                     // the learner's .cu
    std::string rewritten;                  // the generated .cpp
    std::string object;                     // the .o
    std::string output;                     // the .so the emulated runner loads
    bool instrument = true;                 // memory-access hooks (checks, lockstep)
    // GCC's basic-block hooks too (-fsanitize-coverage=trace-pc): the emulator counts each
    // block's runs (coverage mode, `dev check --coverage`; checker/core/tools/coverage.h).
    bool coverage = false;
    // Off for code without kernels, which runs once a call (the judge split's call shims):
    // -O0 and no line table, about half the compile time (0.8 against 1.4 s for lesson 07's).
    bool optimize = true;
};

// The three steps, as argvs: rewrite, compile (with the forced include), link.
std::vector<std::vector<std::string>> emulated_build_commands(const EmulatedBuild& b);

// Everything that changes the emulated build of `source`, for the compile cache key.
std::string emulated_cache_key(const EmulatedBuild& b, const std::vector<std::string>& headers);

// Where the emulator's pieces are: next to the tools (or from the build, or the environment:
// CUDALINGS_EMU_INCLUDE, CUDALINGS_CXX).
std::string emulator_include_dir(const std::string& tool_dir);
std::string cuda_include_dir();
std::string host_compiler();

}  // namespace cudalings
