// expect: REJECTED
// reason: no-cub
// setup: manifest-allow-cub
//
// The submission ships its own course.json in which this step says "allow": ["cub"], and uses
// CUB. The instructor's manifest forbids CUB here, and only the instructor's manifest counts.
#include <cub/cub.cuh>

#include "vector_add.cuh"

struct Sum {
    __device__ float operator()(float x, float y) const { return x + y; }
};

extern "C" cudaError_t vector_add(const float* a, const float* b, float* c, size_t n,
                                  cudaStream_t stream) {
    return cub::DeviceTransform::Transform(cuda::std::make_tuple(a, b), c,
                                           static_cast<int>(n), Sum{}, stream);
}
