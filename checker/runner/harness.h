// Building blocks every lesson spec uses: generated inputs that can prove they were not
// modified, outputs with guard zones that are poisoned before every call, a device-side
// comparison that reports the first mismatches, and the call wrapper that turns the
// learner's CUDA errors into case results.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "device.h"

namespace harness {

// Blocks of `block` threads for a grid-stride loop over n items: one block per `block` items,
// at least one, at most 8192 (enough to fill any GPU without a launch per element).
unsigned grid_for(std::uint64_t n, unsigned block = 256);

// ---------------------------------------------------------------- input distributions
enum class Dist {
    Uniform,        // uniform in [-1, 1)
    Wide,           // ±(1+u)·2^k, k in [-20, 20]: negative values, many magnitudes
    Large,          // ±(1+u)·2^k, k in [60, 100]: large magnitudes
    SmallIntegers,  // integers in [-100, 100]: sums are exact
    AllEqual,       // one value repeated
    Alternating,    // +x, -y, +z, ...: cancellation
    Positive,       // uniform in [0, 1)
    // Sums far from zero by construction, for reductions (|sum| > Σ|x| / 17 for any n):
    OffsetScale,       // s·(o + v): per array a sign, a scale 2^k (k in [-16, 16]) and an
                       // offset o in [1.25, 3.25); v uniform in [-1, 1). One sign.
    AlternatingPairs,  // s·(m + e), s·(e' - m): pairs that nearly cancel, m in [1, 2) shared by
                       // the pair, e, e' in [1/8, 1/4); s = ±2^k, k in [-12, 12]
    HugeOneSign,       // ±(1+u)·2^k, k in [88, 90], one sign per array: a sum of 2^28 of them
                       // stays below float's largest value
};
const char* describe(Dist d);

// The value of element `index` of generated array `stream` for this seed: a counter-based
// hash, so any element can be recomputed anywhere (on the device, for any n, in O(1)).
__host__ __device__ float sample(Dist d, std::uint64_t base, std::uint64_t index);
std::uint64_t stream_base(std::uint64_t seed, std::uint64_t stream);

// ---------------------------------------------------------------- cases
struct CaseDef {
    std::uint64_t n = 0;
    Dist dist = Dist::Uniform;
    std::string name;  // "n=33, uniform in [-1, 1)"
};
// The standard size ladder, cycling through `dists`.
std::vector<CaseDef> ladder(const std::vector<Dist>& dists);

// The sum of n device floats and the sum of their magnitudes, accumulated in double on the
// device (per thread, then per block) and finished on the host in a fixed order: the same
// answer every time, with an error far below any float tolerance (n <= 2^28).
struct SumStats {
    double sum = 0;
    double sum_abs = 0;
};
SumStats sum_in_double(const float* x, std::uint64_t n, cudaStream_t s);

// Statistics of a run of floats, computed on the device: the sums in double precision (their
// own rounding, about 1e-16 relative, is far below any float tolerance; integer data sum
// exactly), max, min and argmax exactly.
struct SegmentStats {
    double sum = 0;            // the sum of the elements
    double abs_sum = 0;        // the sum of their magnitudes: it bounds the rounding error of
                               // any float sum of them (see a lesson spec's tolerance)
    float max = 0, min = 0;    // the largest and smallest element
    std::uint64_t argmax = 0;  // the smallest index i (global) with x[i] == max
};

// One SegmentStats per run of `segment` consecutive elements of x (the last run may be
// shorter), written to the device array `out` of ceil(n / segment) entries. One thread walks
// each run in index order: meant for short runs (a warp, a block), not for the whole array.
void segment_stats(const float* x, std::uint64_t n, std::uint64_t segment, SegmentStats* out,
                   cudaStream_t s);

// ---------------------------------------------------------------- buffers
inline constexpr std::uint32_t kPoisonBits = 0x7fdeadbfu;  // a quiet NaN no arithmetic makes
inline constexpr unsigned char kGuardByte = 0xcd;
inline constexpr std::size_t kFrontGuard = 256;  // keeps the data 256-byte aligned
inline constexpr std::size_t kBackGuard = 64 * 1024;

// A float input whose values are sample(dist, base, i).
class Input {
  public:
    Input(std::uint64_t n, Dist d, std::uint64_t seed, std::uint64_t stream, cudaStream_t s);
    const float* get() const { return data_.get(); }
    std::uint64_t size() const { return n_; }
    // Elements that no longer hold their generated value.
    std::uint64_t changed(cudaStream_t s) const;
    // New values from another seed (for fresh inputs before every timed call).
    void regenerate(std::uint64_t seed, std::uint64_t stream, cudaStream_t s);

