// step: 04_block_reduce/03_block_reduce_ops.cu
// emulated: WRONG
//
// Buggy: on ties the argmax keeps the larger index, not the first.
--- solutions/04_block_reduce/03_block_reduce_ops.cu
+++ checks/04_block_reduce/corpus/fail_argmax_last_index.cu
@@ -35,7 +35,7 @@
         // any grouping and any order of the pairs, and it is the *first* maximum.
         if (a.value > b.value) return a;
         if (b.value > a.value) return b;
-        return a.index < b.index ? a : b;
+        return a.index > b.index ? a : b;  // BUG: a tie keeps the larger index, not the first
     }
     // The index of the identity is the largest possible, so it loses every tie.
     __device__ static ValueIndex identity() { return {-INFINITY, 0xffffffffu}; }
