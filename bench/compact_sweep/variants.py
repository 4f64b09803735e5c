#!/usr/bin/env python3
"""
Lesson 07 step 4's variants for compact_sweep: each is the solution with some of its knobs
changed by exact text substitutions (so a variant can be applied to the solution as it is).

  variants.py write DIR        one DIR/NAME.cu per variant (base: the solution unchanged)
  variants.py apply NAME FILE  the substitutions of NAME, in place, on FILE (the solution)
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sweep"))
import variants as sweep  # noqa: E402  (bench/sweep/variants.py)

SOLUTION = "solutions/07_compact/04_single_pass.cu"
KNOBS = {
    "mb": ("constexpr unsigned int kMinBlocksPerSM = {n};", "constexpr unsigned int kMinBlocksPerSM = {};"),
    "ld": ("constexpr unsigned int kLookbackDelayNs = {n};", "constexpr unsigned int kLookbackDelayNs = {};"),
    "pd": ("constexpr unsigned int kPollDelayNs = {n};", "constexpr unsigned int kPollDelayNs = {};"),
    "bs": ("constexpr unsigned int kBlockSize = {n};", "constexpr unsigned int kBlockSize = {};"),
    "load": ("q[r] = {w}(reinterpret_cast<const float4*>(in + first + r * kRound));",
             "q[r] = {}(reinterpret_cast<const float4*>(in + first + r * kRound));"),
    "store": ("for (unsigned int k = lane; k < warp_count; k += kWarpSize) {w}(&warp_out[k], warp_stage[k]);",
              "for (unsigned int k = lane; k < warp_count; k += kWarpSize) {}(&warp_out[k], warp_stage[k]);"),
}
VARIANTS = {
    "base": {},
    "mb4": {"mb": 4}, "mb6": {"mb": 6}, "mb3": {"mb": 3},
    "ld0": {"ld": 0}, "ld500": {"ld": 500}, "ld2000": {"ld": 2000}, "ld4000": {"ld": 4000},
    "pd100": {"pd": 100}, "pd1000": {"pd": 1000},
    "ldcs": {"load": "__ldcs"}, "ldlu": {"load": "__ldlu"}, "stcs": {"store": "__stcs"},
    "ldcs_stcs": {"load": "__ldcs", "store": "__stcs"},
    "ldcs_stcs_ld2000": {"load": "__ldcs", "store": "__stcs", "ld": 2000},
    "ldcs_stcs_mb4": {"load": "__ldcs", "store": "__stcs", "mb": 4},
    "b128_mb10": {"bs": 128, "mb": 10}, "b128_mb8": {"bs": 128, "mb": 8},
    "b128_mb10_ld500": {"bs": 128, "mb": 10, "ld": 500},
    "b128_mb10_ldcs_stcs": {"bs": 128, "mb": 10, "load": "__ldcs", "store": "__stcs"},
    "b128_mb12": {"bs": 128, "mb": 12},
    "ld3000": {"ld": 3000}, "ld6000": {"ld": 6000}, "ld8000": {"ld": 8000},
    "ldcs_stcs_ld4000": {"load": "__ldcs", "store": "__stcs", "ld": 4000},
    "ldcs_stcs_ld6000": {"load": "__ldcs", "store": "__stcs", "ld": 6000},
    "stcs_ld4000": {"store": "__stcs", "ld": 4000},
    "ldcs_ld4000": {"load": "__ldcs", "ld": 4000},
    "ld4000_pd1000": {"ld": 4000, "pd": 1000},
    "ldcs_stcs_ld4000_pd1000": {"load": "__ldcs", "store": "__stcs", "ld": 4000, "pd": 1000},
}


if __name__ == "__main__":
    sweep.main(SOLUTION, KNOBS, VARIANTS)
