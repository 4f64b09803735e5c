// The size ladder every lesson is tested on, and what a pattern of failing sizes says.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cudalings {

// 1, 31, 32, 33, 255, 256, 257, 1000, 2^20+3, 2^24, 2^28: a single element, a warp and its
// neighbours, a block (256) and its neighbours, a non-power of two, large, and the timed size.
std::vector<std::uint64_t> standard_sizes();

inline constexpr std::uint64_t kTimedSize = std::uint64_t{1} << 28;

// "2^28", "2^20+3", "1000": sizes as a learner reads them.
std::string format_size(std::uint64_t n);

// A number with `digits` significant digits, as printf's %g writes it: "0.000123", "1.5e+12".
std::string format_number(double v, int digits = 6);

struct SizeOutcome {
    std::uint64_t n = 0;
    bool passed = false;
};

// A sentence naming the size class that fails, when the failures follow one, e.g.
// "Only sizes that are not a multiple of 256 (the block size) fail: check the bounds test and
// the rounded-up grid." Empty when there is no clear pattern (or nothing failed).
// From this size up, failures point at 32-bit overflow or a grid that does not cover the data.
inline constexpr std::uint64_t kLargeSize = std::uint64_t{1} << 20;
std::string size_pattern_hint(const std::vector<SizeOutcome>& outcomes, std::uint64_t block = 256);

// The same for 2-D shapes (rows × cols): "Only the non-square shapes fail", "Only shapes with a
// side that is not a multiple of 32 fail". Empty when there is no clear pattern.
struct ShapeOutcome {
    std::uint64_t rows = 0, cols = 0;
    bool passed = false;
};
std::string shape_pattern_hint(const std::vector<ShapeOutcome>& outcomes, std::uint64_t tile = 32);
// Whether the failures say "rows and cols are swapped": at least one square shape, every square
// shape passed, and the failing ones are non-square: every non-square shape, or at least two of
// them (a swap that happens to be harmless for some shapes, N×1 say, is still a swap).
bool only_non_square_fail(const std::vector<ShapeOutcome>& outcomes);

// What the mismatches of one failing case look like, in a sentence:
// nothing written, only the tail unwritten, every element wrong, ...
struct MismatchShape {
    std::uint64_t n = 0;
    std::uint64_t wrong = 0;        // elements that differ from the expected value
    std::uint64_t unwritten = 0;    // of those, still holding the poison value
    std::uint64_t first_wrong = 0;  // lowest wrong index
    std::uint64_t last_wrong = 0;   // highest wrong index
};
std::string describe_mismatches(const MismatchShape& shape);

}  // namespace cudalings
