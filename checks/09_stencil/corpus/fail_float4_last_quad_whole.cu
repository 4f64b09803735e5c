// step: 09_stencil/03_float4.cu
// emulated: MEMORY_ERROR
// reason: guard zone
//
// Buggy: pass_float4_shared_tile_scalar_tail.cu with the float4 path taken for every quad that
// *starts* inside the array (q0 < n) instead of every quad that lies inside it (q0 + 3 < n).
// When n % 4 != 0 the last quad is loaded and stored whole: up to 3 floats read past the end of
// the input and written past the end of the output (and the cells past n hold x's neighbours
// in memory instead of the boundary's values). The scalar tail never runs.
// base: checks/09_stencil/corpus/pass_float4_shared_tile_scalar_tail.cu
--- checks/09_stencil/corpus/pass_float4_shared_tile_scalar_tail.cu
+++ checks/09_stencil/corpus/fail_float4_last_quad_whole.cu
@@ -22,7 +22,7 @@
     const long long len = static_cast<long long>(n);
     const long long q0 = b0 + 4 * t;  // this thread's quad: cells q0 .. q0 + 3
 
-    if (q0 + 3 < len) {
+    if (q0 < len) {  // BUG: the quad may stick out past n (q0 + 3 < len was meant)
         reinterpret_cast<float4*>(s + kOff)[t] = reinterpret_cast<const float4*>(x)[q0 / 4];
     } else {
         for (int e = 0; e < 4; ++e) s[kOff + 4 * t + e] = load(x, q0 + e, n, boundary);
@@ -39,7 +39,7 @@
             acc += w.w[radius + j] * s[kOff + 4 * t + e + j];
         o[e] = acc;
     }
-    if (q0 + 3 < len) {
+    if (q0 < len) {  // BUG: the same test on the store side
         reinterpret_cast<float4*>(y)[q0 / 4] = make_float4(o[0], o[1], o[2], o[3]);
     } else {
         for (int e = 0; e < 4; ++e)
