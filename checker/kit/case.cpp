#include "case.h"

#include <stdexcept>

#include "../core/run/cases.h"

namespace kit {

std::string describe(Dist d) {
    const auto percent = [](float share) {
        return std::to_string(static_cast<int>(share * 100 + 0.5f)) + "%";
    };
    switch (d.kind) {
        case DistKind::Uniform:
            return "uniform in [-1, 1)";
        case DistKind::Wide:
            return "signed, magnitudes 2^-20..2^21";
        case DistKind::Large:
            return "signed, magnitudes 2^60..2^101";
        case DistKind::SmallIntegers:
            return "integers in [-100, 100]";
        case DistKind::TinyIntegers:
            return "integers in [-8, 8]";
        case DistKind::AllEqual:
            return "all elements equal";
        case DistKind::Alternating:
            return "alternating signs";
        case DistKind::Positive:
            return "uniform in [0, 1)";
        case DistKind::OffsetScale:
            return "random offset and scale, ±2^k·(o + v), one sign";
        case DistKind::AlternatingPairs:
            return "alternating signs, pairs that nearly cancel";
        case DistKind::HugeOneSign:
            return "one sign, magnitudes 2^88..2^91";
        case DistKind::Coordinates:
            return "value = row·4096 + column";
        case DistKind::Keys:
            return "uniform keys";
        case DistKind::KeysAllSame:
            return "every key the same";
        case DistKind::KeysHotSpot:
            return "hot spot: " + percent(d.param > 0 ? d.param : 0.5f) + " of the keys on one bin";
        case DistKind::KeysZipf:
            return "Zipf keys (s = " + format_number(d.param > 0 ? d.param : 1.1, 3) + ")";
        case DistKind::KeysSequential:
            return "sequential keys (i mod bins)";
        case DistKind::KeysRuns:
            return "sorted keys (long runs)";
        case DistKind::KeysBankStride:
            return "keys 32 apart (one shared-memory bank)";
        case DistKind::KeysLastBins:
            return "only the last 8 bins";
    }
    return "?";
}

std::string format_size(u64 n) { return cudalings::format_size(n); }
std::string format_number(double v, int digits) { return cudalings::format_number(v, digits); }

std::string Shape::text() const {
    if (two_d) return format_size(rows) + "×" + format_size(cols);
    return "n=" + format_size(cols);
}

Params& Params::set(const std::string& name, double value, const std::string& text) {
    for (auto& item : items_) {
        if (item.name != name) continue;
        item.value = value;
        item.text = text;
        return *this;
    }
    items_.push_back({name, value, text});
    return *this;
}

bool Params::has(const std::string& name) const {
    for (const auto& item : items_)
        if (item.name == name) return true;
    return false;
}

double Params::number(const std::string& name) const {
    for (const auto& item : items_)
        if (item.name == name) return item.value;
    throw std::out_of_range("the case has no parameter \"" + name + "\"");
}

double Params::number_or(const std::string& name, double fallback) const {
    return has(name) ? number(name) : fallback;
}

std::string Params::label() const {
    std::string out;
    for (const auto& item : items_) {
        if (!out.empty()) out += ", ";
        out += item.text.empty() ? item.name + "=" + format_number(item.value) : item.text;
    }
    return out;
}

std::string Case::label() const {
    std::string out = shape.text() + ", " + describe(dist);
    const std::string p = params.label();
    if (!p.empty()) out += ", " + p;
    return out;
}

Case Case::capped(u64 max_elements) const {
    Case c = *this;
    if (max_elements == 0 || n() <= max_elements) return c;
    if (!shape.two_d) {
        c.shape = Shape::line(max_elements);
        return c;
    }
    // Halve the larger side (keeping an odd side odd, so partial tiles stay partial) until the
    // shape fits.
    while (c.shape.size() > max_elements) {
        u64& side = c.shape.rows >= c.shape.cols ? c.shape.rows : c.shape.cols;
        side = side / 2 + (side % 2);
        if (side <= 1) break;
    }
    return c;
}

std::vector<u64> standard_sizes() { return cudalings::standard_sizes(); }

std::vector<Case> ladder(const std::vector<Dist>& dists, u64 max_n) {
    std::vector<Case> cases;
    const auto sizes = standard_sizes();
    for (std::size_t i = 0; i < sizes.size(); ++i)
        if (sizes[i] <= max_n) cases.push_back(Case::of(sizes[i], dists[i % dists.size()]));
    return cases;
}

std::vector<Case> table(const std::vector<std::pair<u64, Dist>>& rows) {
    std::vector<Case> cases;
    for (const auto& [n, d] : rows) cases.push_back(Case::of(n, d));
    return cases;
}

}  // namespace kit
