// `check --sanitize`: the learner's step under compute-sanitizer (memcheck with padding,
// racecheck, initcheck, synccheck) on small cases, untimed. Findings that point into the
// learner's file become MEMORY_ERROR with file:line; the runner's own kernels are ignored.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cudalings {

struct SanitizerFinding {
    std::string tool;     // memcheck, racecheck, initcheck, synccheck
    std::string message;  // "Invalid __global__ write of size 4 bytes"
    std::string file;     // the learner's file
    int line = 0;
    std::string detail;  // the next lines of the report (address, thread, the other access)
};

inline constexpr const char* kSanitizerTools[] = {"memcheck", "racecheck", "initcheck",
                                                  "synccheck"};

// compute-sanitizer's argv for one tool, wrapping `program`.
std::vector<std::string> sanitizer_command(const std::string& sanitizer, const std::string& tool,
                                           const std::vector<std::string>& program);

// Findings in compute-sanitizer's output whose location is in `learner_file`.
std::vector<SanitizerFinding> parse_sanitizer_output(std::string_view output,
                                                     const std::string& tool,
                                                     const std::string& learner_file);

// compute-sanitizer next to nvcc, in the CUDA installation, or on PATH; empty when absent.
std::string find_sanitizer(const std::string& nvcc);

}  // namespace cudalings
