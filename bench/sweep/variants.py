"""What the variant sweeps share (bench/compact_sweep, bench/sort_sweep): a variant is a
capstone solution with some of its knobs changed by exact text substitutions, so that the same
change can be applied to the solution as it is. A knob is one (old, new) pair, its value put in
new's {} slot, or a list of pairs taken as they are (the value is then only a switch). In old,
{n} stands for any number and {w} for any name, so a knob still applies once the solution has
taken a variant's value.

  variants.py write DIR        one DIR/NAME.cu per variant (base: the solution unchanged)
  variants.py apply NAME FILE  the substitutions of NAME, in place, on FILE (the solution)
"""
import re
import sys


def pattern(old):
    parts = re.split(r"(\{n\}|\{w\})", old)
    return "".join({"{n}": r"\d+", "{w}": r"[A-Za-z_]\w*"}.get(p, re.escape(p)) for p in parts)


def apply(text, name, knobs, variants):
    for knob, value in variants[name].items():
        pairs = knobs[knob] if isinstance(knobs[knob], list) else [knobs[knob]]
        for old, new in pairs:
            found = list(re.finditer(pattern(old), text))
            if len(found) != 1:
                sys.exit(f"{name}: the solution no longer has exactly one '{old}'")
            new = new if isinstance(knobs[knob], list) else new.format(value)
            text = text[: found[0].start()] + new + text[found[0].end() :]
    return text


def main(solution, knobs, variants, argv=sys.argv):
    if argv[1] == "write":
        base = open(solution).read()
        for name in variants:
            open(f"{argv[2]}/{name}.cu", "w").write(apply(base, name, knobs, variants))
        print(" ".join(variants))
    elif argv[1] == "apply":
        path = argv[3]
        text = apply(open(path).read(), argv[2], knobs, variants)
        open(path, "w").write(text)
    else:
        sys.exit(__doc__)
