#include "verdict.h"

#include <array>
#include <utility>

namespace cudalings {
namespace {

constexpr std::array<std::pair<Verdict, std::string_view>, 11> kNames{{
    {Verdict::Pass, "PASS"},
    {Verdict::Suspect, "SUSPECT"},
    {Verdict::Wrong, "WRONG"},
    {Verdict::MemoryError, "MEMORY_ERROR"},
    {Verdict::Crash, "CRASH"},
    {Verdict::Timeout, "TIMEOUT"},
    {Verdict::Rejected, "REJECTED"},
    {Verdict::CompileError, "COMPILE_ERROR"},
    {Verdict::SetupError, "SETUP_ERROR"},
    {Verdict::InternalError, "INTERNAL_ERROR"},
    {Verdict::Skipped, "SKIPPED"},
}};

}  // namespace

int severity(Verdict v) {
    switch (v) {
        case Verdict::Skipped:
            return 0;
        case Verdict::Pass:
            return 1;
        case Verdict::Suspect:
            return 2;
        case Verdict::Wrong:
            return 3;
        case Verdict::MemoryError:
            return 4;
        case Verdict::Crash:
            return 5;
        case Verdict::Timeout:
            return 6;
        case Verdict::Rejected:
            return 7;
        case Verdict::CompileError:
            return 8;
        case Verdict::SetupError:
            return 9;
        case Verdict::InternalError:
            return 10;
    }
    return 10;
}

Verdict worst(Verdict a, Verdict b) { return severity(b) > severity(a) ? b : a; }

std::string_view name(Verdict v) {
    for (const auto& [verdict, text] : kNames)
        if (verdict == v) return text;
    return "INTERNAL_ERROR";
}

bool parse_verdict(std::string_view text, Verdict& out) {
    for (const auto& [verdict, name_text] : kNames) {
        if (name_text == text) {
            out = verdict;
            return true;
        }
    }
    return false;
}

int exit_code_for(int passed, int failed, int skipped) {
    if (failed > 0) return exit_code::fail;
    if (skipped > 0) return exit_code::no_gpu;
    return passed > 0 ? exit_code::pass : exit_code::fail;
}

}  // namespace cudalings
