// step: 04_block_reduce/04_device_sum.cu
// emulated: MEMORY_ERROR
// reason: race
//
// Buggy: the "last block" is found with `(*finished)++` instead of an atomic: two blocks may
// read the same count, so no block, or two, believe they are last (and the partials are read
// without being published). The read-modify-write of the counter races between blocks.
// base: checks/04_block_reduce/corpus/pass_last_block_threadfence.cu
--- checks/04_block_reduce/corpus/pass_last_block_threadfence.cu
+++ checks/04_block_reduce/corpus/fail_counter_plus_plus.cu
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
@@ -26,11 +25,11 @@
     if (threadIdx.x == 0) {
         partials[blockIdx.x] = v;
         __threadfence();
-        last = atomicInc(finished, kGrid) == kGrid - 1;
+        const unsigned before = (*finished)++;  // BUG: not atomic
+        last = before == kGrid - 1;
     }
     __syncthreads();
     if (last) {
-        __threadfence();
         const float total = block_sum(threadIdx.x < kGrid ? partials[threadIdx.x] : 0.0f);
         if (threadIdx.x == 0) {
             *sum = total;
