// A lesson's checks (checks/NN_topic/checks.cu, and baselines.cu for GPUs) are built by the
// checker when they are first needed, like a learner's step: with nvcc for the GPU present, or
// rewritten and built with the host compiler for the CPU emulator. The runner loads the result.
// Builds are cached by content (sources, every header they can see, the tools, the runner), in
// the tool's own cache (shared by every course and state directory) or the state directory.
#pragma once

#include <string>
#include <vector>

#include "emulate.h"

namespace cudalings {

struct ChecksToolchain {
    std::string nvcc;
    std::string arch;                     // "sm_90"; empty: the compile-only default
    EmulatedBuild emulator;               // rewriter, host compiler, emulator and CUDA headers
    std::string kit_dir;                  // checker/kit: the headers every check includes
    std::string runner_identity;          // the runner the plugin will be loaded into
    std::vector<std::string> cache_dirs;  // tried in order; the first writable one is used
    double seconds = 300;                 // the build's wall-clock limit
};

struct ChecksBuild {
    std::string object;  // the plugin, when built (or cached)
    std::string error;   // what went wrong, with the compiler's first error
    bool cached = false;
};

// Builds `source` (a lesson's checks.cu or baselines.cu) against the kit and `include_dirs`
// (the lesson's header, the common headers), for the emulator or the GPU. Baselines link cuBLAS.
ChecksBuild build_checks(const ChecksToolchain& t, const std::string& source,
                         const std::vector<std::string>& include_dirs, bool emulated,
                         bool baselines);

// The headers (.h, .cuh, .hpp) directly inside `dirs`, sorted: what a build can see.
std::vector<std::string> headers_in(const std::vector<std::string>& dirs);

}  // namespace cudalings
