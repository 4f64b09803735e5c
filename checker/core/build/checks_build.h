// A lesson's checks (checks/NN_topic/checks.cu, and baselines.cu for GPUs) are built by the
// checker when they are first needed, like a learner's step: with nvcc for the GPU present, or
// rewritten and built with the host compiler for the CPU emulator. The runner loads the result.
// Builds are cached by content (sources, every header they can see, the tools, the runner), in
// the tool's own cache (shared by every course and state directory) or the state directory.
// An entry is named for its lesson and kind as well (checks_cache_tag): building one removes
// the entries of the same lesson and kind that no check has used for a while, so the cache
// holds about one entry per lesson and toolchain instead of one per course copy ever checked.
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
    // An entry of the same lesson and kind that no check has used for this long is removed when
    // another is built (a check that found an entry may still be about to load it).
    double unused_seconds = 600;
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

// "01_vector_add-emu", "01_vector_add-gpu", "10_gemm-gpu-baselines": the lesson (the folder of
// `source`) and the kind of build, which a cache entry's name starts with.
std::string checks_cache_tag(const std::string& source, bool emulated, bool baselines);
// Removes from `dir` the entries named `tag`-<32 hex digits>.so, other than `keep`, and those of
// the unnamed form <32 hex digits>.so (built before entries had tags), whose last use is
// `unused_seconds` old or more. Returns how many it removed.
int prune_checks_cache(const std::string& dir, const std::string& tag, const std::string& keep,
                       double unused_seconds);

// The headers (.h, .cuh, .hpp) directly inside `dirs`, sorted: what a build can see.
std::vector<std::string> headers_in(const std::vector<std::string>& dirs);

}  // namespace cudalings
