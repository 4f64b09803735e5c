// step: 02_reduce/02_strided_index.cu
// emulated: CRASH
// reason: cudaErrorIllegalAddress
//
// Buggy: the strided index without its bound: `int index = 2 * s * tid; sdata[index] +=
// sdata[index + s];` for every tid, so the upper threads index far past the 256-float array
// (into other shared data, or past the block's shared memory on a GPU). A GPU
// faults on a shared access past the block's shared memory: CRASH, as the emulator (which
// names the array and the element).
--- solutions/02_reduce/02_strided_index.cu
+++ checks/02_reduce/corpus/fail_shared_index_past_end.cu
@@ -13,7 +13,7 @@
     //   s = 1: threads 0..127 (warps 0-3); s = 2: threads 0..63 (warps 0-1); s = 64: threads 0, 1.
     for (unsigned int s = 1; s < blockDim.x; s *= 2) {
         const unsigned int index = 2 * s * tid;
-        if (index < blockDim.x) {
+        if (index < 2 * blockDim.x) {  // BUG: the bound is 2x too big
             sdata[index] += sdata[index + s];
         }
         __syncthreads();
