#!/usr/bin/env python3
"""
Lesson 13 step 4's variants for sort_sweep: each is the solution with some of its knobs changed
by exact text substitutions (so a variant can be applied to the solution as it is).

  variants.py write DIR        one DIR/NAME.cu per variant (base: the solution unchanged)
  variants.py apply NAME FILE  the substitutions of NAME, in place, on FILE (the solution)
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sweep"))
import variants as sweep  # noqa: E402  (bench/sweep/variants.py)

SOLUTION = "solutions/13_sort/04_onesweep.cu"
KNOBS = {
    # keys per thread (a tile is 256 threads' keys; at least 16: the workspace has room for
    # four passes' status words of tiles of 4096 keys)
    "items": ("constexpr unsigned int kItems = {n};                // keys per thread",
              "constexpr unsigned int kItems = {};                // keys per thread"),
    # one instruction for the lanes with the same digit, instead of eight ballots
    "match": ("        const unsigned int peers = same_digit_lanes(digit);",
              "        const unsigned int peers = {}(kFullMask, digit);"),
    # a pause before reading an unpublished status word again
    "sleep": ("            if ((word & kFlagMask) == 0) continue;  // not published yet: read it again",
              "            if ((word & kFlagMask) == 0) {{ __nanosleep({}); continue; }}"),
    # blocks per SM asked of ptxas (a register cap) for the pass kernel
    "minb": ("__global__ void __launch_bounds__(kThreads)\n    onesweep_pass(",
             "__global__ void __launch_bounds__(kThreads, {})\n    onesweep_pass("),
    # streaming stores of the scattered keys
    "store": ("        dst[s_offset[(key >> shift) & 0xffu] + i] = key;",
              "        {}(&dst[s_offset[(key >> shift) & 0xffu] + i], key);"),
    # onesweep's early counts: the aggregate is published as soon as the rank has the tile's
    # count of each digit (before its block scan and the keys' final positions), so successors
    # waiting on this tile wait less. Several substitutions; the value is not used.
    "early": [
        ("__device__ void rank_keys(const unsigned int (&keys)[kItems], unsigned int (&pos)[kItems],\n"
         "                          unsigned int shift, RankStorage& s) {",
         "__device__ void rank_keys(const unsigned int (&keys)[kItems], unsigned int (&pos)[kItems],\n"
         "                          unsigned int shift, RankStorage& s, unsigned int* publish,\n"
         "                          unsigned int flag, unsigned int padding) {"),
        ("        s.counts[w][d] = total;\n        total += c;\n    }\n",
         "        s.counts[w][d] = total;\n        total += c;\n    }\n"
         "    *reinterpret_cast<volatile unsigned int*>(publish) =\n"
         "        flag | (total - (d == kRadix - 1 ? padding : 0u));\n"),
        ("    rank_keys(keys, pos, shift, s_rank);",
         "    rank_keys(keys, pos, shift, s_rank, &status[static_cast<size_t>(tile) * kRadix + threadIdx.x],\n"
         "              tile == 0 ? kFlagInclusive : kFlagAggregate, kTile - count);"),
        ("    store_status(&word_of[static_cast<size_t>(tile) * kRadix],\n"
         "                 (tile == 0 ? kFlagInclusive : kFlagAggregate) | mine);\n", ""),
    ],
}
VARIANTS = {
    "base": {},
    "match": {"match": "__match_any_sync"},
    "items20": {"items": 20}, "items24": {"items": 24}, "items32": {"items": 32},
    "match_items20": {"match": "__match_any_sync", "items": 20},
    "match_items24": {"match": "__match_any_sync", "items": 24},
    "match_items32": {"match": "__match_any_sync", "items": 32},
    "sleep100": {"sleep": 100}, "sleep500": {"sleep": 500},
    "minb2": {"minb": 2}, "minb3": {"minb": 3}, "minb4": {"minb": 4},
    "match_minb3": {"match": "__match_any_sync", "minb": 3},
    "match_items24_minb2": {"match": "__match_any_sync", "items": 24, "minb": 2},
    "stcs": {"store": "__stcs"},
    "match_stcs": {"match": "__match_any_sync", "store": "__stcs"},
    "match_items24_stcs": {"match": "__match_any_sync", "items": 24, "store": "__stcs"},
    "match_sleep100": {"match": "__match_any_sync", "sleep": 100},
    "match_minb4": {"match": "__match_any_sync", "minb": 4},
    "match_items20_minb3": {"match": "__match_any_sync", "items": 20, "minb": 3},
    "match_items32_minb2": {"match": "__match_any_sync", "items": 32, "minb": 2},
    "early": {"early": 1},
    "early_match": {"early": 1, "match": "__match_any_sync"},
    "early_match_items24": {"early": 1, "match": "__match_any_sync", "items": 24},
    "early_match_stcs": {"early": 1, "match": "__match_any_sync", "store": "__stcs"},
}


if __name__ == "__main__":
    sweep.main(SOLUTION, KNOBS, VARIANTS)
