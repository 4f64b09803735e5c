// step: 09_stencil/02_shared_halo.cu
// emulated: MEMORY_ERROR
// reason: race
//
// Buggy: the right halo is stored at s[kBlockSize + t] instead of s[radius + kBlockSize + t]
// (the tile's offset forgotten on one side). The halo loaders then overwrite the tile's last
// `radius` cells, which threads kBlockSize - radius .. kBlockSize - 1 store too (two threads,
// one element, no order), and the real halo cells are never written: the last outputs of every
// block read a neighbour that is the wrong cell, or garbage.
--- solutions/09_stencil/02_shared_halo.cu
+++ checks/09_stencil/corpus/fail_right_halo_without_offset.cu
@@ -32,7 +32,7 @@
     s[radius + t] = load(x, i, n, boundary);
     if (t < static_cast<unsigned int>(radius)) {
         s[t] = load(x, b0 - radius + t, n, boundary);
-        s[radius + kBlockSize + t] = load(x, b0 + kBlockSize + t, n, boundary);
+        s[kBlockSize + t] = load(x, b0 + kBlockSize + t, n, boundary);  // BUG: radius + missing
     }
     // Every thread reads cells that other threads stored. No thread may return before this
     // barrier, not even one past n: all threads of the block must reach it.
