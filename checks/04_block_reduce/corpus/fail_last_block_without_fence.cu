// step: 04_block_reduce/04_device_sum.cu
// emulated: MEMORY_ERROR
// reason: race
//
// Buggy: threadFenceReduction without the __threadfence() between a block's partial and its
// atomicInc: the last block may count every other block as finished and still read a partial
// whose store is not yet visible to it. Usually right on a GPU; a race all the same.
// base: checks/04_block_reduce/corpus/pass_last_block_threadfence.cu
--- checks/04_block_reduce/corpus/pass_last_block_threadfence.cu
+++ checks/04_block_reduce/corpus/fail_last_block_without_fence.cu
@@ -1,7 +1,7 @@
 #include "block_reduce.cuh"
 
 constexpr unsigned int kBlock = 256;
-constexpr unsigned int kGrid = 64;
+constexpr unsigned int kGrid = 32;
 
 __device__ float block_sum(float v) {
     __shared__ float s[kBlock];
@@ -16,21 +16,18 @@
     return total;
 }
 
-__global__ void sum_kernel(const float* x, size_t n, float* partials, unsigned* finished,
-                           float* sum) {
+__global__ void sum_kernel(const float* x, size_t n, float* partials, unsigned* finished, float* sum) {
     __shared__ bool last;
     float v = 0.0f;
     for (size_t i = blockIdx.x * size_t{kBlock} + threadIdx.x; i < n; i += size_t{kGrid} * kBlock)
         v += x[i];
     v = block_sum(v);
     if (threadIdx.x == 0) {
-        partials[blockIdx.x] = v;
-        __threadfence();
+        partials[blockIdx.x] = v;  // BUG: no __threadfence() before the count
         last = atomicInc(finished, kGrid) == kGrid - 1;
     }
     __syncthreads();
     if (last) {
-        __threadfence();
         const float total = block_sum(threadIdx.x < kGrid ? partials[threadIdx.x] : 0.0f);
         if (threadIdx.x == 0) {
             *sum = total;
