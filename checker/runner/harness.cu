#include "harness.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "../core/cases.h"

namespace harness {

unsigned grid_for(std::uint64_t n, unsigned block) {
    std::uint64_t blocks = (n + block - 1) / block;
    return static_cast<unsigned>(std::min<std::uint64_t>(blocks ? blocks : 1, 8192));
}

namespace {

__host__ __device__ inline std::uint64_t splitmix64(std::uint64_t z) {
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

__global__ void generate_kernel(float* out, std::uint64_t n, Dist d, std::uint64_t base) {
    for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < n;
         i += std::uint64_t{gridDim.x} * blockDim.x)
        out[i] = sample(d, base, i);
}

__global__ void count_changed_kernel(const float* in, std::uint64_t n, Dist d, std::uint64_t base,
                                     unsigned long long* changed) {
    unsigned long long local = 0;
    for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < n;
         i += std::uint64_t{gridDim.x} * blockDim.x) {
        float want = sample(d, base, i);
        local += __float_as_uint(in[i]) != __float_as_uint(want);
    }
    if (local) atomicAdd(changed, local);
}

// Per block: [2b] the sum of its threads' elements, [2b + 1] the sum of their magnitudes.
__global__ void sum_double_kernel(const float* x, std::uint64_t n, double* partials) {
    __shared__ double sums[256], magnitudes[256];
    double sum = 0, magnitude = 0;
    for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < n;
         i += std::uint64_t{gridDim.x} * blockDim.x) {
        double v = x[i];
        sum += v;
        magnitude += fabs(v);
    }
    sums[threadIdx.x] = sum;
    magnitudes[threadIdx.x] = magnitude;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            sums[threadIdx.x] += sums[threadIdx.x + s];
            magnitudes[threadIdx.x] += magnitudes[threadIdx.x + s];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        partials[2 * blockIdx.x] = sums[0];
        partials[2 * blockIdx.x + 1] = magnitudes[0];
    }
}

__global__ void poison_kernel(std::uint32_t* out, std::uint64_t n) {
    for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < n;
         i += std::uint64_t{gridDim.x} * blockDim.x)
        out[i] = kPoisonBits;
}

// result: [0] changed bytes, [1] min distance, [2] max distance
__global__ void guard_kernel(const unsigned char* guard, std::uint64_t bytes, bool before,
                             unsigned long long* result) {
    for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < bytes;
         i += std::uint64_t{gridDim.x} * blockDim.x) {
        if (guard[i] != kGuardByte) {
            // distance from the data: the guard before the data is counted backwards
            unsigned long long distance = before ? bytes - 1 - i : i;
            atomicAdd(&result[0], 1ull);
            atomicMin(&result[1], distance);
            atomicMax(&result[2], distance);
        }
    }
}

struct CompareCounts {
    unsigned long long wrong, unwritten, first, last;
};

// One thread's tally of mismatches over its grid-stride elements, merged into the shared
// counters once at the end (one set of atomics per thread, not per element). Every compare
// kernel uses it, whatever its notion of "equal".
struct MismatchTally {
    unsigned long long wrong = 0, unwritten = 0, first = ~0ull, last = 0;
    __device__ void add(std::uint64_t i, std::uint32_t got_bits) {
        ++wrong;
        unwritten += got_bits == kPoisonBits;
        first = i < first ? i : first;
        last = i > last ? i : last;
    }
    __device__ void merge_into(CompareCounts* out) const {
        if (!wrong) return;
        atomicAdd(&out->wrong, wrong);
        atomicAdd(&out->unwritten, unwritten);
        atomicMin(&out->first, first);
        atomicMax(&out->last, last);
    }
};

