// step: 08_transpose/04_padded_tile.cu
// emulated: MEMORY_ERROR
// reason: race
//
// Buggy: pass_2d_grid_stride_tiles.cu without the barrier at the end of the loop body. One
// barrier per tile looks enough (it is, with one tile per block), but a block here walks several
// tiles: a warp that finishes its store phase starts loading the next tile into cells that
// slower warps are still reading as columns of the previous one.
// base: checks/08_transpose/corpus/pass_2d_grid_stride_tiles.cu
--- checks/08_transpose/corpus/pass_2d_grid_stride_tiles.cu
+++ checks/08_transpose/corpus/fail_grid_stride_tiles_one_barrier.cu
@@ -19,7 +19,7 @@
             __syncthreads();
             for (unsigned int y = threadIdx.y; y < kTile; y += kRows)
                 if (c0 + y < cols && r0 + x < rows) out[(c0 + y) * rows + r0 + x] = tile[x][y];
-            __syncthreads();  // the tile is free again
+            // BUG: no __syncthreads() here: the next iteration's load overwrites the tile
         }
     }
 }
