#include <catch2/catch_test_macros.hpp>

#include "verdict.h"

using namespace cudalings;

TEST_CASE("verdict severity follows the documented order", "[verdict]") {
    // INTERNAL_ERROR > SETUP_ERROR > COMPILE_ERROR > REJECTED > TIMEOUT > CRASH > MEMORY_ERROR >
    // WRONG > SUSPECT > PASS, and SKIPPED below everything.
    const Verdict order[] = {Verdict::Skipped,    Verdict::Pass,         Verdict::Suspect,
                             Verdict::Wrong,      Verdict::MemoryError,  Verdict::Crash,
                             Verdict::Timeout,    Verdict::Rejected,     Verdict::CompileError,
                             Verdict::SetupError, Verdict::InternalError};
    for (std::size_t i = 1; i < std::size(order); ++i) {
        CHECK(severity(order[i - 1]) < severity(order[i]));
        CHECK(worst(order[i - 1], order[i]) == order[i]);
        CHECK(worst(order[i], order[i - 1]) == order[i]);
    }
}

TEST_CASE("verdict names round-trip", "[verdict]") {
    for (auto v : {Verdict::Pass, Verdict::Suspect, Verdict::Wrong, Verdict::MemoryError,
                   Verdict::Crash, Verdict::Timeout, Verdict::Rejected, Verdict::CompileError,
                   Verdict::SetupError, Verdict::InternalError, Verdict::Skipped}) {
        Verdict back = Verdict::Pass;
        REQUIRE(parse_verdict(name(v), back));
        CHECK(back == v);
    }
    Verdict unused;
    CHECK_FALSE(parse_verdict("FINE", unused));
    CHECK(name(Verdict::MemoryError) == "MEMORY_ERROR");
    CHECK(name(Verdict::SetupError) == "SETUP_ERROR");
}

TEST_CASE("exit codes: 0 pass, 1 fail, 77 nothing failed but something skipped", "[verdict]") {
    CHECK(exit_code_for(3, 0, 0) == 0);
    CHECK(exit_code_for(2, 1, 0) == 1);
    CHECK(exit_code_for(0, 1, 5) == 1);
    CHECK(exit_code_for(1, 0, 2) == 77);
    CHECK(exit_code_for(0, 0, 3) == 77);
    CHECK(exit_code_for(0, 0, 0) == 1);  // nothing was checked at all
}
