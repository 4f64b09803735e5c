// The lesson kit: cases. A case is one way to call a step: a shape (n elements, or rows × cols),
// a distribution of the input values, and named parameters (bins, a threshold, a boundary
// mode...). Its label is generated from those, so a smaller copy of a case (the emulator and the
// sanitizer run small cases) is made by changing the shape, never by rewriting a string.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kit {

using u64 = std::uint64_t;
using u32 = std::uint32_t;

// ---------------------------------------------------------------- distributions, as data
enum class DistKind : std::uint8_t {
    // floats
    Uniform,           // uniform in [-1, 1)
    Wide,              // ±(1+u)·2^k, k in [-20, 20]: negative values, many magnitudes
    Large,             // ±(1+u)·2^k, k in [60, 100]: large magnitudes
    SmallIntegers,     // integers in [-100, 100]: sums are exact
    TinyIntegers,      // integers in [-8, 8]: prefix sums of up to 2^21 of them are exact
    AllEqual,          // one value repeated
    Alternating,       // +x, -y, +z, ...: cancellation
    Positive,          // uniform in [0, 1)
    OffsetScale,       // s·(o + v): one sign, a scale 2^k, an offset in [1.25, 3.25): far from 0
    AlternatingPairs,  // pairs that nearly cancel, their sums all of one sign
    HugeOneSign,       // one sign, magnitudes 2^88..2^91
    Coordinates,       // (2-D) the value is row·4096 + col: exact, so a misplaced one says where
                       // it came from
    // keys: unsigned integers below a range (Input<u32> with `range`)
    Keys,            // uniform in [0, range)
    KeysAllSame,     // one key for the whole array (sometimes 0, sometimes range - 1)
    KeysHotSpot,     // a share `param` of the keys on one bin, the rest uniform
    KeysZipf,        // Zipf-distributed ranks with exponent `param` (1.1 when 0)
    KeysSequential,  // i % range: every lane of a warp a different key
    KeysRuns,        // sorted: long runs of one key, whole warps and blocks
    KeysBankStride,  // multiples of 32 (one shared-memory bank), all different within a warp
    KeysLastBins,    // only the last 8 keys of the range
};

struct Dist {
    DistKind kind = DistKind::Uniform;
    float param = 0;  // hot-spot share, Zipf exponent
};
inline bool operator==(const Dist& a, const Dist& b) {
    return a.kind == b.kind && a.param == b.param;
}

// The distributions by name: kit::dist::uniform, kit::dist::hot_spot(0.5f), ...
namespace dist {
inline constexpr Dist uniform{DistKind::Uniform}, wide{DistKind::Wide}, large{DistKind::Large},
    small_integers{DistKind::SmallIntegers}, tiny_integers{DistKind::TinyIntegers},
    all_equal{DistKind::AllEqual}, alternating{DistKind::Alternating}, positive{DistKind::Positive},
    offset_scale{DistKind::OffsetScale}, alternating_pairs{DistKind::AlternatingPairs},
    huge_one_sign{DistKind::HugeOneSign}, coordinates{DistKind::Coordinates}, keys{DistKind::Keys},
    keys_all_same{DistKind::KeysAllSame}, keys_sequential{DistKind::KeysSequential},
    keys_runs{DistKind::KeysRuns}, keys_bank_stride{DistKind::KeysBankStride},
    keys_last_bins{DistKind::KeysLastBins};
constexpr Dist hot_spot(float share) { return {DistKind::KeysHotSpot, share}; }
constexpr Dist zipf(float exponent = 1.1f) { return {DistKind::KeysZipf, exponent}; }
}  // namespace dist

// "uniform in [-1, 1)", "hot spot: 50% of the keys on one bin"
std::string describe(Dist d);

// ---------------------------------------------------------------- shapes
struct Shape {
    u64 rows = 1, cols = 0;  // a 1-D shape is one row of `cols` elements
    bool two_d = false;
    static Shape line(u64 n) { return {1, n, false}; }
    static Shape grid(u64 rows, u64 cols) { return {rows, cols, true}; }
    u64 size() const { return rows * cols; }
    std::string text() const;  // "n=2^20+3" or "31×33"
};

// "2^28", "2^20+3", "1000": sizes as a learner reads them.
std::string format_size(u64 n);
// A number with `digits` significant digits, as printf's %g writes it.
std::string format_number(double v, int digits = 6);

// ---------------------------------------------------------------- named parameters
// Parameters of a case, in order: each has a value (any number a lesson needs: a bin count, a
// threshold, a boundary mode, a coefficient) and the words it contributes to the case's label.
class Params {
  public:
    // `text` is how the label shows it ("keep x > 0.5"); empty: "name=value".
    Params& set(const std::string& name, double value, const std::string& text = {});
    bool has(const std::string& name) const;
    double number(const std::string& name) const;  // throws std::out_of_range when missing
    double number_or(const std::string& name, double fallback) const;
    std::int64_t integer(const std::string& name) const { return (std::int64_t)number(name); }
    float f32(const std::string& name) const { return (float)number(name); }
    std::string label() const;  // the texts, ", "-separated
    struct Item {
        std::string name;
        double value = 0;
        std::string text;
    };
    const std::vector<Item>& items() const { return items_; }

  private:
    std::vector<Item> items_;
};

// ---------------------------------------------------------------- cases
struct Case {
    Shape shape;
    Dist dist;
    Params params;
    int calls = 1;           // call the step this many times on one input, each call judged
    bool same_bits = false;  // and every call must leave the same output bits (determinism)
    std::string column;      // a timed case: its column in the report ("uniform", "p = 0.5")

    u64 n() const { return shape.size(); }
    // "n=2^20+3, uniform in [-1, 1), keep x > 0.5"
    std::string label() const;
    // The same case with at most `max_elements` elements: a 1-D shape gets that size; a 2-D
    // shape halves its larger side until it fits. Everything else stays.
    Case capped(u64 max_elements) const;

    // Builders, for case tables that read like tables.
    static Case of(u64 n, Dist d) { return Case{Shape::line(n), d, {}, 1, false, {}}; }
    static Case of(Shape s, Dist d) { return Case{s, d, {}, 1, false, {}}; }
    Case& with(const std::string& name, double value, const std::string& text = {}) {
        params.set(name, value, text);
        return *this;
    }
    Case& repeated(int k, bool same) {
        calls = k;
        same_bits = same;
        return *this;
    }
    Case& timed_as(const std::string& label) {
        column = label;
        return *this;
    }
};

// 1, 31, 32, 33, 255, 256, 257, 1000, 2^20+3, 2^24, 2^28: one element, a warp and its
// neighbours, a block (256) and its neighbours, a non-power of two, large, and the timed size.
std::vector<u64> standard_sizes();
inline constexpr u64 kTimedSize = u64{1} << 28;
// The standard sizes (up to max_n), cycling through `dists`.
std::vector<Case> ladder(const std::vector<Dist>& dists, u64 max_n = kTimedSize);
// A case per (size, distribution), in order: a case table.
std::vector<Case> table(const std::vector<std::pair<u64, Dist>>& rows);

}  // namespace kit
