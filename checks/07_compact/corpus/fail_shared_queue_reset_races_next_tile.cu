// step: 07_compact/03_unordered.cu
// emulated: CRASH
//
// Buggy: a two-level queue (shared atomicAdd into a block-local queue, one global atomicAdd per
// tile, coalesced copy-out) in a grid-stride loop, whose reset of the shared queue length has
// no barrier after it: thread 0 sets `queued = 0` while threads that already passed the
// previous barrier start the next tile and atomicAdd into it. A plain store racing with shared
// atomics: increments are lost (two elements in one slot), or the reset wipes them.
// Seen only when a block runs two tiles: the emulated device has one SM, so one_wave_grid's
// blocks go round the loop at the emulated sizes. The race is reported (MEMORY_ERROR) on most
// cases; the step's verdict is CRASH, from the cases where lost increments overflow the queue.
// base: checks/07_compact/corpus/pass_shared_queue_then_one_atomic.cu
--- checks/07_compact/corpus/pass_shared_queue_then_one_atomic.cu
+++ checks/07_compact/corpus/fail_shared_queue_reset_races_next_tile.cu
@@ -20,9 +20,8 @@
         if (threadIdx.x == 0 && length != 0) base = atomicAdd(count, length);
         __syncthreads();
         for (unsigned int k = threadIdx.x; k < length; k += kBlock) out[base + k] = staged[k];
-        __syncthreads();  // every read of queued, base and staged before the reset
-        if (threadIdx.x == 0) queued = 0;
-        __syncthreads();
+        __syncthreads();                   // every read of queued, base and staged before the reset
+        if (threadIdx.x == 0) queued = 0;  // BUG: the next tile's atomics may come first
     }
 }
 
