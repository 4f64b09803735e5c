#include <catch2/catch_test_macros.hpp>

#include "cases.h"

using namespace cudalings;

namespace {
std::vector<SizeOutcome> outcomes(bool (*passes)(std::uint64_t)) {
    std::vector<SizeOutcome> v;
    for (auto n : standard_sizes()) v.push_back({n, passes(n)});
    return v;
}
}  // namespace

TEST_CASE("the size ladder has the edge cases that catch real bugs", "[cases]") {
    auto sizes = standard_sizes();
    const std::uint64_t must[] = {1,        31,      32, 33, 255, 256, 257, 1000, (1u << 20) + 3,
                                  1u << 24, 1u << 28};
    REQUIRE(sizes.size() == std::size(must));
    for (std::size_t i = 0; i < sizes.size(); ++i) CHECK(sizes[i] == must[i]);
    CHECK(sizes.back() == kTimedSize);
}

TEST_CASE("sizes print as a learner reads them", "[cases]") {
    CHECK(format_size(1) == "1");
    CHECK(format_size(1000) == "1000");
    CHECK(format_size(1u << 28) == "2^28");
    CHECK(format_size((1u << 20) + 3) == "2^20+3");
    CHECK(format_size((1u << 24) - 1) == "2^24-1");
    CHECK(format_size((1u << 20) + 1025) == "2^20+1025");  // the emulated values-only size
    CHECK(format_size(3 * 1024 + 1) == "3073");             // not 2^12-1023
    CHECK(format_size(5 * (1u << 20) + 7) == "5242887");
}

TEST_CASE("a bounds bug shows as 'not a multiple of the block size'", "[cases]") {
    auto hint = size_pattern_hint(outcomes([](std::uint64_t n) { return n % 256 == 0; }));
    CHECK(hint.find("not a multiple of 256") != std::string::npos);
    CHECK(hint.find("bounds") != std::string::npos);
}

TEST_CASE("a missing float4 tail shows as 'not a multiple of 4'", "[cases]") {
    auto hint = size_pattern_hint(outcomes([](std::uint64_t n) { return n % 4 == 0; }));
    CHECK(hint.find("multiple of 4") != std::string::npos);
    CHECK(hint.find("tail") != std::string::npos);
}

TEST_CASE("failures only at large sizes point at overflow or coverage", "[cases]") {
    auto hint = size_pattern_hint(outcomes([](std::uint64_t n) { return n < (1u << 24); }));
    CHECK(hint.find("2^24 and up") != std::string::npos);
    auto small = size_pattern_hint(outcomes([](std::uint64_t n) { return n >= 256; }));
    CHECK(small.find("below 256") != std::string::npos);
}

TEST_CASE("'only the large sizes' is said only of sizes that are large", "[cases]") {
    // It was said with N = 2, 4, 31, 255 and 513: a kernel wrong from the second block on, or
    // right only for n = 1, is not an overflow.
    auto from_257 = size_pattern_hint(outcomes([](std::uint64_t n) { return n < 257; }));
    CHECK(from_257.find("large sizes") == std::string::npos);
    CHECK(from_257.find("from 257 up") != std::string::npos);
    CHECK(size_pattern_hint(outcomes([](std::uint64_t n) { return n < 31; })).empty());
    auto large = size_pattern_hint(outcomes([](std::uint64_t n) { return n < (1u << 20); }));
    CHECK(large.find("Only the large sizes (2^20+3 and up)") != std::string::npos);
}

TEST_CASE("no pattern when everything passes, everything fails, or failures are scattered",
          "[cases]") {
    CHECK(size_pattern_hint(outcomes([](std::uint64_t) { return true; })).empty());
    CHECK(size_pattern_hint(outcomes([](std::uint64_t) { return false; })).empty());
    CHECK(
        size_pattern_hint(outcomes([](std::uint64_t n) { return n != 33 && n != 1000; })).empty());
}

TEST_CASE("2-D shapes: non-square failures and partial-tile failures are named", "[cases]") {
    const std::pair<std::uint64_t, std::uint64_t> shapes[] = {
        {1, 1}, {1, 33}, {33, 1}, {31, 33}, {32, 32}, {64, 64}, {255, 257}, {1u << 22, 4}};
    auto outcomes2 = [&](auto passes) {
        std::vector<ShapeOutcome> v;
        for (auto [r, c] : shapes) v.push_back({r, c, passes(r, c)});
        return v;
    };
    auto square = shape_pattern_hint(outcomes2([](auto r, auto c) { return r == c; }));
    CHECK(square.find("non-square") != std::string::npos);
    auto tiles =
        shape_pattern_hint(outcomes2([](auto r, auto c) { return r % 32 == 0 && c % 32 == 0; }));
    CHECK(tiles.find("not a multiple of 32") != std::string::npos);
    CHECK(shape_pattern_hint(outcomes2([](auto, auto) { return true; })).empty());
    CHECK(shape_pattern_hint(outcomes2([](auto r, auto) { return r != 31; })).empty());
}

TEST_CASE("2-D shapes: a swap that spares some non-square shapes is still named, only on evidence",
          "[cases]") {
    const std::pair<std::uint64_t, std::uint64_t> shapes[] = {
        {1, 1}, {1, 33}, {33, 1}, {31, 33}, {32, 32}, {64, 64}, {1000, 1}, {255, 257}};
    auto outcomes2 = [&](auto passes) {
        std::vector<ShapeOutcome> v;
        for (auto [r, c] : shapes) v.push_back({r, c, passes(r, c)});
        return v;
    };
    // N×1 shapes pass (a stride that is 1 there), every square passes, the rest fail.
    const auto spared = outcomes2([](auto r, auto c) { return r == c || c == 1; });
    CHECK(only_non_square_fail(spared));
    CHECK(shape_pattern_hint(spared).find("Only the non-square shapes fail") != std::string::npos);
    // A square one fails: no swap is named.
    const auto square_fails =
        outcomes2([](auto r, auto c) { return (r == c && r != 64) || c == 1; });
    CHECK_FALSE(only_non_square_fail(square_fails));
    CHECK(shape_pattern_hint(square_fails).empty());
    // One non-square failure is too little to name a swap.
    CHECK_FALSE(only_non_square_fail(outcomes2([](auto r, auto) { return r != 31; })));
    // No square shape at all: nothing says the squares pass.
    std::vector<ShapeOutcome> no_square{{1, 33, false}, {33, 1, false}, {4, 8, true}};
    CHECK_FALSE(only_non_square_fail(no_square));
}

TEST_CASE("mismatch shapes are described in words", "[cases]") {
    CHECK(describe_mismatches({100, 100, 100, 0, 99}).find("Nothing was written") == 0);
    auto tail = describe_mismatches({1000, 232, 232, 768, 999});
    CHECK(tail.find("last 232 elements were never written") != std::string::npos);
    CHECK(describe_mismatches({100, 100, 0, 0, 99}).find("Every element is wrong") == 0);
    CHECK(describe_mismatches({100, 0, 0, 0, 0}).empty());
    CHECK(describe_mismatches({100, 3, 3, 10, 50}).find("3 elements were never written") == 0);
}