// Runs a compare kernel (launch(counters)) over n elements into fresh counters: the
// comparison's counts and the range of the mismatches. Every compare function starts here.
template <typename Launch>
Comparison count_mismatches(std::uint64_t n, Launch launch, cudaStream_t s) {
    dev::Array<CompareCounts> counts(1);
    CompareCounts init{0, 0, ~0ull, 0};
    DEV_CHECK(cudaMemcpyAsync(counts.get(), &init, sizeof init, cudaMemcpyHostToDevice, s));
    launch(counts.get());
    DEV_CHECK(cudaGetLastError());
    dev::sync_stream(s);
    CompareCounts out;
    dev::copy_to_host(&out, counts.get(), sizeof out);
    Comparison c;
    c.checked = n;
    c.wrong = out.wrong;
    c.unwritten = out.unwritten;
    if (c.wrong) {
        c.first = out.first;
        c.last = out.last;
    }
    return c;
}

// How many elements, from the first mismatch on, to bring back to list the first few.
std::uint64_t sample_window(const Comparison& c) {
    return std::min<std::uint64_t>(4096, c.checked - c.first);
}

__global__ void compare_kernel(const float* got, const float* expected, std::uint64_t n, bool exact,
                               double rel, double abs_tol, CompareCounts* out) {
    MismatchTally tally;
    for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < n;
         i += std::uint64_t{gridDim.x} * blockDim.x) {
        float g = got[i], e = expected[i];
        bool ok;
        if (exact) {
            ok = g == e || (isnan(e) && isnan(g) && __float_as_uint(g) != kPoisonBits);
        } else {
            double diff = fabs(double(g) - double(e));
            ok = diff <= abs_tol + rel * fabs(double(e));  // false for NaN
        }
        if (!ok) tally.add(i, __float_as_uint(g));
    }
    tally.merge_into(out);
}

bool mismatch_host(float g, float e, const Tolerance& t) {
    if (t.exact) {
        std::uint32_t gb;
        std::memcpy(&gb, &g, 4);
        return !(g == e || (std::isnan(e) && std::isnan(g) && gb != kPoisonBits));
    }
    double diff = std::fabs(double(g) - double(e));
    return !(diff <= t.abs + t.rel * std::fabs(double(e)));
}

}  // namespace

const char* describe(Dist d) {
    switch (d) {
        case Dist::Uniform:
            return "uniform in [-1, 1)";
        case Dist::Wide:
            return "signed, magnitudes 2^-20..2^21";
        case Dist::Large:
            return "signed, magnitudes 2^60..2^101";
        case Dist::SmallIntegers:
            return "integers in [-100, 100]";
        case Dist::AllEqual:
            return "all elements equal";
        case Dist::Alternating:
            return "alternating signs";
        case Dist::Positive:
            return "uniform in [0, 1)";
        case Dist::OffsetScale:
            return "random offset and scale, ±2^k·(o + v), one sign";
        case Dist::AlternatingPairs:
            return "alternating signs, pairs that nearly cancel";
        case Dist::HugeOneSign:
            return "one sign, magnitudes 2^88..2^91";
    }
    return "?";
}

