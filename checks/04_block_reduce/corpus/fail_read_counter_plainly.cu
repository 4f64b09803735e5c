// step: 04_block_reduce/04_device_sum.cu
// emulated: MEMORY_ERROR
// reason: race
//
// Buggy: the blocks count themselves with atomicAdd, but decide who is last by reading the
// counter plainly afterwards (`if (*finished == kGrid)`) instead of using the value atomicAdd
// returned: the plain read races with other blocks' atomics (two blocks may both see kGrid, or
// none: the value read is whatever happens to be visible).
// base: checks/04_block_reduce/corpus/pass_last_block_threadfence.cu
--- checks/04_block_reduce/corpus/pass_last_block_threadfence.cu
+++ checks/04_block_reduce/corpus/fail_read_counter_plainly.cu
@@ -1,7 +1,7 @@
 #include "block_reduce.cuh"
 
 constexpr unsigned int kBlock = 256;
-constexpr unsigned int kGrid = 64;
+constexpr unsigned int kGrid = 32;
 
 __device__ float block_sum(float v) {
     __shared__ float s[kBlock];
@@ -16,8 +16,7 @@
     return total;
 }
 
-__global__ void sum_kernel(const float* x, size_t n, float* partials, unsigned* finished,
-                           float* sum) {
+__global__ void sum_kernel(const float* x, size_t n, float* partials, unsigned* finished, float* sum) {
     __shared__ bool last;
     float v = 0.0f;
     for (size_t i = blockIdx.x * size_t{kBlock} + threadIdx.x; i < n; i += size_t{kGrid} * kBlock)
@@ -26,16 +25,14 @@
     if (threadIdx.x == 0) {
         partials[blockIdx.x] = v;
         __threadfence();
-        last = atomicInc(finished, kGrid) == kGrid - 1;
+        atomicAdd(finished, 1u);
+        last = *finished == kGrid;  // BUG: a plain read of a counter others update atomically
     }
     __syncthreads();
     if (last) {
         __threadfence();
         const float total = block_sum(threadIdx.x < kGrid ? partials[threadIdx.x] : 0.0f);
-        if (threadIdx.x == 0) {
-            *sum = total;
-            *finished = 0;
-        }
+        if (threadIdx.x == 0) *sum = total;
     }
 }
 
