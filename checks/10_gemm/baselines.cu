// Library baseline of lesson 10, timed beside its steps (GPU only): cublasSgemm.
//
// cuBLAS is column-major. A row-major m x n matrix is a column-major n x m one with the same
// leading dimension, so the row-major C = alpha·A·B + beta·C is, read column-major,
// Cᵀ = alpha·Bᵀ·Aᵀ + beta·Cᵀ: sgemm with no transposes, the operands swapped (B first) and
// the sizes n, m, k. The same multiply-adds, the same bytes.
//
// Math mode: CUBLAS_DEFAULT_MATH, set explicitly: fp32 inputs, fp32 products and sums, no TF32
// tensor cores (those round the inputs to 10 mantissa bits: a different precision, which the
// lesson's fp32 tolerance rejects at large k; bench/gemm_sweep times it for scale).
#include <cublas_v2.h>

#include <climits>

#include "gemm.cuh"
#include "kit.h"

namespace {

cublasHandle_t handle() {
    static cublasHandle_t h = [] {
        cublasHandle_t made = nullptr;
        if (cublasCreate(&made) != CUBLAS_STATUS_SUCCESS)
            return static_cast<cublasHandle_t>(nullptr);
        if (cublasSetMathMode(made, CUBLAS_DEFAULT_MATH) != CUBLAS_STATUS_SUCCESS) {
            cublasDestroy(made);
            return static_cast<cublasHandle_t>(nullptr);
        }
        return made;
    }();
    return h;
}

cudaError_t cublas_sgemm(const float* A, const float* B, float* C, size_t m, size_t n, size_t k,
                         float alpha, float beta, cudaStream_t stream) {
    if (m > INT_MAX || n > INT_MAX || k > INT_MAX) return cudaErrorInvalidValue;
    cublasHandle_t h = handle();
    if (!h) return cudaErrorInitializationError;
    if (cublasSetStream(h, stream) != CUBLAS_STATUS_SUCCESS) return cudaErrorUnknown;
    const int M = static_cast<int>(m), N = static_cast<int>(n), K = static_cast<int>(k);
    if (cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, N, A, K, &beta, C, N) !=
        CUBLAS_STATUS_SUCCESS)
        return cudaErrorUnknown;
    return cudaGetLastError();
}

}  // namespace

CUDALINGS_BASELINE("gemm", "cublas", cublas_sgemm);
