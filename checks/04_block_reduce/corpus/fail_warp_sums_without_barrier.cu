// step: 04_block_reduce/02_block_partial_sums.cu
// emulated: MEMORY_ERROR
// reason: race
//
// Buggy: warp 0 reads the other warps' sums from shared memory without waiting for them
// (the __syncthreads() between the store of warp sums and their read is missing).
--- solutions/04_block_reduce/02_block_partial_sums.cu
+++ checks/04_block_reduce/corpus/fail_warp_sums_without_barrier.cu
@@ -31,9 +31,7 @@
     v = warp_sum(v);
     if (lane == 0) warp_sums[warp] = v;
 
-    // Every warp's sum must be in shared memory before warp 0 reads them. A block-wide barrier
-    // is cheap: the block lives on one SM, and the hardware tracks its warps there.
-    __syncthreads();
+    // BUG: __syncthreads() missing here
 
     if (warp == 0) {
         v = lane < kWarps ? warp_sums[lane] : 0.0f;  // 8 values; lanes 8..31 add 0
