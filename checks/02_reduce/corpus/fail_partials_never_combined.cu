// step: 02_reduce/08_warp_shuffle.cu
// emulated: MEMORY_ERROR
// reason: race
//
// Buggy: every block writes its sum to out[0] (the same element), so the last block to finish
// wins: the other blocks' partial sums are lost. The stores of different blocks to one element
// race (WRONG by the numbers on a GPU, MEMORY_ERROR with the hazard pass).
--- solutions/02_reduce/08_warp_shuffle.cu
+++ checks/02_reduce/corpus/fail_partials_never_combined.cu
@@ -49,7 +49,7 @@
         sum += a + b;
     }
     sum = block_reduce_sum<kBlock>(sum);
-    if (threadIdx.x == 0) out[blockIdx.x] = sum;
+    if (threadIdx.x == 0) out[0] = sum;  // BUG: every block writes the total's place
 }
 
 // Step 7's launcher: G blocks write G partial sums, then one block adds them into out.
@@ -76,9 +76,7 @@
         reduce_kernel<kBlockSize><<<1, kBlockSize, 0, stream>>>(in, n, out);
         return cudaGetLastError();
     }
-    float* partials = static_cast<float*>(workspace);
     reduce_kernel<kBlockSize>
-        <<<static_cast<unsigned int>(grid), kBlockSize, 0, stream>>>(in, n, partials);
-    reduce_kernel<kBlockSize><<<1, kBlockSize, 0, stream>>>(partials, grid, out);
+        <<<static_cast<unsigned int>(grid), kBlockSize, 0, stream>>>(in, n, out);
     return cudaGetLastError();
 }
