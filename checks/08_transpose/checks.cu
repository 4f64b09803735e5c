// Checks of lesson 08 (transpose, gather, scatter): three entry points, one problem each.
//   transpose  steps 1-5  out (cols × rows) = the transpose of in (rows × cols), both row-major
//   gather     step 6     out[i] = in[index[i]]
//   scatter    step 7     out[index[i]] = in[i]
//
// Nothing here computes: every output element is a copy of one input element, so every
// comparison is bit for bit (-0.0, infinities, NaN payloads and denormals must arrive unchanged,
// and the inputs hold all of them). The expected element is read from the input while comparing.
//
// Transpose shapes. Small shapes (up to 2^16 elements, so the emulator runs them all): one
// element, one row and one column (1×N, N×1), sides around one 32-wide tile (31×33, 33×31,
// 32×32, 63×65), a block's worth (255×257), thin shapes whose short side is not a multiple of
// anything (1000×3, 3×1000, 15×4097), and shapes whose sides are multiples of 4 but not of 32 or
// 64 (4×4, 4×1000, 68×36, 252×260: a float4 path with partial tiles). Large shapes (the GPU):
// 2^22×4, whose 131,072 rows of 32-row tiles are more than gridDim.y allows (a 2-D grid with
// tile rows on y fails to launch), 4×2^22, 1025×1023, 4097×31, 17×4097, 8192×32768 and
// 32768×8192 (rows and cols swapped anywhere shows), and the timed 16384×16384. Under emulation
// the first large shape runs halved to 16384×4.
//
// Values: where both sides are at most 4096, the coordinate distribution (element (r, c) holds
// r·4096 + c, exactly), so a wrong element says where it came from ("out(5, 3) holds in(5, 3):
// not transposed"); elsewhere signed values of many magnitudes with -0.0, ±inf, NaNs with
// payloads and denormals mixed in.
//
// Index arrays (steps 6 and 7) are counter-based like every input: the identity, a shuffle
// within each window of 1024 elements (4 KiB), and a permutation spread over the whole array
// (a 4-round Feistel network on the next power of four, cycle-walked into [0, n)), plus, for the
// gather, random indices with repeats. Their inverse is computed the same way, so the scatter's
// expected output needs no stored array either.
#include <cstring>
#include <string>
#include <vector>

#include "kit.h"
#include "transpose.cuh"

