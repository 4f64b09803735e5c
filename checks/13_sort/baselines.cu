// Library baselines of lesson 13, timed beside its steps (GPU only):
//   radix_sort_keys   cub::DeviceRadixSort::SortKeys, all 32 bits
//   radix_sort_pairs  cub::DeviceRadixSort::SortPairs, all 32 bits, keys as unsigned int, int or
//                     float as key_type says (CUB's float order differs from the contract's on
//                     -0.0/+0.0: it takes them as one key. The timed keys are unsigned.)
//
// Which overload. CUB's DoubleBuffer overloads sort in place: the keys must start in
// d_keys.Current(), which the sort may overwrite. The checker's keys_in is read-only (it is
// verified unchanged after every call), so a DoubleBuffer call would need a copy of the keys into
// keys_out first: 8n more bytes inside the timed region, a handicap of the library's of about a
// quarter of what onesweep moves. The pointer overloads (keys_in -> keys_out) run the same
// onesweep passes: the first pass reads keys_in and writes an alternate buffer of n keys that
// CUB keeps in its temporary storage, the passes then ping-pong between it and keys_out
// (dispatch_radix_sort.cuh, InvokeOnesweep: !is_overwrite_okay). That is the learner's scratch
// exactly (keys_alt, n keys), and the same traffic. The temporary storage comes from
// kit::library_scratch, sized in the untimed warm-up: no allocation in the timed region. The
// step's keys_alt and workspace are left alone.
#include <cub/device/device_radix_sort.cuh>

#include "kit.h"
#include "sort.cuh"

namespace {

cudaError_t cub_sort_keys(const unsigned int* keys_in, unsigned int* keys_out, size_t n,
                          unsigned int*, void*, size_t, cudaStream_t s) {
    const auto items = static_cast<int>(n);  // n <= 2^28
    size_t bytes = 0;
    cudaError_t e =
        cub::DeviceRadixSort::SortKeys(nullptr, bytes, keys_in, keys_out, items, 0, 32, s);
    if (e != cudaSuccess) return e;
    return cub::DeviceRadixSort::SortKeys(kit::library_scratch(bytes), bytes, keys_in, keys_out,
                                          items, 0, 32, s);
}

template <typename Key>
cudaError_t cub_pairs_as(const unsigned int* keys_in, const unsigned int* values_in,
                         unsigned int* keys_out, unsigned int* values_out, int items,
                         cudaStream_t s) {
    const auto* kin = reinterpret_cast<const Key*>(keys_in);
    auto* kout = reinterpret_cast<Key*>(keys_out);
    size_t bytes = 0;
    cudaError_t e = cub::DeviceRadixSort::SortPairs(nullptr, bytes, kin, kout, values_in,
                                                    values_out, items, 0, 32, s);
    if (e != cudaSuccess) return e;
    return cub::DeviceRadixSort::SortPairs(kit::library_scratch(bytes), bytes, kin, kout, values_in,
                                           values_out, items, 0, 32, s);
}

cudaError_t cub_sort_pairs(const unsigned int* keys_in, const unsigned int* values_in,
                           unsigned int* keys_out, unsigned int* values_out, size_t n, int key_type,
                           unsigned int*, unsigned int*, void*, size_t, cudaStream_t s) {
    const auto items = static_cast<int>(n);
    if (key_type == kKeySigned)
        return cub_pairs_as<int>(keys_in, values_in, keys_out, values_out, items, s);
    if (key_type == kKeyFloat)
        return cub_pairs_as<float>(keys_in, values_in, keys_out, values_out, items, s);
    return cub_pairs_as<unsigned int>(keys_in, values_in, keys_out, values_out, items, s);
}

}  // namespace

CUDALINGS_BASELINE("radix_sort_keys", "cub", cub_sort_keys);
CUDALINGS_BASELINE("radix_sort_pairs", "cub", cub_sort_pairs);