__host__ __device__ float sample(Dist d, std::uint64_t base, std::uint64_t index) {
    std::uint64_t h = splitmix64(base + index * 0xd1342543de82ef95ull);
    float u = static_cast<float>(h >> 40) * (1.0f / 16777216.0f);  // [0, 1), 24 bits
    float sign = (h & 1) ? -1.0f : 1.0f;
    switch (d) {
        case Dist::Uniform:
            return 2.0f * u - 1.0f;
        case Dist::Wide:
            return sign * ldexpf(1.0f + u, static_cast<int>((h >> 8) % 41) - 20);
        case Dist::Large:
            return sign * ldexpf(1.0f + u, 60 + static_cast<int>((h >> 8) % 41));
        case Dist::SmallIntegers:
            return static_cast<float>(static_cast<int>((h >> 8) % 201) - 100);
        case Dist::AllEqual: {
            std::uint64_t c = splitmix64(base);
            return 0.5f + static_cast<float>(c >> 40) * (1.0f / 16777216.0f);
        }
        case Dist::Alternating:
            return ((index & 1) ? -1.0f : 1.0f) * (0.5f + u);
        case Dist::Positive:
            return u;
        case Dist::OffsetScale: {
            std::uint64_t c = splitmix64(base ^ 0x0ff5e75ca1eull);  // per array
            float scale = ldexpf((c & 1) ? -1.0f : 1.0f, static_cast<int>((c >> 8) % 33) - 16);
            float offset = 1.25f + 2.0f * static_cast<float>(c >> 40) * (1.0f / 16777216.0f);
            return scale * (offset + (2.0f * u - 1.0f));  // |offset + v| >= 0.25: never 0
        }
        case Dist::AlternatingPairs: {
            std::uint64_t c = splitmix64(base ^ 0xa17e4a7e5ull);  // per array
            float scale = ldexpf((c & 1) ? -1.0f : 1.0f, static_cast<int>((c >> 8) % 25) - 12);
            // m is shared by elements 2j and 2j+1, so each pair sums to e + e' (> 1/4, up to
            // the rounding of m + e and e' - m, 2^-23 at most): the total never cancels out.
            std::uint64_t p =
                splitmix64((base ^ 0x9a1f5ull) + (index >> 1) * 0xd1342543de82ef95ull);
            float m = 1.0f + static_cast<float>(p >> 40) * (1.0f / 16777216.0f);
            float e = 0.125f * (1.0f + u);
            return scale * ((index & 1) ? e - m : m + e);
        }
        case Dist::HugeOneSign: {
            float s = (splitmix64(base ^ 0x419e0ull) & 1) ? -1.0f : 1.0f;  // per array
            return s * ldexpf(1.0f + u, 88 + static_cast<int>((h >> 8) % 3));
        }
    }
    return 0.0f;
}

std::uint64_t stream_base(std::uint64_t seed, std::uint64_t stream) {
    return splitmix64(seed ^ splitmix64(stream + 0x1234567ull));
}

std::vector<CaseDef> ladder(const std::vector<Dist>& dists) {
    std::vector<CaseDef> cases;
    auto sizes = cudalings::standard_sizes();
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        CaseDef c;
        c.n = sizes[i];
        c.dist = dists[i % dists.size()];
        c.name = "n=" + cudalings::format_size(c.n) + ", " + describe(c.dist);
        cases.push_back(c);
    }
    return cases;
}

Input::Input(std::uint64_t n, Dist d, std::uint64_t seed, std::uint64_t stream, cudaStream_t s)
    : n_(n), dist_(d), base_(stream_base(seed, stream)), data_(n) {
    generate_kernel<<<grid_for(n), 256, 0, s>>>(data_.get(), n, d, base_);
    DEV_CHECK(cudaGetLastError());
}

void Input::regenerate(std::uint64_t seed, std::uint64_t stream, cudaStream_t s) {
    base_ = stream_base(seed, stream);
    generate_kernel<<<grid_for(n_), 256, 0, s>>>(data_.get(), n_, dist_, base_);
    DEV_CHECK(cudaGetLastError());
}

std::uint64_t Input::changed(cudaStream_t s) const {
    dev::Array<unsigned long long> counter(1);
    dev::fill_bytes(counter.get(), 0, sizeof(unsigned long long), s);
    count_changed_kernel<<<grid_for(n_), 256, 0, s>>>(data_.get(), n_, dist_, base_, counter.get());
    DEV_CHECK(cudaGetLastError());
    unsigned long long changed = 0;
    dev::sync_stream(s);
    dev::copy_to_host(&changed, counter.get(), sizeof changed);
    return changed;
}

SumStats sum_in_double(const float* x, std::uint64_t n, cudaStream_t s) {
    const unsigned blocks = std::min(grid_for(n), 1024u);  // blocks of exactly 256 threads
    dev::Array<double> partials(2 * std::size_t{blocks});
    sum_double_kernel<<<blocks, 256, 0, s>>>(x, n, partials.get());
    DEV_CHECK(cudaGetLastError());
    dev::sync_stream(s);
    std::vector<double> host(2 * std::size_t{blocks});
    dev::copy_to_host(host.data(), partials.get(), host.size() * sizeof(double));
    SumStats stats;
    for (unsigned b = 0; b < blocks; ++b) {
        stats.sum += host[2 * b];
        stats.sum_abs += host[2 * b + 1];
    }
    return stats;
}