namespace {

using namespace kit;

constexpr u64 kTileSide = 32;  // the tile of steps 1-4, for the words of a diagnosis

// ---------------------------------------------------------------- input values
// The values of a float input: a built-in distribution, or (`specials`) signed values of many
// magnitudes where one element in 8 is a special bit pattern instead.
struct Values {
    Dist dist;
    u64 cols = 0;  // the row length, for dist::coordinates
    bool specials = false;
    __host__ __device__ float operator()(u64 base, u64 i) const {
        if (!specials) return sample_float(dist, base, i, cols);
        const u64 h = element_hash(base ^ 0x5bec1a15ull, i);
        if (h % 8 != 0) return sample_float(dist, base, i, cols);
        const std::uint32_t payload = static_cast<std::uint32_t>(h >> 16) & 0x3fffffu;
        const std::uint32_t mantissa = (static_cast<std::uint32_t>(h >> 20) & 0x7fffffu) | 1u;
        // -0.0, +inf, -inf, quiet NaNs with a payload (both signs), a signalling NaN, denormals
        // of both signs
        const std::uint32_t special[8] = {0x80000000u,
                                          0x7f800000u,
                                          0xff800000u,
                                          0x7fc00000u | payload,
                                          0xffc00000u | payload,
                                          0x7f800000u | (payload ? payload : 1u),
                                          mantissa,
                                          0x80000000u | mantissa};
        std::uint32_t bits = special[(h >> 8) % 8];
        if (bits == kPoisonBits) bits ^= 1u;  // never the checker's marker of an unwritten element
        float f;
        memcpy(&f, &bits, 4);
        return f;
    }
};

const char* const kSpecialsText = "with -0.0, ±inf, NaNs and denormals";

// Coordinates are exact and tell a position only while both sides are at most 4096.
bool coordinates_fit(u64 rows, u64 cols) { return rows <= 4096 && cols <= 4096; }

// A case's input values: its distribution, with specials where the case says so.
Values values_of(const Case& c) {
    const bool specials = c.params.has("specials");
    return Values{c.dist, c.shape.cols, specials};
}

const char* const kBitExact =
    "bit-exact: nothing is computed, every output element is a copy of one input element, so "
    "it must hold that element's bits (-0.0, infinities, NaN payloads and denormals included)";

// ---------------------------------------------------------------- transpose
struct Transposed {  // out (cols × rows): out[c·rows + r] = in[r·cols + c]
    const float* in;
    u64 rows, cols;
    __host__ __device__ Want operator()(u64 o) const {
        const u64 c = o / rows, r = o % rows;
        return Want::exactly_as(in[r * cols + c]);
    }
};
// The same, but only in the full tiles (input rows below full_rows, columns below full_cols):
// elsewhere whatever the output holds is accepted.
struct TransposedInFullTiles {
    const float* in;
    const float* got;
    u64 rows, cols, full_rows, full_cols;
    __host__ __device__ Want operator()(u64 o) const {
        const u64 c = o / rows, r = o % rows;
        if (r < full_rows && c < full_cols) return Want::exactly_as(in[r * cols + c]);
        return Want::exactly_as(got[o]);
    }
};
struct Copied {  // out[i] = in[i]: a copy, not a transpose
    const float* in;
    __host__ __device__ Want operator()(u64 i) const { return Want::exactly_as(in[i]); }
};

std::string at(u64 row, u64 col, const char* matrix) {
    return std::string(matrix) + "(" + std::to_string(row) + ", " + std::to_string(col) + ")";
}

class Transpose : public Problem {
  public:
    static constexpr const char* kName = "transpose";
    static constexpr const char* kSymbol = "transpose";
    static constexpr bool kSampledValues = true;  // out[c·rows + r] from in[r·cols + c] alone
    static std::vector<Case> cases() {
        std::vector<Case> out;
        // Coordinates (which must fit: both sides at most 4096), or values with specials.
        enum Kind { kCoordinates, kSpecials };
        auto add = [&](u64 rows, u64 cols, Kind kind) {
            Case c = Case::of(Shape::grid(rows, cols), dist::coordinates);
            if (kind == kSpecials || !coordinates_fit(rows, cols)) {
                c.dist = dist::wide;
                c.with("specials", 1, kSpecialsText);
            }
            out.push_back(c);
        };
        // small: every one runs under emulation too
        add(1, 1, kCoordinates);
        add(1, 33, kCoordinates);
        add(33, 1, kSpecials);
        add(1, 1000, kSpecials);
        add(1000, 1, kCoordinates);
        add(31, 33, kCoordinates);
        add(33, 31, kSpecials);
        add(32, 32, kCoordinates);
        add(63, 65, kSpecials);
        add(64, 64, kCoordinates);
        add(255, 257, kCoordinates);
        add(1000, 3, kCoordinates);
        add(3, 1000, kSpecials);
        add(15, 4097, kSpecials);
        add(4097, 15, kSpecials);
        // both sides multiples of 4 (a float4 path), tiles of 32 and 64 partial
        add(4, 4, kCoordinates);
        add(4, 1000, kSpecials);
        add(68, 36, kCoordinates);
        add(252, 260, kSpecials);
        // large (the GPU; the first runs halved under emulation)
        const u64 k22 = u64{1} << 22;
        add(k22, 4, kSpecials);
        add(4, k22, kSpecials);
        add(1025, 1023, kCoordinates);
        add(4097, 31, kSpecials);
        add(17, 4097, kSpecials);
        add(8192, 32768, kSpecials);
        add(32768, 8192, kSpecials);
        add(16384, 16384, kSpecials);
        return out;
    }
    static std::vector<Case> timed() {
        return {Case::of(Shape::grid(16384, 16384), dist::uniform).timed_as("16384×16384")};
    }
    static Advice advice() {
        // Where the step's conclusion found that only non-square shapes fail, every square one
        // passing (core/run/conclude.h): the transpose's own places where rows and cols swap.
        return {{"WRONG/only the non-square shapes fail",
                 "Every square shape passed and only non-square ones fail: rows and cols are "
                 "swapped somewhere, not a bounds test missing (a square matrix hides a swap). "
                 "The input is rows × cols, the output cols × rows: out[c * rows + r] = in[r * "
                 "cols + c]; a row of the input is ceil(cols / 32) tiles across and the input "
                 "has ceil(rows / 32) rows of tiles; the load tests r < rows and c < cols, the "
                 "store the output's bounds."},
                {"CRASH",
                 "If it is a tall or wide matrix (2^22×4) that fails to launch "
                 "(cudaErrorInvalidConfiguration), a grid dimension is over its limit: gridDim.y "
                 "and gridDim.z may not exceed 65,535. Put every tile on x and split the block "
                 "number in the kernel (the README: \"Tiles, and a grid on one dimension\")."}};
    }

