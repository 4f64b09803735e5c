// Library baselines of lesson 06, timed beside its steps on the same four distributions (GPU
// only):
//   histogram, histogram_many_bins   cub::DeviceHistogram::HistogramEven: integer samples, levels
//                                    0 .. num_bins, so key k falls in bin k (the same contract)
//   histogram_rle                    CUB has no weighted histogram: sort the words by key
//                                    (cub::DeviceRadixSort on the key's 16 bits), add up the counts
//                                    of each key (cub::DeviceReduce::ReduceByKey), scatter the sums
//                                    into the bins. The "sort, then reduce by key" way.
#include <thrust/iterator/transform_iterator.h>

#include <cub/device/device_histogram.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cuda/std/functional>

#include <algorithm>
#include <cstdint>

#include "histogram.cuh"
#include "kit.h"

namespace {

cudaError_t cub_histogram_even(const unsigned int* keys, unsigned int* bins, size_t n,
                               unsigned int num_bins, cudaStream_t s) {
    const int levels = static_cast<int>(num_bins) + 1;
    const unsigned int lower = 0, upper = num_bins;
    const auto items = static_cast<std::int64_t>(n);
    size_t bytes = 0;
    cudaError_t e = cub::DeviceHistogram::HistogramEven(nullptr, bytes, keys, bins, levels, lower,
                                                        upper, items, s);
    if (e != cudaSuccess) return e;
    return cub::DeviceHistogram::HistogramEven(kit::library_scratch(bytes), bytes, keys, bins,
                                               levels, lower, upper, items, s);
}

struct KeyOf {
    __host__ __device__ unsigned int operator()(unsigned int word) const { return rle_key(word); }
};
struct CountOf {
    __host__ __device__ unsigned int operator()(unsigned int word) const { return rle_count(word); }
};

__global__ void scatter_sums(const unsigned int* keys, const unsigned int* sums,
                             const unsigned int* runs, unsigned int* bins) {
    for (unsigned int k = blockIdx.x * blockDim.x + threadIdx.x; k < *runs;
         k += gridDim.x * blockDim.x)
        bins[keys[k]] = sums[k];
}

size_t aligned(size_t bytes) { return (bytes + 255) / 256 * 256; }

cudaError_t cub_sort_reduce_by_key(const unsigned int* words, unsigned int* bins, size_t n,
                                   unsigned int num_bins, cudaStream_t s) {
    const int items = static_cast<int>(n);
    // Scratch: two buffers of words for the sort, the keys and sums found, their count, then
    // CUB's temporary storage (the larger of the two calls').
    const size_t words_bytes = aligned(n * sizeof(unsigned int));
    const size_t found_bytes = aligned(num_bins * sizeof(unsigned int));
    size_t sort_bytes = 0, reduce_bytes = 0;
    cub::DoubleBuffer<unsigned int> sorted(nullptr, nullptr);
    cudaError_t e = cub::DeviceRadixSort::SortKeys(nullptr, sort_bytes, sorted, items, 0, 16, s);
    if (e != cudaSuccess) return e;
    const auto keys_in = thrust::make_transform_iterator(words, KeyOf{});
    const auto counts_in = thrust::make_transform_iterator(words, CountOf{});
    e = cub::DeviceReduce::ReduceByKey(
        nullptr, reduce_bytes, keys_in, static_cast<unsigned int*>(nullptr), counts_in,
        static_cast<unsigned int*>(nullptr), static_cast<unsigned int*>(nullptr),
        cuda::std::plus<unsigned int>{}, items, s);
    if (e != cudaSuccess) return e;
    const size_t temp_bytes = std::max(sort_bytes, reduce_bytes);
    auto* base = static_cast<char*>(
        kit::library_scratch(2 * words_bytes + 2 * found_bytes + 256 + temp_bytes));
    auto* a = reinterpret_cast<unsigned int*>(base);
    auto* b = reinterpret_cast<unsigned int*>(base + words_bytes);
    auto* unique = reinterpret_cast<unsigned int*>(base + 2 * words_bytes);
    auto* sums = reinterpret_cast<unsigned int*>(base + 2 * words_bytes + found_bytes);
    auto* runs = reinterpret_cast<unsigned int*>(base + 2 * words_bytes + 2 * found_bytes);
    void* temp = base + 2 * words_bytes + 2 * found_bytes + 256;

    e = cudaMemcpyAsync(a, words, n * sizeof(unsigned int), cudaMemcpyDeviceToDevice, s);
    if (e != cudaSuccess) return e;
    cub::DoubleBuffer<unsigned int> buffers(a, b);
    size_t bytes = temp_bytes;
    e = cub::DeviceRadixSort::SortKeys(temp, bytes, buffers, items, 0, 16, s);
    if (e != cudaSuccess) return e;
    const unsigned int* in = buffers.Current();
    bytes = temp_bytes;
    e = cub::DeviceReduce::ReduceByKey(temp, bytes, thrust::make_transform_iterator(in, KeyOf{}),
                                       unique, thrust::make_transform_iterator(in, CountOf{}), sums,
                                       runs, cuda::std::plus<unsigned int>{}, items, s);
    if (e != cudaSuccess) return e;
    e = cudaMemsetAsync(bins, 0, num_bins * sizeof(unsigned int), s);
    if (e != cudaSuccess) return e;
    scatter_sums<<<(num_bins + 255) / 256, 256, 0, s>>>(unique, sums, runs, bins);
    return cudaGetLastError();
}

}  // namespace

CUDALINGS_BASELINE("histogram", "cub", cub_histogram_even);
CUDALINGS_BASELINE("histogram_many_bins", "cub", cub_histogram_even);
CUDALINGS_BASELINE("histogram_rle", "cub_sort_reduce", cub_sort_reduce_by_key);
