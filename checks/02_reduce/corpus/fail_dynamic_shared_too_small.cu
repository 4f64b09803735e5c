// step: 02_reduce/03_sequential_addressing.cu
// emulated: CRASH
// reason: cudaErrorIllegalAddress
//
// Buggy: the launch gives the dynamic shared array `kBlockSize` *bytes*, not kBlockSize floats:
// the kernel uses four times what it was given. A GPU faults on a shared access past the
// block's shared memory: CRASH, as the emulator (which names the array and the element).
--- solutions/02_reduce/03_sequential_addressing.cu
+++ checks/02_reduce/corpus/fail_dynamic_shared_too_small.cu
@@ -23,7 +23,7 @@
 // One partial sum per block: out[blockIdx.x] = in[256 * blockIdx.x] + ... (256 values, fewer in
 // the last block).
 __global__ void reduce_kernel(const float* __restrict__ in, size_t n, float* __restrict__ out) {
-    __shared__ float sdata[kBlockSize];
+    extern __shared__ float sdata[];  // sized at launch
     const unsigned int tid = threadIdx.x;
     const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + tid;
 
@@ -52,8 +52,9 @@
     for (int pass = 0;; ++pass) {
         const size_t blocks = (count + kElementsPerBlock - 1) / kElementsPerBlock;
         float* dst = blocks == 1 ? out : buffers[pass % 2];
-        reduce_kernel<<<static_cast<unsigned int>(blocks), kBlockSize, 0, stream>>>(src, count,
-                                                                                    dst);
+        // BUG: kBlockSize bytes of dynamic shared memory, not kBlockSize floats
+        reduce_kernel<<<static_cast<unsigned int>(blocks), kBlockSize, kBlockSize, stream>>>(
+            src, count, dst);
         if (blocks == 1) break;
         src = dst;
         count = blocks;
