// `cudalings dev check --coverage`: a step's hazard cases (the small cases the emulator checks
// for races, barriers and bounds) must run every line of its solution's device code, with at
// least two CUDA blocks in one launch, and every loop body at least twice in one CUDA thread: a
// race between two rounds of a loop, or between blocks, is only seen where both happen.
//
// The hazard pass runs with the emulator's coverage mode (emulator/src/coverage.cpp): GCC's
// -fsanitize-coverage=trace-pc hooks count each basic block's runs per CUDA thread. This file
// reads those counts, finds every basic block of the built file (objdump: the calls to the
// hook) and its line (addr2line: the innermost inlined frame), and judges the solution's lines:
//   - a function is device code when any of its blocks ran inside a kernel;
//   - a line of the solution with blocks in device code ran when one of its blocks did;
//   - a loop (for, while, do, read from the source) iterated when one of its body's own lines
//     (not an inner loop's body) was run twice by one CUDA thread.
// A line whose text says `dev: not covered (reason)`, or whose comment lines right above it do,
// is exempt (a loop: its header line), and listed as such.
#pragma once

#include <string>
#include <vector>

namespace cudalings {

// A loop of a source file: its header line and the lines of its own body (not those of a loop
// inside it), 1-based.
struct SourceLoop {
    int header = 0;
    std::vector<int> own_lines;
};
// The loops of C++/CUDA source text (comments and literals skipped).
std::vector<SourceLoop> find_loops(const std::string& text);

struct CoverageVerdict {
    std::string error;                  // the counts could not be read (then nothing else holds)
    std::vector<std::string> problems;  // each a sentence naming its line(s)
    std::vector<std::string> exempt;    // "line 12: reason", from the source's markers
    int device_lines = 0;               // lines of device code with a basic block
    int lines_run = 0;
    unsigned long long most_blocks = 0;  // the most CUDA blocks of one checked launch
};

// `counts_dir`: where the runners wrote their .cov files; `source`: the solution the build was
// made from (its lines are judged; code of other files, headers included, is not).
CoverageVerdict judge_coverage(const std::string& counts_dir, const std::string& source);

}  // namespace cudalings
