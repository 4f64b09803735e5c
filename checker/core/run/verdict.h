// Verdicts: what the checker concludes about one case or one step, and how they combine.
#pragma once

#include <string>
#include <string_view>

namespace cudalings {

enum class Verdict {
    Pass,
    Suspect,        // correct, but faster than the memory system allows: not a record
    Wrong,          // values, unwritten output, modified input
    MemoryError,    // guard zone hit or sanitizer finding
    Crash,          // CUDA error, signal, or unexpected exit
    Timeout,        // wall-clock limit hit
    Rejected,       // policy screen
    CompileError,   // nvcc refused the file
    SetupError,     // the machine's fault (toolkit, driver, GPU, permissions), never the learner's
    InternalError,  // the checker's own fault, never the learner's
    Skipped,        // not run (for example: no GPU)
};

// Higher is more severe; the step's verdict is the most severe of its cases.
int severity(Verdict v);
Verdict worst(Verdict a, Verdict b);

std::string_view name(Verdict v);  // "PASS", "WRONG", ...
bool parse_verdict(std::string_view text, Verdict& out);

// Process exit codes of the CLI.
namespace exit_code {
inline constexpr int pass = 0;
inline constexpr int fail = 1;
inline constexpr int usage = 2;
inline constexpr int no_gpu = 77;
// The machine cannot do what was asked (a tool missing, no permission): its setup, never the
// learner's code (`cudalings profile`).
inline constexpr int setup = 78;
}  // namespace exit_code

// Exit code for a set of step verdicts: 0 when all passed, 77 when nothing failed but
// something was skipped, 1 otherwise.
int exit_code_for(int passed, int failed, int skipped);

}  // namespace cudalings
