// step: 05_scan/06_chained_scan.cu
// emulated: MEMORY_ERROR
// reason: race
//
// Buggy: a chained scan whose status is two words, a plain float prefix and a volatile flag,
// written one after the other with no __threadfence() between them. volatile keeps the poll a
// real load, but it does not order the two stores for another SM: the successor can see the
// flag and read the old prefix (the NaN the workspace held). Almost always right on a GPU; the
// plain read of the prefix races with the predecessor's plain store.
// base: checks/05_scan/corpus/pass_chained_atomic_ref_release_acquire.cu
--- checks/05_scan/corpus/pass_chained_atomic_ref_release_acquire.cu
+++ checks/05_scan/corpus/fail_chained_two_words_no_fence.cu
@@ -1,13 +1,9 @@
-#include <cuda/atomic>
-
 #include "scan.cuh"
 
 constexpr unsigned int kBlock = kTile;  // one element per thread
 constexpr unsigned int kWarps = kBlock / 32;
 static_assert(kWarps == 32, "warp 0 scans one warp total per lane");
 
-using flag_ref = cuda::atomic_ref<unsigned int, cuda::thread_scope_device>;
-
 __device__ float warp_scan(float v) {
     const unsigned int lane = threadIdx.x & 31u;
     for (unsigned int d = 1; d < 32; d <<= 1) {
@@ -38,13 +34,13 @@
     if (threadIdx.x == 0) {
         float carry = 0.0f;
         if (tile > 0) {
-            flag_ref ready(flags[tile - 1]);
-            while (ready.load(cuda::memory_order_acquire) == 0u) {
+            const volatile unsigned int* ready = &flags[tile - 1];
+            while (*ready == 0u) {
             }
             carry = prefixes[tile - 1];
         }
         prefixes[tile] = carry + s_warp[kWarps - 1];
-        flag_ref(flags[tile]).store(1u, cuda::memory_order_release);
+        *reinterpret_cast<volatile unsigned int*>(&flags[tile]) = 1u;  // BUG: no __threadfence()
         s_carry = carry;
     }
     __syncthreads();
