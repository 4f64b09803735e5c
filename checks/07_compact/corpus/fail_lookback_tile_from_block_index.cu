// step: 07_compact/04_single_pass.cu
// emulated: TIMEOUT
//
// Buggy: the single pass with its tile number taken from blockIdx.x instead of an atomic
// ticket. Tile t's look-back waits for tiles t - 1, t - 2, ..., but nothing promises that their
// blocks have started: on a full GPU they may only start when a waiting block ends, which it
// never does. Today's GPUs start blocks in index order, so it usually passes there; the
// emulator starts them shuffled, four at a time, and reports the wait for a block that has not
// started.
// base: checks/07_compact/corpus/pass_lookback_atomic_ref_direct_scatter.cu
--- checks/07_compact/corpus/pass_lookback_atomic_ref_direct_scatter.cu
+++ checks/07_compact/corpus/fail_lookback_tile_from_block_index.cu
@@ -36,7 +36,8 @@
     __shared__ unsigned int s_tile, s_prefix;
     __shared__ unsigned int s_warp[kWarps];
     const unsigned int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
-    if (threadIdx.x == 0) s_tile = atomicAdd(ticket, 1u);
+    if (threadIdx.x == 0) s_tile = blockIdx.x;  // BUG: the order blocks start is not blockIdx
+    (void)ticket;
     __syncthreads();
     const unsigned int tile = s_tile;
     const size_t first = static_cast<size_t>(tile) * kTileItems + kItems * threadIdx.x;