template <typename T>
Output<T>::Output(std::uint64_t n)
    : n_(n),
      base_(static_cast<unsigned char*>(dev::allocate(kFrontGuard + n * sizeof(T) + kBackGuard))) {
#ifdef CUDALINGS_EMULATOR
    // Under emulation, a learner's access into a guard zone is reported at its line.
    cudalings_emu::cudalings_emu_set_extent(get(), n * sizeof(T));
#endif
}

template <typename T>
Output<T>::~Output() {
    dev::release(base_);
}

template <typename T>
void Output<T>::poison(cudaStream_t s) {
    dev::fill_bytes(base_, kGuardByte, kFrontGuard, s);
    dev::fill_bytes(base_ + kFrontGuard + n_ * sizeof(T), kGuardByte, kBackGuard, s);
    poison_kernel<<<grid_for(n_), 256, 0, s>>>(reinterpret_cast<std::uint32_t*>(get()), n_);
    DEV_CHECK(cudaGetLastError());
}

template <typename T>
GuardReport Output<T>::check_guards(cudaStream_t s) const {
    GuardReport report;
    dev::Array<unsigned long long> result(3);
    const struct {
        const unsigned char* start;
        std::uint64_t bytes;
        bool before;
    } zones[] = {{base_, kFrontGuard, true},
                 {base_ + kFrontGuard + n_ * sizeof(T), kBackGuard, false}};
    for (const auto& z : zones) {
        unsigned long long init[3] = {0, ~0ull, 0};
        DEV_CHECK(cudaMemcpyAsync(result.get(), init, sizeof init, cudaMemcpyHostToDevice, s));
        guard_kernel<<<grid_for(z.bytes), 256, 0, s>>>(z.start, z.bytes, z.before, result.get());
        DEV_CHECK(cudaGetLastError());
        dev::sync_stream(s);
        unsigned long long out[3];
        dev::copy_to_host(out, result.get(), sizeof out);
        if (out[0] && !report.hit) {
            report.hit = true;
            report.side = z.before ? "before" : "after";
            report.bytes = out[0];
            report.nearest = out[1];
            report.farthest = out[2];
        }
    }
    return report;
}

template class Output<float>;
template class Output<int>;
template class Output<unsigned>;

std::string format_value(float v) {
    std::uint32_t bits;
    std::memcpy(&bits, &v, 4);
    if (bits == kPoisonBits) return "NaN (never written)";
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    return cudalings::format_number(v, 9);
}

Comparison compare(const float* got, const float* expected, std::uint64_t n, const Tolerance& t,
                   cudaStream_t s) {
    Comparison c = count_mismatches(
        n,
        [&](CompareCounts* counts) {
            compare_kernel<<<grid_for(n), 256, 0, s>>>(got, expected, n, t.exact, t.rel, t.abs,
                                                       counts);
        },
        s);
    if (!c.wrong) return c;
    // Bring back a window from the first mismatch and list the first few in it.
    const std::uint64_t window = sample_window(c);
    std::vector<float> g(window), e(window);
    dev::copy_to_host(g.data(), got + c.first, window * sizeof(float));
    dev::copy_to_host(e.data(), expected + c.first, window * sizeof(float));
    for (std::uint64_t i = 0; i < window && c.samples.size() < 5; ++i)
        if (mismatch_host(g[i], e[i], t))
            c.samples.push_back({c.first + i, format_value(g[i]), format_value(e[i])});
    return c;
}

Comparison compare_scalar(const float* got, double expected, const Tolerance& t) {
    Comparison c;
    c.checked = 1;
    float g;
    dev::copy_to_host(&g, got, sizeof g);
    std::uint32_t bits;
    std::memcpy(&bits, &g, 4);
    double diff = std::fabs(double(g) - expected);
    bool ok = !std::isnan(g) && diff <= t.abs + t.rel * std::fabs(expected);
    if (t.exact) ok = double(g) == expected;
    if (!ok) {
        c.wrong = 1;
        c.unwritten = bits == kPoisonBits;
        c.samples.push_back({0, format_value(g), cudalings::format_number(expected, 9)});
    }
    return c;
}