  private:
    std::uint64_t n_;
    Dist dist_;
    std::uint64_t base_;
    dev::Array<float> data_;
};

struct GuardReport {
    bool hit = false;
    std::string side;           // "before" or "after"
    std::uint64_t bytes = 0;    // guard bytes changed
    std::uint64_t nearest = 0;  // distance in bytes from the data to the nearest change
    std::uint64_t farthest = 0;
};

// 4-byte elements (float, int, unsigned) with guard zones on both sides.
template <typename T>
class Output {
    static_assert(sizeof(T) == 4, "outputs are 4-byte elements");

  public:
    explicit Output(std::uint64_t n);
    ~Output();
    Output(const Output&) = delete;
    Output& operator=(const Output&) = delete;
    T* get() const { return reinterpret_cast<T*>(base_ + kFrontGuard); }
    std::uint64_t size() const { return n_; }
    void poison(cudaStream_t s);  // every element := kPoisonBits, guards := kGuardByte
    GuardReport check_guards(cudaStream_t s) const;

  private:
    std::uint64_t n_;
    unsigned char* base_;
};

// ---------------------------------------------------------------- comparison
struct Tolerance {
    bool exact = true;
    double rel = 0;  // |got - expected| <= abs + rel * |expected|
    double abs = 0;
    std::string why;  // told to the learner
};

struct MismatchSample {
    std::uint64_t index;
    std::string got, expected;
};

struct Comparison {
    std::uint64_t checked = 0;  // output elements compared
    std::uint64_t wrong = 0, unwritten = 0, first = 0, last = 0;
    std::vector<MismatchSample> samples;  // the first few, by index
};

// got (4-byte floats, may hold the poison) against expected, both on the device.
Comparison compare(const float* got, const float* expected, std::uint64_t n, const Tolerance& t,
                   cudaStream_t s);
// A single value computed in double, for reductions.
Comparison compare_scalar(const float* got, double expected, const Tolerance& t);
// Float results against double values with a bound per element, on the device: element i
// passes when |got[i] - expected[i]| <= bound[i] (a NaN never does; bound 0 asks for the exact
// value).
Comparison compare_within(const float* got, const double* expected, const double* bound,
                          std::uint64_t n, cudaStream_t s);

// 4-byte unsigned integers (indices, counts) that must match exactly, on the device. An element
// still holding kPoisonBits counts as unwritten.
Comparison compare_u32(const std::uint32_t* got, const std::uint32_t* expected, std::uint64_t n,
                       cudaStream_t s);

std::string format_value(float v);  // "0.123456791", "NaN (never written)", "inf"

// ---------------------------------------------------------------- outcome of a case
struct CaseOutcome {
    std::string status = "pass";  // pass | wrong | memory | cuda_error
    std::string reason;           // sub-reason
    std::string detail;
    Comparison cmp;
    std::string tolerance;
};

// The usual order of checks after a call: guards, then inputs, then values.
CaseOutcome judge(const GuardReport& guards, std::uint64_t inputs_changed, const Comparison& cmp,
                  const Tolerance& t);

// A one-float result (a whole sum) and an optional workspace, judged in order: the output's
// guards, the workspace's, the input, then the value. The lesson says what a guard hit means
// and words a wrong value.
struct ScalarJudging {
    std::string output_name;       // "out[0]": "guard zone after out[0] hit"
    std::string output_advice;     // who may write the output, after the bytes that changed
    std::string workspace_advice;  // what overran the workspace, after where it changed
    std::function<std::string(const Comparison&)> explain;  // a wrong value, in words
};
CaseOutcome judge_scalar(const Output<float>& out, const Output<float>* workspace, const Input& in,
                         double expected, const Tolerance& t, const ScalarJudging& how,
                         cudaStream_t s);

// ---------------------------------------------------------------- calling the learner
// A CUDA error raised by the learner's call (returned, or found at the device sync after it).
struct LearnerError {
    cudaError_t code;
    bool returned;  // returned by the host function rather than found by the sync
};

class Ctx {
  public:
    Ctx(cudaStream_t s, std::function<void(const char*)> emit)
        : stream(s), emit_(std::move(emit)) {}
    cudaStream_t stream;
    // Runs the learner's host function, then synchronizes the whole device. Throws
    // LearnerError on any CUDA error.
    void call(const std::function<cudaError_t()>& f);

  private:
    std::function<void(const char*)> emit_;
};

}  // namespace harness
