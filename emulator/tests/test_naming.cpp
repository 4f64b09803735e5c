// How out-of-bounds reports name memory (semantics/naming.cu, docs/emulator.md "What it
// reports"): a wild address is called one, with the kernel's pointer nearest to it and the
// poison it was made from; an overrun names the array by the learner's name or the checker's,
// never by the kit's allocating line; an access in an inlined helper names the line of the call.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <fstream>
#include <string>

#include "test_support.h"

namespace emu = cudalings_emu;
using Catch::Matchers::ContainsSubstring;
using emu_test::entry;
using emu_test::open_module;
using emu_test::use_options;

namespace {

// The one fatal finding of an entry point that must fault.
emu::Diagnostic fault_of(int result, const char* name) {
    auto found = emu::take_diagnostics();
    INFO(name << " returned " << result << "\n" << emu::format(found));
    CHECK(result == 0);
    REQUIRE(found.size() == 1);
    return found[0];
}

int line_of(const std::string& marker) {
    std::ifstream in(CUDALINGS_EMU_NAMING_SOURCE);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n)
        if (line.find(marker) != std::string::npos) return n;
    return 0;
}

}  // namespace

TEST_CASE("an index read from the poison is a wild address, not an overrun of an array",
          "[emu][naming]") {
    use_options(true, false);
    void* m = open_module(CUDALINGS_EMU_NAMING_MODULE);
    const auto d = fault_of(entry<int (*)()>(m, "naming_poisoned_index")(), "poisoned_index");
    CHECK(d.kind == "out-of-bounds");
    CHECK_THAT(d.message, ContainsSubstring("a wild address, 16.0 GiB from"));
    CHECK_THAT(d.message, !ContainsSubstring("past the end"));
    // The kernel's pointer nearest to it (the status words, 256 bytes into the workspace), the
    // index from there, and what it was made from.
    CHECK_THAT(d.detail,
               ContainsSubstring("the pointer the kernel was given that points at workspace[256]"));
    CHECK_THAT(d.detail, ContainsSubstring("element 2145299903 (of 8 bytes)"));
    CHECK_THAT(d.detail, ContainsSubstring("the bits of the NaN the checker fills its buffers"));
}

TEST_CASE("an overrun names the learner's array and the line that called an inlined helper",
          "[emu][naming]") {
    use_options(true, false);
    void* m = open_module(CUDALINGS_EMU_NAMING_MODULE);
    const auto d = fault_of(entry<int (*)()>(m, "naming_learner_overrun")(), "learner_overrun");
    CHECK(d.kind == "out-of-bounds");
    CHECK(d.line == line_of("the helper's line"));
    CHECK_THAT(d.message, ContainsSubstring("read of words[65]"));
    CHECK_THAT(d.message, ContainsSubstring("(allocated at "));  // the learner's own: its line
    CHECK_THAT(d.message, ContainsSubstring("8 bytes past the end"));
    CHECK_THAT(d.detail, ContainsSubstring("is in load_word(), called at "));
    CHECK_THAT(d.detail,
               ContainsSubstring("naming.cu:" + std::to_string(line_of("naming: call site")) +
                                 " (in read_past_end())"));
}

TEST_CASE(
    "the checker's memory is named by its buffer or as the checker's, never by the kit's "
    "line",
    "[emu][naming]") {
    use_options(true, false);
    void* m = open_module(CUDALINGS_EMU_NAMING_MODULE);
    auto run = entry<int (*)(const char*)>(m, "naming_checker_overrun");
    const auto named = fault_of(run("workspace"), "checker_overrun(workspace)");
    CHECK_THAT(named.message, ContainsSubstring("read of workspace[65]"));
    CHECK_THAT(named.message + named.detail, !ContainsSubstring("allocated at"));
    const auto own = fault_of(run(""), "checker_overrun()");
    CHECK_THAT(own.message, ContainsSubstring("the checker's own 256-byte array"));
    CHECK_THAT(own.message + own.detail, !ContainsSubstring("allocated at"));
    CHECK_THAT(own.message + own.detail, !ContainsSubstring("made at"));
}

TEST_CASE(
    "an address outside device memory computed from device pointers is not called a host "
    "pointer",
    "[emu][naming]") {
    use_options(true, false);
    void* m = open_module(CUDALINGS_EMU_NAMING_MODULE);
    const auto d = fault_of(entry<int (*)()>(m, "naming_far_outside")(), "far_outside");
    CHECK(d.kind == "host-pointer");  // the same finding (and verdict) as before
    CHECK_THAT(d.message, ContainsSubstring("a wild address, not in device memory"));
    CHECK_THAT(d.message, !ContainsSubstring("a host pointer was passed"));
    // `out`, allocated after x, is nearer than x: the nearest, not necessarily its source.
    CHECK_THAT(d.detail, ContainsSubstring("of the pointers the kernel was given, the nearest "
                                           "points at out[0]"));
}
