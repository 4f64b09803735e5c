// expect: REJECTED
// reason: no-cub
// setup: header-cub
//
// The submission's copy of vector_add.cuh includes <cub/cub.cuh> (the test adds the line), and
// this file uses cub:: without including it itself. The graded copy has the instructor's header,
// in which there is no CUB; and cub:: in the step's own text is REJECTED whatever the headers.
#include "vector_add.cuh"

struct Sum {
    __device__ float operator()(float x, float y) const { return x + y; }
};

extern "C" cudaError_t vector_add(const float* a, const float* b, float* c, size_t n,
                                  cudaStream_t stream) {
    return cub::DeviceTransform::Transform(cuda::std::make_tuple(a, b), c,
                                           static_cast<int>(n), Sum{}, stream);
}