CaseOutcome judge(const GuardReport& guards, std::uint64_t inputs_changed, const Comparison& cmp,
                  const Tolerance& t) {
    CaseOutcome o;
    o.cmp = cmp;
    o.tolerance = t.why;
    if (guards.hit) {
        o.status = "memory";
        o.reason = "guard zone " + guards.side + " the output hit";
        char buf[256];
        std::snprintf(buf, sizeof buf,
                      "%llu guard byte%s %s the output changed, %llu to %llu bytes %s it: a write "
                      "outside the array (check the bounds test).",
                      static_cast<unsigned long long>(guards.bytes), guards.bytes == 1 ? "" : "s",
                      guards.side.c_str(), static_cast<unsigned long long>(guards.nearest),
                      static_cast<unsigned long long>(guards.farthest),
                      guards.side == "after" ? "past the end of" : "before the start of");
        o.detail = buf;
        return o;
    }
    if (inputs_changed) {
        o.status = "wrong";
        o.reason = "input modified";
        o.detail = std::to_string(inputs_changed) +
                   " input elements changed: the inputs are read-only (const) for a reason.";
        return o;
    }
    if (cmp.wrong) {
        o.status = "wrong";
        o.reason = cmp.unwritten == cmp.wrong ? "unwritten output" : "values";
        return o;
    }
    return o;
}

CaseOutcome judge_scalar(const Output<float>& out, const Output<float>* workspace, const Input& in,
                         double expected, const Tolerance& t, const ScalarJudging& how,
                         cudaStream_t s) {
    GuardReport guards = out.check_guards(s);
    if (guards.hit) {
        auto o = judge(guards, 0, Comparison{}, t);
        o.reason = "guard zone " + guards.side + " " + how.output_name + " hit";
        o.detail = "Bytes " + guards.side + " the one-float output changed: " + how.output_advice;
        return o;
    }
    if (workspace) {
        guards = workspace->check_guards(s);
        if (guards.hit) {
            auto o = judge(guards, 0, Comparison{}, t);
            o.reason = "guard zone " + guards.side + " the workspace hit";
            o.detail = std::to_string(guards.bytes) + " byte" + (guards.bytes == 1 ? "" : "s") +
                       " " + guards.side + " the workspace changed (" +
                       std::to_string(guards.nearest) + " to " + std::to_string(guards.farthest) +
                       " bytes " + (guards.side == "after" ? "past its end" : "before its start") +
                       "): " + how.workspace_advice;
            return o;
        }
    }
    const Comparison cmp = compare_scalar(out.get(), expected, t);
    auto o = judge(GuardReport{}, in.changed(s), cmp, t);
    if (o.status == "wrong" && o.reason != "input modified" && how.explain)
        o.detail = how.explain(cmp);
    return o;
}

void Ctx::call(const std::function<cudaError_t()>& f) {
    emit_("call_start");
    cudaError_t returned = f();
    emit_("call_end");
    // The whole device, not only the stream: work hidden on another stream must finish too.
    cudaError_t synced = dev::sync_device_status();
    cudaError_t last = dev::take_last_error();
    if (returned != cudaSuccess) throw LearnerError{returned, true};
    if (synced != cudaSuccess) throw LearnerError{synced, false};
    if (last != cudaSuccess) throw LearnerError{last, false};
}