    Transpose(const Case& c, const Setup& s)
        : Problem(c, s), in_(*this, "in", n(), values_of(c)), out_(*this, "the output", n()) {
        out_.on_overrun(
            "The output is cols × rows: a store must test the output's bounds (output row "
            "< cols, output column < rows), which are not the load's.");
    }
    cudaError_t call(void* fn, Side side) override {
        return entry<decltype(&transpose)>(fn)(in_, out_.at(side), rows(), cols(), stream());
    }
    Outcome judge() override {
        Outcome o = judge_values(
            compare(out_.get(), n(), Transposed{in_, rows(), cols()}, stream()), kBitExact);
        if (o.pass()) return o;
        o.detail = where_wrong(o.cmp);
        o.explain(where_from(o.cmp));
        o.explain(in_partial_tiles(o.cmp));
        // Whether only the non-square shapes fail is a fact of all the cases, not of this one:
        // the step's conclusion states it where it holds (and advice() says what to look at).
        return o;
    }
    Traffic traffic() const override { return Traffic().read<float>(n()).write<float>(n()); }

  private:
    u64 rows() const { return shape().rows; }
    u64 cols() const { return shape().cols; }

    // Which output rows hold the wrong elements, in the words of a matrix.
    std::string where_wrong(const Comparison& cmp) const {
        const u64 a = cmp.first / rows(), b = cmp.last / rows();
        std::string s = std::to_string(cmp.wrong) + " of " + std::to_string(cmp.checked) +
                        " output elements " + (cmp.checked < n() ? "judged " : "") + "are wrong";
        if (cmp.unwritten == cmp.wrong)
            s += " (never written)";
        else if (cmp.unwritten)
            s += " (" + std::to_string(cmp.unwritten) + " never written)";
        if (a == b)
            return s + ", all in output row " + std::to_string(a) + " (input column " +
                   std::to_string(a) + ").";
        return s + ", in output rows " + std::to_string(a) + " to " + std::to_string(b) +
               " (input columns " + std::to_string(a) + " to " + std::to_string(b) + ") of " +
               std::to_string(cols()) + ".";
    }

    // With coordinates: where the first wrong elements came from.
    std::string where_from(const Comparison& cmp) const {
        if (!(test().dist == dist::coordinates) || cmp.samples.empty()) return {};
        std::string s;
        int same_place = 0, decoded = 0;
        for (std::size_t k = 0; k < cmp.samples.size() && k < 3; ++k) {
            const u64 o = cmp.samples[k].index;
            const u64 a = o / rows(), b = o % rows();  // output row a (input column), column b
            float v = 0;
            dev::copy_to_host(&v, out_.get() + o, sizeof v);
            s += (s.empty() ? "" : "; ") + at(a, b, "out") + " should hold " + at(b, a, "in");
            if (bits_of(v) == kPoisonBits) {
                s += " but was never written";
                continue;
            }
            const double d = v;
            const bool integral = d >= 0 && d == static_cast<double>(static_cast<u64>(d));
            const u64 r = integral ? static_cast<u64>(d) / 4096 : 0;
            const u64 c = integral ? static_cast<u64>(d) % 4096 : 0;
            if (integral && r < rows() && c < cols()) {
                s += " but holds " + at(r, c, "in");
                ++decoded;
                same_place += r == a && c == b;
            } else {
                s += " but holds " + format_value(v) + ", which is no element of in";
            }
        }
        s = "With in(r, c) = r·4096 + c: " + s + ".";
        if (decoded && same_place == decoded)
            s += " Not transposed: the elements stayed at their own coordinates (the store used "
                 "the load's coordinates, or the matrix was copied).";
        else if (decoded && compare(out_.get(), n(), Copied{in_}, stream()).wrong == 0)
            s += " The output is a copy of the input: out[i] = in[i], not transposed.";
        return s;
    }

