#include "cases.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace cudalings {

std::vector<std::uint64_t> standard_sizes() {
    return {1, 31, 32, 33, 255, 256, 257, 1000, (1u << 20) + 3, 1u << 24, kTimedSize};
}

std::string format_number(double v, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    return buf;
}

std::string format_size(std::uint64_t n) {
    for (int p = 12; p < 63; ++p) {
        std::uint64_t base = std::uint64_t{1} << p;
        // Near a power of two: within 64, or within base/512 (2^20+1025, a tile past 2^20).
        const std::uint64_t near = std::max<std::uint64_t>(64, base >> 9);
        if (n == base) return "2^" + std::to_string(p);
        if (n > base && n - base <= near)
            return "2^" + std::to_string(p) + "+" + std::to_string(n - base);
        if (n < base && base - n <= near)
            return "2^" + std::to_string(p) + "-" + std::to_string(base - n);
    }
    return std::to_string(n);
}

namespace {

bool all_of_class(const std::vector<SizeOutcome>& v, bool (*in_class)(std::uint64_t, std::uint64_t),
                  std::uint64_t param, bool& saw_in, bool& saw_out) {
    saw_in = saw_out = false;
    for (const auto& o : v) {
        bool in = in_class(o.n, param);
        (in ? saw_in : saw_out) = true;
        // In the class: fails. Outside it: passes.
        if (in == o.passed) return false;
    }
    return saw_in && saw_out;
}

// Every shape in the class fails and every other one passes (and both kinds exist).
template <typename InClass>
bool shapes_split(const std::vector<ShapeOutcome>& v, InClass in_class) {
    bool saw_in = false, saw_out = false;
    for (const auto& o : v) {
        const bool in = in_class(o);
        (in ? saw_in : saw_out) = true;
        if (in == o.passed) return false;
    }
    return saw_in && saw_out;
}

bool not_multiple(std::uint64_t n, std::uint64_t d) { return n % d != 0; }
bool at_least(std::uint64_t n, std::uint64_t t) { return n >= t; }
bool below(std::uint64_t n, std::uint64_t t) { return n < t; }

}  // namespace

bool only_non_square_fail(const std::vector<ShapeOutcome>& outcomes) {
    if (shapes_split(outcomes, [](const ShapeOutcome& o) { return o.rows != o.cols; })) return true;
    int squares = 0, failing = 0;
    for (const auto& o : outcomes) {
        if (o.rows == o.cols) {
            if (!o.passed) return false;
            ++squares;
        } else {
            failing += !o.passed;
        }
    }
    return squares > 0 && failing >= 2;
}

std::string shape_pattern_hint(const std::vector<ShapeOutcome>& outcomes, std::uint64_t tile) {
    const auto partial = [&](const ShapeOutcome& o) {
        return o.rows % tile != 0 || o.cols % tile != 0;
    };
    // The partial tiles' rule only where it is an exact split: a swap that spares some
    // non-square shapes is still named below.
    const bool non_square =
        shapes_split(outcomes, [](const ShapeOutcome& o) { return o.rows != o.cols; });
    if (!non_square && shapes_split(outcomes, partial))
        return "Only shapes with a side that is not a multiple of " + std::to_string(tile) +
               " fail: the partial tiles along the edges (a bounds test missing, or one phase "
               "testing another phase's bounds).";
    if (non_square || only_non_square_fail(outcomes))
        return "Only the non-square shapes fail (every square one passed): rows and cols are "
               "swapped somewhere (a row length, a count of tiles across, a bound).";
    return {};
}

std::string size_pattern_hint(const std::vector<SizeOutcome>& outcomes, std::uint64_t block) {
    if (std::none_of(outcomes.begin(), outcomes.end(), [](auto& o) { return !o.passed; }))
        return {};
    if (std::none_of(outcomes.begin(), outcomes.end(), [](auto& o) { return o.passed; })) return {};
    bool in = false, out = false;
    struct Divisor {
        std::uint64_t d;
        const char* what;
        const char* advice;
    };
    const Divisor divisors[] = {
        {4, "4 (one float4)", "the scalar tail after the vector loop is missing or wrong"},
        {32, "32 (a warp)", "some code assumes whole warps: check the bounds test"},
        {block, "the block size", "check the bounds test and the rounded-up grid size"},
    };
    for (const auto& div : divisors) {
        if (all_of_class(outcomes, not_multiple, div.d, in, out)) {
            std::ostringstream s;
            s << "Only sizes that are not a multiple of " << div.d;
            if (div.d == block)
                s << " (" << div.what << ")";
            else
                s << " (" << div.what << ")";
            s << " fail: " << div.advice << ".";
            return s.str();
        }
    }
    // A threshold from above: all sizes >= t fail, all below pass. Only a really large t points
    // at overflow or coverage (an int index, a capped grid); from a small one up, what changes
    // is one more block or one more pass, and with only n = 1 (or n <= 2) passing, nothing is
    // learned from the sizes at all.
    std::vector<std::uint64_t> sizes;
    for (const auto& o : outcomes) sizes.push_back(o.n);
    std::sort(sizes.begin(), sizes.end());
    for (auto t : sizes) {
        if (all_of_class(outcomes, at_least, t, in, out)) {
            if (t >= kLargeSize)
                return "Only the large sizes (" + format_size(t) +
                       " and up) fail: look for an index that overflows int, a grid that does "
                       "not cover every element (a grid-stride loop needs its stride), or a "
                       "second pass sized for small inputs (one block for every tile total).";
            const auto passing = std::count_if(outcomes.begin(), outcomes.end(),
                                               [](const SizeOutcome& o) { return o.passed; });
            if (passing >= 3)
                return "Every size from " + format_size(t) +
                       " up fails and every smaller one passes: look at what changes at that "
                       "size (a second block, a second pass, a loop that runs more than once).";
            return {};
        }
        if (all_of_class(outcomes, below, t, in, out))
            return "Only the small sizes (below " + format_size(t) +
                   ") fail: look for code that assumes at least a block, a warp or a vector of "
                   "elements.";
    }
    return {};
}

std::string describe_mismatches(const MismatchShape& s) {
    if (s.wrong == 0) return {};
    std::ostringstream out;
    if (s.unwritten == s.n)
        return "Nothing was written: every output still holds the poison value.";
    if (s.unwritten == s.wrong) {
        if (s.last_wrong + 1 == s.n && s.last_wrong - s.first_wrong + 1 == s.wrong) {
            out << "The last " << s.wrong << " element" << (s.wrong == 1 ? " was" : "s were")
                << " never written (indices " << s.first_wrong << ".." << s.last_wrong
                << "): the grid does not reach the end of the array.";
            return out.str();
        }
        out << s.wrong << " element" << (s.wrong == 1 ? " was" : "s were")
            << " never written: some indices are not covered by any thread.";
        return out.str();
    }
    if (s.wrong == s.n) return "Every element is wrong: check the formula and the indexing.";
    if (s.unwritten > 0) {
        out << s.wrong << " elements are wrong, " << s.unwritten << " of them never written.";
        return out.str();
    }
    return {};
}

}  // namespace cudalings
