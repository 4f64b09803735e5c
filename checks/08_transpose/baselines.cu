// Library baseline of lesson 08, timed beside its steps (GPU only): cublasSgeam as a transpose.
//
// geam computes C = alpha·op(A) + beta·op(B) on column-major matrices. A row-major rows × cols
// matrix is a column-major cols × rows one with leading dimension cols, so with op(A) = A^T,
// alpha = 1 and beta = 0 it writes the column-major rows × cols matrix C with leading dimension
// rows: the row-major cols × rows transpose. B is the output itself (geam's in-place form
// C = alpha·op(A) + beta·C); with beta = 0 its contents do not matter.
#include <cublas_v2.h>

#include <climits>

#include "kit.h"
#include "transpose.cuh"

namespace {

// One handle for the process, made on the first (untimed, warm-up) call.
cublasHandle_t handle() {
    static cublasHandle_t h = [] {
        cublasHandle_t made = nullptr;
        return cublasCreate(&made) == CUBLAS_STATUS_SUCCESS ? made : nullptr;
    }();
    return h;
}

cudaError_t cublas_transpose(const float* in, float* out, size_t rows, size_t cols,
                             cudaStream_t stream) {
    if (rows > INT_MAX || cols > INT_MAX) return cudaErrorInvalidValue;  // geam takes ints
    cublasHandle_t h = handle();
    if (!h) return cudaErrorInitializationError;
    if (cublasSetStream(h, stream) != CUBLAS_STATUS_SUCCESS) return cudaErrorUnknown;
    const float one = 1.0f, zero = 0.0f;
    const int m = static_cast<int>(rows), n = static_cast<int>(cols);
    if (cublasSgeam(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, &one, in, n, &zero, out, m, out, m) !=
        CUBLAS_STATUS_SUCCESS)
        return cudaErrorUnknown;
    return cudaGetLastError();
}

}  // namespace

CUDALINGS_BASELINE("transpose", "cublas", cublas_transpose);
