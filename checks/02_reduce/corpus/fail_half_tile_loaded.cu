// step: 02_reduce/04_first_add_during_load.cu
// emulated: MEMORY_ERROR
// reason: uninitialised
//
// Buggy: the first add during load stores its value in sdata[tid] only for tid < 128 ("the
// upper half was folded in"), but the tree still starts at s = 128 and reads sdata[128..255],
// which nobody wrote: garbage (NaN on the emulator, whatever was there on a GPU).
--- solutions/02_reduce/04_first_add_during_load.cu
+++ checks/02_reduce/corpus/fail_half_tile_loaded.cu
@@ -33,7 +33,7 @@
     // Each element has its own bounds test: in the last block either one may be missing.
     float v = i < n ? in[i] : 0.0f;
     if (i + blockDim.x < n) v += in[i + blockDim.x];
-    sdata[tid] = v;
+    if (tid < kBlockSize / 2) sdata[tid] = v;  // BUG: the upper half is never stored
     __syncthreads();
 
     const float sum = tree_sum(sdata, tid);
