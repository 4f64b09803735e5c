// step: 08_transpose/05_wide_tiles.cu
// emulated: MEMORY_ERROR
// reason: uninitialised-shared
//
// Right numbers, reported anyway: the reference's 64 x 64 float4 kernel, written load-all-then-store on both sides:
// the load phase stores into the tile only the cells inside the matrix (no zero fill), and the
// store phase packs the four floats of an output quad from the tile *before* its bounds test,
// then stores the pack only if the quad lies inside the output. In a partial edge tile the pack
// of an outside quad reads tile cells that no thread wrote; those values are discarded, never
// stored, and every value that is stored was loaded before the barrier. The emulator reports
// every read of a shared cell no thread wrote (it cannot tell a discarded value from a used one),
// on a GPU too through the hazard pass: zero-fill the tile, or test the bounds before the read.
--- solutions/08_transpose/05_wide_tiles.cu
+++ checks/08_transpose/corpus/fail_float4_pack_reads_unwritten_cells.cu
@@ -37,35 +37,40 @@
     const float4* in4 = reinterpret_cast<const float4*>(in);
     float4* out4 = reinterpret_cast<float4*>(out);
 
-    // Load phase: all four loads first, into registers, so that 64 bytes per thread are in
-    // flight together; only then the shared stores (which would otherwise wait for each load).
+    // Load phase: all four loads first, into registers; only the cells inside the matrix are
+    // then stored into the tile.
     float4 v[kPasses];
 #pragma unroll
     for (unsigned int k = 0; k < kPasses; ++k) {
         const size_t r = r0 + pass_row(t, k);
-        const size_t q = c0 / 4 + pass_quad(t, k);  // float4 index within the row
-        v[k] = r < rows && q < cols4 ? in4[r * cols4 + q] : make_float4(0.f, 0.f, 0.f, 0.f);
+        const size_t q = c0 / 4 + pass_quad(t, k);
+        if (r < rows && q < cols4) v[k] = in4[r * cols4 + q];
     }
 #pragma unroll
     for (unsigned int k = 0; k < kPasses; ++k) {
-        const unsigned int y = pass_row(t, k), x = 4 * pass_quad(t, k);
-        tile[y][x + 0] = v[k].x;  // a float4 store is impossible here: a pitch of 65 words
-        tile[y][x + 1] = v[k].y;  // leaves most rows unaligned to 16 bytes. Cells outside the
-        tile[y][x + 2] = v[k].z;  // matrix get zeros; no output reads them.
-        tile[y][x + 3] = v[k].w;
+        const size_t r = r0 + pass_row(t, k);
+        const size_t q = c0 / 4 + pass_quad(t, k);
+        if (r < rows && q < cols4) {
+            const unsigned int y = pass_row(t, k), x = 4 * pass_quad(t, k);
+            tile[y][x + 0] = v[k].x;
+            tile[y][x + 1] = v[k].y;
+            tile[y][x + 2] = v[k].z;
+            tile[y][x + 3] = v[k].w;
+        }
     }
 
     __syncthreads();  // the whole tile is loaded before any column is read
 
-    // Store phase: output row c0 + y (= input column), float4 q of it (= input rows r0 + 4q ..
-    // r0 + 4q + 3): four floats down column y of the tile, one 16-byte store.
+    // Store phase: the four floats down column y of the tile are packed first, then stored
+    // where the output quad lies inside the matrix. In a partial tile the pack may hold cells
+    // outside the matrix, which no thread loaded: they are never stored.
 #pragma unroll
     for (unsigned int k = 0; k < kPasses; ++k) {
         const unsigned int y = pass_row(t, k), q = pass_quad(t, k);
+        const float4 w = make_float4(tile[4 * q][y], tile[4 * q + 1][y], tile[4 * q + 2][y],
+                                     tile[4 * q + 3][y]);
         const size_t orow = c0 + y, oq = r0 / 4 + q;
-        if (orow < cols && oq < rows4)
-            out4[orow * rows4 + oq] = make_float4(tile[4 * q][y], tile[4 * q + 1][y],
-                                                  tile[4 * q + 2][y], tile[4 * q + 3][y]);
+        if (orow < cols && oq < rows4) out4[orow * rows4 + oq] = w;
     }
 }
 
