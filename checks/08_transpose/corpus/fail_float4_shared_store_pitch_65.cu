// step: 08_transpose/05_wide_tiles.cu
// emulated: CRASH
// reason: MisalignedAddress
//
// Buggy: the reference's wide kernel with the four scalar shared stores of the load phase
// replaced by one float4 store "to match the float4 load". The tile keeps its pitch of 65
// words, so tile[y][x] is 16-byte aligned only in every fourth row: the store to row 1 faults
// with a misaligned address, on a GPU as in the emulator. (Shapes that are not multiples of 4
// take the scalar kernel and pass.)
--- solutions/08_transpose/05_wide_tiles.cu
+++ checks/08_transpose/corpus/fail_float4_shared_store_pitch_65.cu
@@ -49,10 +49,9 @@
 #pragma unroll
     for (unsigned int k = 0; k < kPasses; ++k) {
         const unsigned int y = pass_row(t, k), x = 4 * pass_quad(t, k);
-        tile[y][x + 0] = v[k].x;  // a float4 store is impossible here: a pitch of 65 words
-        tile[y][x + 1] = v[k].y;  // leaves most rows unaligned to 16 bytes. Cells outside the
-        tile[y][x + 2] = v[k].z;  // matrix get zeros; no output reads them.
-        tile[y][x + 3] = v[k].w;
+        // BUG: a 16-byte shared store into a tile whose rows are 65 words apart: row y starts
+        // at byte 260 y, a multiple of 16 only when y % 4 == 0.
+        *reinterpret_cast<float4*>(&tile[y][x]) = v[k];
     }
 
     __syncthreads();  // the whole tile is loaded before any column is read