    // Whether every wrong element lies in a partial tile along the right or bottom edge.
    std::string in_partial_tiles(const Comparison& cmp) const {
        const u64 full_rows = rows() / kTileSide * kTileSide;
        const u64 full_cols = cols() / kTileSide * kTileSide;
        if (full_rows == rows() && full_cols == cols()) return {};  // no partial tile
        if (full_rows == 0 || full_cols == 0) return {};  // only partial tiles: nothing to tell
        const Comparison inner = compare(
            out_.get(), n(),
            TransposedInFullTiles{in_, out_.get(), rows(), cols(), full_rows, full_cols}, stream());
        if (inner.wrong != 0 || cmp.wrong == 0) return {};
        return "Every wrong element lies in the partial tiles along the right or bottom edge of "
               "the input (" +
               std::to_string(rows()) + "×" + std::to_string(cols()) +
               ": a side that is not a multiple of 32); the full tiles are right. Look at the "
               "bounds tests: a missing one, or a store phase that tests the load's bounds "
               "instead of the output's (output row < cols, output column < rows).";
    }

    Input<float> in_;
    Output<float> out_;
};
CUDALINGS_PROBLEM(Transpose);

// ---------------------------------------------------------------- index arrays
enum Pattern : int { kIdentity = 0, kWindows = 1, kSpread = 2, kRepeats = 3 };
constexpr u64 kWindow = 1024;  // elements per window of the windowed shuffle (4 KiB of floats)

// A 4-round Feistel network on 2·half bits: a bijection of [0, 4^half), with its inverse.
struct Feistel {
    u64 key;
    unsigned half;
    __host__ __device__ u64 f(u64 x, int round) const {
        return splitmix64(x ^ key ^ (0x9e3779b97f4a7c15ull * static_cast<u64>(round + 1))) &
               ((u64{1} << half) - 1);
    }
    __host__ __device__ u64 forward(u64 x) const {
        u64 l = x >> half, r = x & ((u64{1} << half) - 1);
        for (int k = 0; k < 4; ++k) {
            const u64 t = l ^ f(r, k);
            l = r;
            r = t;
        }
        return (l << half) | r;
    }
    __host__ __device__ u64 inverse(u64 y) const {
        u64 l = y >> half, r = y & ((u64{1} << half) - 1);
        for (int k = 3; k >= 0; --k) {
            const u64 t = r ^ f(l, k);
            r = l;
            l = t;
        }
        return (l << half) | r;
    }
};

// A permutation of [0, m) (or its inverse): the Feistel network on the smallest power of four
// >= m, applied again while the result is >= m (cycle-walking; at most 4 tries on average).
__host__ __device__ inline u64 permute(u64 x, u64 m, u64 key, bool inverse) {
    if (m <= 1) return 0;
    unsigned bits = 0;
    while ((u64{1} << bits) < m) ++bits;
    const Feistel net{key, (bits + 1) / 2};
    u64 y = x;
    do {
        y = inverse ? net.inverse(y) : net.forward(y);
    } while (y >= m);
    return y;
}

struct IndexGen {
    int pattern;
    u64 n;
    // index[i], or with `inverse` the i with index[i] = j (permutations only)
    __host__ __device__ u64 map(u64 base, u64 i, bool inverse) const {
        switch (pattern) {
            case kIdentity:
                return i;
            case kWindows: {
                const u64 w0 = i / kWindow * kWindow, m = n - w0 < kWindow ? n - w0 : kWindow;
                return w0 + permute(i - w0, m, splitmix64(base ^ w0), inverse);
            }
            case kSpread:
                return permute(i, n, base, inverse);
            default:  // kRepeats: any index, several outputs may read the same input
                return element_hash(base, i) % n;
        }
    }
    __host__ __device__ std::uint32_t operator()(u64 base, u64 i) const {
        return static_cast<std::uint32_t>(map(base, i, false));
    }
};

const char* pattern_text(int p) {
    switch (p) {
        case kIdentity:
            return "index: identity";
        case kWindows:
            return "index: shuffled within windows of 1024 (4 KiB)";
        case kSpread:
            return "index: a permutation spread over the whole array";
        default:
            return "index: random, with repeats";
    }
}

Case index_case(u64 n, Dist d, int pattern) {
    Case c = Case::of(n, d);
    if (d == dist::wide) c.with("specials", 1, kSpecialsText);
    return c.with("pattern", pattern, pattern_text(pattern));
}

// n around packs of 4, a warp, a block, a window of 1024 (partial windows), the emulator's cap,
// large, and the timed size; cycling through the patterns and two kinds of values.
std::vector<Case> index_cases(const std::vector<int>& patterns) {
    const u64 mi = u64{1} << 20;
    const u64 sizes[] = {1,    2,    3,    4,     5,      7,       31,
                         33,   255,  256,  257,   1000,   1023,    1024,
                         1025, 2049, 4097, 65539, mi + 3, 16 * mi, u64{1} << 28};
    const Dist dists[] = {dist::uniform, dist::wide, dist::small_integers};
    std::vector<Case> out;
    std::size_t k = 0;
    for (u64 n : sizes) {
        out.push_back(index_case(n, dists[(k + k / 3) % 3], patterns[k % patterns.size()]));
        ++k;
    }
    // every pattern at a size with partial windows
    for (int p : patterns) out.push_back(index_case(3 * kWindow + 7, dist::uniform, p));
    return out;
}

std::vector<Case> index_timed() {
    const u64 n = u64{1} << 28;
    return {index_case(n, dist::uniform, kIdentity).timed_as("identity"),
            index_case(n, dist::uniform, kWindows).timed_as("shuffled in 4 KiB"),
            index_case(n, dist::uniform, kSpread).timed_as("spread")};
}

struct Gathered {  // out[i] = in[index[i]]
    const float* in;
    const std::uint32_t* index;
    __host__ __device__ Want operator()(u64 i) const { return Want::exactly_as(in[index[i]]); }
};
struct Scattered {  // out[index[i]] = in[i], so out[j] = in[i] with index[i] = j
    const float* in;
    IndexGen gen;
    u64 base;
    __host__ __device__ Want operator()(u64 j) const {
        return Want::exactly_as(in[gen.map(base, j, true)]);
    }
};

// What both index problems have: in, index, out.
class IndexProblem : public Problem {
  public:
    static constexpr bool kSampledValues = true;  // each out element from in and index alone
    IndexProblem(const Case& c, const Setup& s)
        : Problem(c, s),
          in_(*this, "in", n(), values_of(c)),
          index_(*this, "index", n(), IndexGen{pattern(), n()}),
          out_(*this, "the output", n()) {}
    // Read the index and in, write out: 12 bytes per element.
    Traffic traffic() const override {
        return Traffic().read<unsigned>(n()).read<float>(n()).write<float>(n());
    }

