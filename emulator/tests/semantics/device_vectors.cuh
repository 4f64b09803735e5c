// Host helpers of the emulator's test kernels: a device copy of a host vector, and back.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

template <typename T>
T* device(const std::vector<T>& host) {
    T* p = nullptr;
    cudaMalloc(&p, host.size() * sizeof(T));
    cudaMemcpy(p, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice);
    return p;
}

template <typename T>
std::vector<T> back(const T* p, std::size_t n) {
    std::vector<T> h(n);
    cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost);
    return h;
}