// ---------------------------------------------------------------- segments, and comparisons
// against per-element bounds and exact integers
namespace {

__global__ void segment_stats_kernel(const float* x, std::uint64_t n, std::uint64_t segment,
                                     std::uint64_t count, SegmentStats* out) {
    for (std::uint64_t k = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; k < count;
         k += std::uint64_t{gridDim.x} * blockDim.x) {
        const std::uint64_t begin = k * segment;
        const std::uint64_t end = begin + segment < n ? begin + segment : n;
        SegmentStats r;
        r.max = x[begin];
        r.min = x[begin];
        r.argmax = begin;
        for (std::uint64_t i = begin; i < end; ++i) {
            const float v = x[i];
            r.sum += static_cast<double>(v);
            r.abs_sum += fabs(static_cast<double>(v));
            if (v > r.max) {  // strict: the first of equal maxima stays
                r.max = v;
                r.argmax = i;
            }
            r.min = v < r.min ? v : r.min;
        }
        out[k] = r;
    }
}

__global__ void compare_within_kernel(const float* got, const double* expected, const double* bound,
                                      std::uint64_t n, CompareCounts* out) {
    MismatchTally tally;
    for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < n;
         i += std::uint64_t{gridDim.x} * blockDim.x) {
        const float g = got[i];
        const bool ok = fabs(static_cast<double>(g) - expected[i]) <= bound[i];  // false for NaN
        if (!ok) tally.add(i, __float_as_uint(g));
    }
    tally.merge_into(out);
}

__global__ void compare_u32_kernel(const std::uint32_t* got, const std::uint32_t* expected,
                                   std::uint64_t n, CompareCounts* out) {
    MismatchTally tally;
    for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < n;
         i += std::uint64_t{gridDim.x} * blockDim.x)
        if (got[i] != expected[i]) tally.add(i, got[i]);
    tally.merge_into(out);
}

}  // namespace

void segment_stats(const float* x, std::uint64_t n, std::uint64_t segment, SegmentStats* out,
                   cudaStream_t s) {
    if (n == 0 || segment == 0) return;
    const std::uint64_t count = (n + segment - 1) / segment;
    segment_stats_kernel<<<grid_for(count), 256, 0, s>>>(x, n, segment, count, out);
    DEV_CHECK(cudaGetLastError());
}

Comparison compare_within(const float* got, const double* expected, const double* bound,
                          std::uint64_t n, cudaStream_t s) {
    Comparison c = count_mismatches(
        n,
        [&](CompareCounts* counts) {
            compare_within_kernel<<<grid_for(n), 256, 0, s>>>(got, expected, bound, n, counts);
        },
        s);
    if (!c.wrong) return c;
    const std::uint64_t window = sample_window(c);
    std::vector<float> g(window);
    std::vector<double> e(window), b(window);
    dev::copy_to_host(g.data(), got + c.first, window * sizeof(float));
    dev::copy_to_host(e.data(), expected + c.first, window * sizeof(double));
    dev::copy_to_host(b.data(), bound + c.first, window * sizeof(double));
    for (std::uint64_t i = 0; i < window && c.samples.size() < 5; ++i)
        if (!(std::fabs(static_cast<double>(g[i]) - e[i]) <= b[i]))
            c.samples.push_back(
                {c.first + i, format_value(g[i]), cudalings::format_number(e[i], 9)});
    return c;
}

Comparison compare_u32(const std::uint32_t* got, const std::uint32_t* expected, std::uint64_t n,
                       cudaStream_t s) {
    Comparison c = count_mismatches(
        n,
        [&](CompareCounts* counts) {
            compare_u32_kernel<<<grid_for(n), 256, 0, s>>>(got, expected, n, counts);
        },
        s);
    if (!c.wrong) return c;
    const std::uint64_t window = sample_window(c);
    std::vector<std::uint32_t> g(window), e(window);
    dev::copy_to_host(g.data(), got + c.first, window * sizeof(std::uint32_t));
    dev::copy_to_host(e.data(), expected + c.first, window * sizeof(std::uint32_t));
    for (std::uint64_t i = 0; i < window && c.samples.size() < 5; ++i)
        if (g[i] != e[i])
            c.samples.push_back(
                {c.first + i,
                 g[i] == kPoisonBits ? std::string("never written") : std::to_string(g[i]),
                 std::to_string(e[i])});
    return c;
}

}  // namespace harness
