#include "judge.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "../core/run/cases.h"

namespace kit {

std::string format_value(float v) {
    const std::uint32_t bits = bits_of(v);
    if (bits == kPoisonBits) return "NaN (never written)";
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    return format_number(v, 9);
}

std::string format_value(std::uint32_t v) {
    return v == kPoisonBits ? std::string("never written") : std::to_string(v);
}

std::string format_value(int v) { return format_value(static_cast<std::uint32_t>(v)); }

std::string format_want(const Want& w, bool integer) {
    if (w.exact_bits) {
        if (integer) return std::to_string(w.bits);
        float f;
        std::memcpy(&f, &w.bits, 4);
        return format_value(f);
    }
    return integer ? std::to_string(static_cast<long long>(w.value)) : format_number(w.value, 9);
}

namespace detail {

CompareCounts* new_counts(cudaStream_t s) {
    auto* counts = static_cast<CompareCounts*>(dev::allocate(sizeof(CompareCounts)));
    const CompareCounts init{0, 0, ~0ull, 0};
    DEV_CHECK(cudaMemcpyAsync(counts, &init, sizeof init, cudaMemcpyHostToDevice, s));
    return counts;
}

namespace {
std::function<bool(const void*, ElementRanges*)>& sampled_provider() {
    static std::function<bool(const void*, ElementRanges*)> provider;
    return provider;
}
}  // namespace

bool sampled_ranges(const void* got, ElementRanges* out) {
    const auto& provider = sampled_provider();
    return provider && provider(got, out);
}

void set_sampled_ranges(std::function<bool(const void*, ElementRanges*)> ranges) {
    sampled_provider() = std::move(ranges);
}

Comparison finish_counts(CompareCounts* counts, u64 n, cudaStream_t s) {
    dev::sync_stream(s);
    CompareCounts out;
    dev::copy_to_host(&out, counts, sizeof out);
    dev::release(counts);
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

}  // namespace detail

namespace {

template <typename T>
Comparison compare_one(const T* got, const Want& want) {
    Comparison c;
    c.checked = 1;
    T g;
    dev::copy_to_host(&g, got, sizeof g);
    if (!want.accepts(g)) {
        c.wrong = 1;
        c.unwritten = bits_of(g) == kPoisonBits;
        c.samples.push_back({0, format_value(g), format_want(want, !std::is_floating_point_v<T>)});
    }
    return c;
}

}  // namespace

Comparison compare_scalar(const float* got, const Want& want) { return compare_one(got, want); }
Comparison compare_scalar(const std::uint32_t* got, const Want& want) {
    return compare_one(got, want);
}

std::string describe_mismatches(u64 n, const Comparison& c) {
    return cudalings::describe_mismatches({n, c.wrong, c.unwritten, c.first, c.last});
}

Outcome judge_values(const Comparison& cmp, const std::string& tolerance, const std::string& what) {
    Outcome o;
    o.cmp = cmp;
    o.tolerance = tolerance;
    if (!cmp.wrong) return o;
    o.status = Status::Wrong;
    o.reason = (what.empty() ? "" : what + ": ") +
               (cmp.unwritten == cmp.wrong ? "unwritten output" : "values");
    o.detail = describe_mismatches(cmp.checked, cmp);
    return o;
}

Outcome judge_parts(const std::vector<Part>& parts) {
    const Part* first_wrong = nullptr;
    std::string wrong, right;
    for (const auto& p : parts) {
        if (p.cmp.wrong) {
            if (!first_wrong) first_wrong = &p;
            if (!wrong.empty()) wrong += ", ";
            wrong += p.name + " in " + std::to_string(p.cmp.wrong) + " of " +
                     std::to_string(p.cmp.checked) + " " + p.unit + "s";
            if (p.cmp.unwritten == p.cmp.wrong) wrong += " (never written)";
        } else {
            if (!right.empty()) right += ", ";
            right += p.name;
        }
    }
    if (!first_wrong) {
        Outcome o;
        o.tolerance = parts.empty() ? "" : parts.front().tolerance;
        return o;
    }
    Outcome o = judge_values(first_wrong->cmp, first_wrong->tolerance, first_wrong->name);
    o.detail = "Wrong: " + wrong + "." + (right.empty() ? "" : " Right: " + right + ".") +
               " The mismatches shown are those of " + first_wrong->name + "; an index is a " +
               first_wrong->unit + " number.";
    return o;
}

namespace {

// What a wrong whole sum most likely means, in a sentence or two.
std::string explain_sum(float got, const SumStats& exact, double bound, u64 n) {
    if (bits_of(got) == kPoisonBits)
        return "The sum still holds the NaN the checker put there before the call: nothing wrote "
               "it. Does one thread write the final result, and does the last pass write to the "
               "output rather than to the workspace?";
    if (std::isnan(got))
        return "The sum is NaN, but not the checker's marker: a NaN got into it. Outputs and the "
               "workspace hold NaN when you are called, and shared memory holds garbage: is "
               "something read before it is written (an accumulator never zeroed, a slot no "
               "thread filled, a partial of a block that does not exist)?";
    if (std::isinf(got)) return "The sum is infinite: values from outside the input were added.";
    if (got == 0.0f)
        return "The sum is exactly 0: no element reached it. Are the elements loaded at all (for "
               "a small n: the tail)? Is the block's sum complete before it is written?";
    const double off = std::fabs(static_cast<double>(got) - exact.sum);
    std::string s =
        "Off by " + format_number(off) +
        (bound > 0 ? ", that is " + format_number(off / bound) + " times the tolerance." : ".");
    // With inputs of one sign the ratio says how much of the input was counted.
    if (std::fabs(exact.sum) >= 0.999 * exact.sum_abs) {
        const double ratio = got / exact.sum;
        if (ratio > 0 && ratio < 1)
            s += " Your sum is " + format_number(100 * ratio) + "% of the exact one: about " +
                 format_number(std::round((1 - ratio) * static_cast<double>(n))) + " of the " +
                 std::to_string(n) +
                 " elements are never added (the elements past the last whole block? the last, "
                 "partial block? a pass that stops early?).";
        else if (ratio > 1)
            s += " Your sum is " + format_number(ratio) +
                 " times the exact one: some elements are added more than once (do two threads or "
                 "two blocks read the same elements?).";
        else if (ratio < 0)
            s += " Your sum has the wrong sign.";
    } else if (exact.sum != 0 && std::fabs(got / exact.sum - 1.0) > 0.01) {
        s += " That is no rounding error: elements are missing or counted twice.";
    }
    return s;
}

}  // namespace

Outcome judge_sum(const float* got, const SumStats& exact, double bound, u64 n,
                  const std::string& tolerance) {
    Outcome o = judge_values(compare_scalar(got, Want::near(exact.sum, bound)), tolerance);
    if (o.pass()) return o;
    float g;
    dev::copy_to_host(&g, got, sizeof g);
    o.detail = explain_sum(g, exact, bound, n);
    return o;
}

// ---------------------------------------------------------------- compactions
namespace {

__global__ void written_past_kernel(const std::uint32_t* got, u64 from, u64 to,
                                    detail::CompareCounts* out) {
    detail::Tally tally;
    for (u64 i = from + blockIdx.x * u64{blockDim.x} + threadIdx.x; i < to;
         i += u64{gridDim.x} * blockDim.x)
        if (got[i] != kPoisonBits) tally.add(i, got[i]);
    tally.merge_into(out);
}

// Two keyed, order-independent sums over the bits of n floats: equal for the same multiset.
__global__ void multiset_kernel(const std::uint32_t* x, u64 n, unsigned long long* out) {
    unsigned long long a = 0, b = 0;
    for (u64 i = blockIdx.x * u64{blockDim.x} + threadIdx.x; i < n;
         i += u64{gridDim.x} * blockDim.x) {
        a += splitmix64(x[i] ^ 0x5157a5ull);
        b += splitmix64((u64{x[i]} << 17) ^ 0xc0ffee1234ull);
    }
    atomicAdd(&out[0], a);
    atomicAdd(&out[1], b);
}

std::pair<u64, u64> multiset(const float* x, u64 n, cudaStream_t s) {
    dev::Array<unsigned long long> sums(2);
    dev::fill_bytes(sums.get(), 0, 2 * sizeof(unsigned long long), s);
    if (n)
        multiset_kernel<<<detail::grid_for(n), 256, 0, s>>>(
            reinterpret_cast<const std::uint32_t*>(x), n, sums.get());
    DEV_CHECK(cudaGetLastError());
    dev::sync_stream(s);
    unsigned long long out[2];
    dev::copy_to_host(out, sums.get(), sizeof out);
    return {out[0], out[1]};
}

}  // namespace

Outcome judge_compacted(const float* got, const std::uint32_t* got_count, const float* want,
                        u64 want_count, u64 capacity, bool ordered, cudaStream_t s) {
    Outcome o;
    o.tolerance =
        "exact: a compaction moves bits, so the kept elements must be the inputs' own "
        "bits" +
        std::string(ordered ? ", in input order" : ", in any order");
    std::uint32_t count = 0;
    dev::copy_to_host(&count, got_count, sizeof count);
    if (count != want_count) {
        o.status = Status::Wrong;
        o.cmp.checked = 1;
        o.cmp.wrong = 1;
        o.cmp.unwritten = count == kPoisonBits;
        o.cmp.samples.push_back({0, format_value(count), std::to_string(want_count)});
        o.reason = count == kPoisonBits ? "count: unwritten output" : "count";
        o.detail =
            count == kPoisonBits
                ? "*count still holds the poison the checker put there: nothing wrote it."
                : "*count is " + std::to_string(count) + ", but " + std::to_string(want_count) +
                      " elements pass the predicate" +
                      (count > want_count ? " (elements counted twice?)" : " (elements lost?)") +
                      ".";
        return o;
    }
    // Nothing past the kept elements.
    {
        detail::CompareCounts* counts = detail::new_counts(s);
        if (want_count < capacity)
            written_past_kernel<<<detail::grid_for(capacity - want_count), 256, 0, s>>>(
                reinterpret_cast<const std::uint32_t*>(got), want_count, capacity, counts);
        DEV_CHECK(cudaGetLastError());
        Comparison tail = detail::finish_counts(counts, capacity, s);
        if (tail.wrong) {
            o.status = Status::Wrong;
            o.cmp = tail;
            o.reason = "wrote past the kept elements";
            o.detail = std::to_string(tail.wrong) + " element" + (tail.wrong == 1 ? "" : "s") +
                       " of out[" + std::to_string(want_count) + " .. " + std::to_string(capacity) +
                       ") changed (the first at index " + std::to_string(tail.first) +
                       "): only the kept elements may be written; the rest of out must keep what "
                       "it held.";
            return o;
        }
    }
    const Comparison cmp = compare(got, want_count, EqualArray<float>{want}, s);
    if (!cmp.wrong) return o;
    const bool same_elements = multiset(got, want_count, s) == multiset(want, want_count, s);
    if (same_elements && !ordered) return o;
    o = judge_values(cmp, o.tolerance);
    if (same_elements) {
        o.reason = "order: the compaction is not stable";
        o.detail = "The right elements, but not in input order (" + std::to_string(cmp.wrong) +
                   " of " + std::to_string(want_count) +
                   " positions differ): a stable compaction keeps the order of the input. "
                   "Output positions must come from a scan of the keep flags in index order, not "
                   "from the order in which blocks or warps happen to reserve space.";
    }
    return o;
}

// ---------------------------------------------------------------- sums in double
namespace {

// Per block: [2b] the sum of its threads' elements, [2b + 1] the sum of their magnitudes.
__global__ void sum_double_kernel(const float* x, u64 n, double* partials) {
    __shared__ double sums[256], magnitudes[256];
    double sum = 0, magnitude = 0;
    for (u64 i = blockIdx.x * u64{blockDim.x} + threadIdx.x; i < n;
         i += u64{gridDim.x} * blockDim.x) {
        const double v = x[i];
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

__global__ void segment_stats_kernel(const float* x, u64 n, u64 segment, u64 count,
                                     SegmentStats* out) {
    for (u64 k = blockIdx.x * u64{blockDim.x} + threadIdx.x; k < count;
         k += u64{gridDim.x} * blockDim.x) {
        const u64 begin = k * segment;
        const u64 end = begin + segment < n ? begin + segment : n;
        SegmentStats r;
        r.max = x[begin];
        r.min = x[begin];
        r.argmax = begin;
        for (u64 i = begin; i < end; ++i) {
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

}  // namespace

SumStats sum_in_double(const float* x, u64 n, cudaStream_t s) {
    const unsigned blocks = std::min(detail::grid_for(n), 1024u);  // blocks of exactly 256
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

void segment_stats(const float* x, u64 n, u64 segment, SegmentStats* out, cudaStream_t s) {
    if (n == 0 || segment == 0) return;
    const u64 count = (n + segment - 1) / segment;
    segment_stats_kernel<<<detail::grid_for(count), 256, 0, s>>>(x, n, segment, count, out);
    DEV_CHECK(cudaGetLastError());
}

}  // namespace kit
