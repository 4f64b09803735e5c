// The commands that are not a learner's loop (doctor, report, sass, profile, grade, dev): they
// live in a second executable, cudalings-tools, built on first use (main.cpp forwards to it), so
// that the first `./cudalings check` on a new machine compiles only what checking a step needs.
// This table is the one list of them: the `cudalings` executable shows each in its help and
// forwards it; each command's own file takes its summary from here.
#pragma once

#include <cstring>

namespace cudalings::cli {

struct ToolCommand {
    const char* name;
    const char* summary;
};

inline constexpr ToolCommand kToolCommands[] = {
    {"doctor", "check this machine: toolkit, compiler, driver, GPU, CMake, tools, emulator"},
    {"report", "write an HTML page: your progress and each lesson's staircase (SVG)"},
    {"sass", "the machine code (SASS, or PTX without cuobjdump) the compiler made of a step"},
    {"profile",
     "Nsight Compute (ncu) on one timed call of a step: each kernel's duration, DRAM "
     "throughput, occupancy and the lesson's metrics"},
    {"grade", "grade submission folders: sealed, with the instructor's contract, in batch"},
    {"dev", "tools for whoever writes lessons"},
};

// The summary of a command of the table ("" for another name).
inline const char* tool_summary(const char* name) {
    for (const auto& t : kToolCommands)
        if (std::strcmp(t.name, name) == 0) return t.summary;
    return "";
}

}  // namespace cudalings::cli
