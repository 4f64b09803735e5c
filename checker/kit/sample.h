// The lesson kit: counter-based input values. Element i of a generated array is a hash of the
// array's base (from the seed) and i, so any element can be recomputed anywhere — on the device,
// inside a compare kernel, for any n, in O(1). That is how inputs prove they were not modified
// and how expected values are computed while comparing, without storing them.
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "case.h"

namespace kit {

__host__ __device__ inline std::uint64_t splitmix64(std::uint64_t z) {
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// The base of generated array `stream` (0, 1, 2, ... within a problem) for a seed.
__host__ __device__ inline std::uint64_t stream_base(std::uint64_t seed, std::uint64_t stream) {
    return splitmix64(seed ^ splitmix64(stream + 0x1234567ull));
}

__host__ __device__ inline std::uint64_t element_hash(std::uint64_t base, std::uint64_t index) {
    return splitmix64(base + index * 0xd1342543de82ef95ull);
}

__host__ __device__ inline float unit_float(std::uint64_t h) {  // [0, 1), 24 bits
    return static_cast<float>(h >> 40) * (1.0f / 16777216.0f);
}

// Element `index` of a float array of distribution d. `cols` is the row length of a 2-D array
// (for Coordinates; 0 for 1-D arrays).
__host__ __device__ inline float sample_float(Dist d, std::uint64_t base, std::uint64_t index,
                                              std::uint64_t cols = 0) {
    const std::uint64_t h = element_hash(base, index);
    const float u = unit_float(h);
    const float sign = (h & 1) ? -1.0f : 1.0f;
    switch (d.kind) {
        case DistKind::Uniform:
            return 2.0f * u - 1.0f;
        case DistKind::Wide:
            return sign * ldexpf(1.0f + u, static_cast<int>((h >> 8) % 41) - 20);
        case DistKind::Large:
            return sign * ldexpf(1.0f + u, 60 + static_cast<int>((h >> 8) % 41));
        case DistKind::SmallIntegers:
            return static_cast<float>(static_cast<int>((h >> 8) % 201) - 100);
        case DistKind::TinyIntegers:
            return static_cast<float>(static_cast<int>((h >> 8) % 17) - 8);
        case DistKind::AllEqual:
            return 0.5f + unit_float(splitmix64(base));
        case DistKind::Alternating:
            return ((index & 1) ? -1.0f : 1.0f) * (0.5f + u);
        case DistKind::Positive:
            return u;
        case DistKind::OffsetScale: {
            const std::uint64_t c = splitmix64(base ^ 0x0ff5e75ca1eull);  // per array
            const float scale =
                ldexpf((c & 1) ? -1.0f : 1.0f, static_cast<int>((c >> 8) % 33) - 16);
            const float offset = 1.25f + 2.0f * unit_float(c);
            return scale * (offset + (2.0f * u - 1.0f));  // |offset + v| >= 0.25: never 0
        }
        case DistKind::AlternatingPairs: {
            const std::uint64_t c = splitmix64(base ^ 0xa17e4a7e5ull);  // per array
            const float scale =
                ldexpf((c & 1) ? -1.0f : 1.0f, static_cast<int>((c >> 8) % 25) - 12);
            // m is shared by elements 2j and 2j+1, so each pair sums to e + e' (> 1/4, up to
            // the rounding of m + e and e' - m): the total never cancels out.
            const std::uint64_t p = element_hash(base ^ 0x9a1f5ull, index >> 1);
            const float m = 1.0f + unit_float(p);
            const float e = 0.125f * (1.0f + u);
            return scale * ((index & 1) ? e - m : m + e);
        }
        case DistKind::HugeOneSign: {
            const float s = (splitmix64(base ^ 0x419e0ull) & 1) ? -1.0f : 1.0f;  // per array
            return s * ldexpf(1.0f + u, 88 + static_cast<int>((h >> 8) % 3));
        }
        case DistKind::Coordinates: {
            const std::uint64_t c = cols ? cols : 1;
            return static_cast<float>((index / c) * 4096 + index % c);
        }
        default:  // key distributions are not floats
            return static_cast<float>(h >> 40);
    }
}

// Element `index` of an array of n keys below `range` (range >= 1) of distribution d.
__host__ __device__ inline std::uint32_t sample_key(Dist d, std::uint32_t range, std::uint64_t base,
                                                    std::uint64_t index, std::uint64_t n) {
    const std::uint64_t h = element_hash(base, index);
    const std::uint64_t per_array = splitmix64(base ^ 0x6b65797301ull);
    const std::uint32_t r = range ? range : 1;
    switch (d.kind) {
        case DistKind::KeysAllSame: {
            const std::uint64_t pick = per_array % 3;  // 0, the last bin, or any bin
            return pick == 0   ? 0u
                   : pick == 1 ? r - 1
                               : static_cast<std::uint32_t>((per_array >> 8) % r);
        }
        case DistKind::KeysHotSpot: {
            const std::uint32_t hot = static_cast<std::uint32_t>((per_array >> 8) % r);
            const float share = d.param > 0 ? d.param : 0.5f;
            return unit_float(h) < share ? hot : static_cast<std::uint32_t>((h >> 8) % r);
        }
        case DistKind::KeysZipf: {
            // Ranks k in [1, r] with P(k) ~ k^-s, by the inverse of the continuous CDF; rank 1
            // (the hottest) lands on a bin chosen per array.
            const double s = d.param > 0 ? d.param : 1.1;
            const double u = (static_cast<double>(h >> 11) + 1.0) * (1.0 / 9007199254740992.0);
            const double top = pow(static_cast<double>(r), 1.0 - s);
            double k = floor(pow((top - 1.0) * u + 1.0, 1.0 / (1.0 - s)));
            k = k < 1.0 ? 1.0 : (k > r ? r : k);
            return static_cast<std::uint32_t>((static_cast<std::uint64_t>(k) - 1 + per_array) % r);
        }
        case DistKind::KeysSequential:
            return static_cast<std::uint32_t>(index % r);
        case DistKind::KeysRuns: {
            const std::uint64_t count = n ? n : 1;
            return static_cast<std::uint32_t>((index * static_cast<std::uint64_t>(r)) / count);
        }
        case DistKind::KeysBankStride: {
            // multiples of 32, different within each 32 consecutive keys while range allows
            const std::uint32_t slots = r >= 32 ? r / 32 : 1;
            const std::uint64_t k = (index + (index >> 5) + (per_array & 0xff)) % slots;
            return r >= 32 ? static_cast<std::uint32_t>(32 * k)
                           : static_cast<std::uint32_t>(index % r);
        }
        case DistKind::KeysLastBins: {
            const std::uint32_t last = r < 8 ? r : 8;
            return r - 1 - static_cast<std::uint32_t>((h >> 8) % last);
        }
        default:  // Keys, and any float distribution asked for as keys: uniform
            return static_cast<std::uint32_t>((h >> 8) % r);
    }
}

}  // namespace kit
