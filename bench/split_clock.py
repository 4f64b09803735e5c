#!/usr/bin/env python3
"""The judge split's clock against the learner's claims, step by step, from a timed `check --json`
file (the split is the default): the learner's event median (its claim), the judge's host median
around the same calls, the round trip's cost the probes measured before the learner's code was
loaded, and how the two agree (seen = host - overhead; SUSPECT past 1.10 x claim + 2 x IQR + 150 us:
core/run/stats.cpp, cross_check_claim); and the canary: the judge's own L2 flush between the calls
against the same flush before the learner's code was loaded (SUSPECT past 1.25 x before + 50 us:
canary_slowed). With the reference timed apart (runner/timing.h, Apart), its side too: the
reference's median (both phases), its two phases' medians before and after the learner's and
their drift, the judge's host clock around its calls (seen/claim for identical code), the learner
phases made and the processes beyond the checker's own NVML saw around the reference's phases.

    python3 bench/split_clock.py RESULTS.json
"""
import json
import sys


def main(path):
    results = json.load(open(path))["results"]
    print(f'{"step":44} {"verdict":8} {"column":10} {"claim":>9} {"host":>9} {"overhead":>9} '
          f'{"iqr":>6} {"seen/claim":>10} {"room":>8} {"flush":>7} {"before":>7}')
    worst = None
    for r in results:
        for t in r.get("timings", []):
            claim = t["learner"]["median_us"]
            host = t.get("host_median_us", 0)
            over = t.get("host_overhead_us", 0)
            iqr = t.get("host_overhead_iqr_us", 0)
            seen = host - over
            limit = 1.10 * claim + 2 * iqr + 150
            room = limit - seen  # microseconds left before SUSPECT
            ratio = seen / claim if claim else 0
            print(f'{r["step"][:44]:44} {r["verdict"][:8]:8} {(t.get("column") or "")[:10]:10} '
                  f'{claim:9.1f} {host:9.1f} {over:9.1f} {iqr:6.1f} {ratio:10.3f} {room:8.1f} '
                  f'{t.get("flush_us", 0):7.1f} {t.get("flush_before_us", 0):7.1f}')
            if over > 0 and (worst is None or room < worst[0]):
                worst = (room, r["step"], t.get("column"))
    if worst:
        print(f"least room before SUSPECT: {worst[0]:.1f} us ({worst[1]} {worst[2] or ''})")
    apart = [(r, t) for r in results for t in r.get("timings", []) if t.get("learner_phases")]
    if not apart:
        return
    print()
    print(f'{"step":44} {"column":10} {"learner":>9} {"ref":>9} {"x ref":>7} {"ref before":>10} '
          f'{"ref after":>9} {"drift":>6} {"ref host":>9} {"seen/claim":>10} {"L":>2} {"others":>6}')
    for r, t in apart:
        ref = t.get("reference", {}).get("median_us", 0)
        mine = t["learner"]["median_us"]
        rhost = t.get("reference_host_median_us", 0)
        over = t.get("host_overhead_us", 0)
        ratio = (rhost - over) / ref if ref else 0
        print(f'{r["step"][:44]:44} {(t.get("column") or "")[:10]:10} {mine:9.1f} {ref:9.1f} '
              f'{(ref / mine if mine else 0):7.3f} {t.get("reference_before_us", 0):10.1f} '
              f'{t.get("reference_after_us", 0):9.1f} {100 * t.get("reference_drift", 0):5.2f}% '
              f'{rhost:9.1f} {ratio:10.3f} {t.get("learner_phases", 0):2d} '
              f'{t.get("others_on_gpu", -1):6d}')


if __name__ == "__main__":
    main(sys.argv[1])
