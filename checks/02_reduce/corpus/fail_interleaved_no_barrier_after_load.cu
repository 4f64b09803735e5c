// step: 02_reduce/01_interleaved.cu
// emulated: MEMORY_ERROR
// reason: race
//
// Buggy: interleaved addressing without the barrier between the load and the first round:
// thread 0 adds sdata[1], which thread 1 may not have stored yet (it usually has, on a GPU:
// the race is only seen by the hazard pass there).
--- solutions/02_reduce/01_interleaved.cu
+++ checks/02_reduce/corpus/fail_interleaved_no_barrier_after_load.cu
@@ -29,7 +29,7 @@
 
     // Threads past the end load 0, the identity of +: the tree then needs no bounds test.
     sdata[tid] = i < n ? in[i] : 0.0f;
-    __syncthreads();  // every value is in shared memory before anyone reads a neighbour's
+    // BUG: no __syncthreads() before round 1
 
     const float sum = tree_sum(sdata, tid);
     if (tid == 0) out[blockIdx.x] = sum;
