// step: 06_histogram/03_block_private.cu
// emulated: MEMORY_ERROR
// reason: race
//
// Buggy: step 3 whose merge adds the block's counters to the global bins with a plain
// `bins[b] += counts[b]`, as if privatization had made the bins private: every block of the grid
// merges into the same num_bins words, so the read-modify-writes of two blocks race and one
// block's counts can be lost. The shared phases (zero, count with shared atomics) are right.
--- solutions/06_histogram/03_block_private.cu
+++ checks/06_histogram/corpus/fail_merge_plain_add.cu
@@ -23,10 +23,8 @@
     // Merge: one global atomic per non-zero counter. Other blocks add into the same bins at the
     // same time, so this must be an atomic too. Skipping zeros saves most of the merge when the
     // keys are skewed (all-same: one atomic per block).
-    for (unsigned int b = threadIdx.x; b < num_bins; b += blockDim.x) {
-        const unsigned int c = counts[b];
-        if (c != 0) atomicAdd(&bins[b], c);
-    }
+    for (unsigned int b = threadIdx.x; b < num_bins; b += blockDim.x)
+        bins[b] += counts[b];  // BUG: other blocks add into bins[b] at the same time
 }
 
 extern "C" cudaError_t histogram(const unsigned int* keys, unsigned int* bins, size_t n,
