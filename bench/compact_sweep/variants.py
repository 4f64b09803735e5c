#!/usr/bin/env python3
"""Lesson 07 step 4's variants for compact_sweep: each is the solution with some of its knobs
changed by exact text substitutions (so a variant can be applied to the solution as it is).

  variants.py write DIR        one DIR/NAME.cu per variant (base: the solution unchanged)
  variants.py apply NAME FILE  the substitutions of NAME, in place, on FILE (the solution)
"""
import sys

SOLUTION = "solutions/07_compact/04_single_pass.cu"
KNOBS = {
    "mb": ("constexpr unsigned int kMinBlocksPerSM = 5;", "constexpr unsigned int kMinBlocksPerSM = {};"),
    "ld": ("constexpr unsigned int kLookbackDelayNs = 1000;", "constexpr unsigned int kLookbackDelayNs = {};"),
    "pd": ("constexpr unsigned int kPollDelayNs = 300;", "constexpr unsigned int kPollDelayNs = {};"),
    "bs": ("constexpr unsigned int kBlockSize = 256;", "constexpr unsigned int kBlockSize = {};"),
    "load": ("q[r] = __ldg(reinterpret_cast<const float4*>(in + first + r * kRound));",
             "q[r] = {}(reinterpret_cast<const float4*>(in + first + r * kRound));"),
    "store": ("for (unsigned int k = lane; k < warp_count; k += kWarpSize) warp_out[k] = warp_stage[k];",
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

def apply(text, name):
    for knob, value in VARIANTS[name].items():
        old, new = KNOBS[knob]
        if text.count(old) != 1:
            sys.exit(f"{name}: the solution no longer has exactly one '{old}'")
        text = text.replace(old, new.format(value))
    return text

if __name__ == "__main__":
    if sys.argv[1] == "write":
        base = open(SOLUTION).read()
        for name in VARIANTS:
            open(f"{sys.argv[2]}/{name}.cu", "w").write(apply(base, name))
        print(" ".join(VARIANTS))
    elif sys.argv[1] == "apply":
        path = sys.argv[3]
        text = apply(open(path).read(), sys.argv[2])
        open(path, "w").write(text)
