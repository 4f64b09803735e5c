// step: 05_scan/02_blelloch.cu
// emulated: MEMORY_ERROR
// reason: race
//
// Buggy: GPU Gems 3-style Blelloch scan (two elements per thread, CONFLICT_FREE_OFFSET padding,
// the inclusive result made by shifting the exclusive one left by one and appending the saved
// total) whose up-sweep puts its barrier at the END of each round: the first round then reads
// slots 2t and 2t + 1 right after the loads, with no barrier, and those slots were loaded by
// threads 2t and 2t + 1 (or t + 256 ...), mostly of another warp. Usually right on a GPU (the
// loads of a warp are issued long before), a race all the same.
// base: checks/05_scan/corpus/pass_blelloch_gems_shift_left.cu
--- checks/05_scan/corpus/pass_blelloch_gems_shift_left.cu
+++ checks/05_scan/corpus/fail_blelloch_no_barrier_after_load.cu
@@ -15,8 +15,7 @@
     temp[bi + CONFLICT_FREE_OFFSET(bi)] = base + bi < n ? in[base + bi] : 0.0f;
 
     unsigned int offset = 1;
-    __syncthreads();  // the loads before the first round
-    for (unsigned int d = kTile >> 1; d > 0; d >>= 1) {
+    for (unsigned int d = kTile >> 1; d > 0; d >>= 1) {  // BUG: no barrier before round 1
         if (thid < d) {
             unsigned int a = offset * (2 * thid + 1) - 1, b = offset * (2 * thid + 2) - 1;
             a += CONFLICT_FREE_OFFSET(a);
