// step: 07_compact/02_two_pass.cu
// emulated: MEMORY_ERROR
// reason: race
//
// Buggy: the two-pass compaction's scatter without the barrier at the end of each tile. The
// next tile's lane 31 of each warp overwrites warp_totals while slower warps of the block still
// read the previous tile's totals. A block walks more than one tile only above 2^20 elements
// (1024 chunks of up to 1024 tiles), past the sizes the emulator checks for races: the one
// values-only case (2^20 + 3 here) comes out wrong, and the checker runs that case again with
// the race checks on, which names the two lines. A GPU's warps seldom drift a whole tile apart,
// so it usually passes there.
--- solutions/07_compact/02_two_pass.cu
+++ checks/07_compact/corpus/fail_two_pass_no_end_of_tile_barrier.cu
@@ -123,8 +123,6 @@
         for (unsigned int j = 0; j < 4; ++j)
             if ((p.keep >> j) & 1u) out[pos++] = p.v[j];
         carry += tile_total;
-        // The next tile overwrites warp_totals: every warp must have read them first.
-        __syncthreads();
     }
 }
 