  protected:
    int pattern() const { return static_cast<int>(params().integer("pattern")); }
    Comparison gathered() const {
        return compare(out_.get(), n(), Gathered{in_, index_}, stream());
    }
    Comparison scattered() const {
        return compare(out_.get(), n(), Scattered{in_, IndexGen{pattern(), n()}, index_.base()},
                       stream());
    }
    Input<float> in_;
    Input<std::uint32_t> index_;
    Output<float> out_;
};

class Gather : public IndexProblem {
  public:
    static constexpr const char* kName = "gather";
    static constexpr const char* kSymbol = "gather";
    static std::vector<Case> cases() {
        return index_cases({kSpread, kWindows, kIdentity, kRepeats});
    }
    static std::vector<Case> timed() { return index_timed(); }
    using IndexProblem::IndexProblem;
    cudaError_t call(void* fn, Side side) override {
        return entry<decltype(&gather)>(fn)(in_, index_, out_.at(side), n(), stream());
    }
    Outcome judge() override {
        Outcome o = judge_values(gathered(), kBitExact);
        if (o.pass() || pattern() == kRepeats || pattern() == kIdentity) return o;
        if (scattered().wrong == 0)
            o.explain(
                "Every element is where a scatter puts it: out[index[i]] = in[i] is step "
                "7. A gather reads through the index and writes in order: out[i] = "
                "in[index[i]].");
        return o;
    }
};
CUDALINGS_PROBLEM(Gather);

class Scatter : public IndexProblem {
  public:
    static constexpr const char* kName = "scatter";
    static constexpr const char* kSymbol = "scatter";
    static std::vector<Case> cases() { return index_cases({kSpread, kWindows, kIdentity}); }
    static std::vector<Case> timed() { return index_timed(); }
    using IndexProblem::IndexProblem;
    cudaError_t call(void* fn, Side side) override {
        return entry<decltype(&scatter)>(fn)(in_, index_, out_.at(side), n(), stream());
    }
    Outcome judge() override {
        Outcome o = judge_values(scattered(), kBitExact);
        if (o.pass() || pattern() == kIdentity) return o;
        if (gathered().wrong == 0)
            o.explain(
                "Every element is where a gather puts it: out[i] = in[index[i]] is step "
                "6. A scatter reads in order and writes where the index points: "
                "out[index[i]] = in[i] (the two agree only when index is its own "
                "inverse, like the identity).");
        return o;
    }
};
CUDALINGS_PROBLEM(Scatter);

}  // namespace
