#!/usr/bin/env python3
"""Lines of the course's bad submissions as stored (issue #33's figure: fixtures and the
emulator's corpus together, at most half of what they were), and the pairs of them that repeat
each other (at most a quarter):

    bench/fixture_lines.py [--rev REV] [--json] [--pairs]

Counts checks/*/fixtures/*.cu (fixtures) and checks/*/corpus/*.cu (corpus), in the
working tree or, with --rev, at a commit (git show, so two commits compare without a checkout).
For each set: files, lines, header lines (the leading // block), and how many files are patches
(checker/core/tools/fixtures.h: the body starts with "--- "), with per-lesson lines. Prints a
table, or JSON with --json.

Pairs: two files (or two places in one file) that share a run of PAIR_LINES or more lines, the
same or of the same shape (names, numbers and strings aside), as the `duplicates` tool of the
workplace counts them: blank lines, comments, lone punctuation and #include lines are passed
over, white space is folded, and a run that stands in more than PAIR_MOST_PLACES places is too
common to count. A pair counts once however many runs its two files share. Counted as stored (a
patch's lines as the patch has them), split into pairs within the fixtures, within the corpus and
across the two; --pairs lists them.
"""
import argparse
import fnmatch
import itertools
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# (set, files, which part of the path names the lesson); the corpus lay in
# emulator/tests/submissions/NN_topic/ before it moved beside the fixtures, so older commits count.
SETS = [("fixtures", "checks/*/fixtures/*.cu", 1), ("corpus", "checks/*/corpus/*.cu", 1),
        ("corpus", "emulator/tests/submissions/*/*.cu", 3)]
PAIR_LINES = 6
PAIR_MOST_PLACES = 8
# Words that keep their spelling in a line's shape (everything else that looks like a name is a
# name); the C++ keywords and CUDA's qualifiers a submission uses.
KEYWORDS = set("""
    alignas alignof asm auto bool break case catch char class const constexpr continue decltype
    default delete do double else enum explicit extern false float for friend goto if inline int
    long namespace new noexcept nullptr operator private protected public register return short
    signed sizeof static static_assert static_cast reinterpret_cast const_cast struct switch
    template this throw true try typedef typename union unsigned using virtual void volatile while
    __global__ __device__ __host__ __shared__ __constant__ __restrict__ __forceinline__
    __launch_bounds__ __syncthreads __syncwarp
""".split())
TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|[A-Za-z_]\w*|\d[\w.]*|\S')


def files_at(rev):
    """(path, text) of every file of the two sets, at `rev` or in the working tree."""
    if rev:
        names = subprocess.run(["git", "-C", ROOT, "ls-tree", "-r", "--name-only", rev],
                               capture_output=True, text=True, check=True).stdout.split("\n")
    else:
        names = []
        for base, _, files in os.walk(ROOT):
            for f in files:
                names.append(os.path.relpath(os.path.join(base, f), ROOT))
    for name in sorted(names):
        for set_name, pattern, lesson_part in SETS:
            if fnmatch.fnmatchcase(name, pattern) and name.count("/") == pattern.count("/"):
                if rev:
                    data = subprocess.run(["git", "-C", ROOT, "show", f"{rev}:{name}"],
                                          capture_output=True, check=True).stdout
                else:
                    with open(os.path.join(ROOT, name), "rb") as f:
                        data = f.read()
                yield set_name, name.split("/")[lesson_part], name, data.decode("latin-1")


def count(rev):
    sets = {name: {"files": 0, "lines": 0, "header": 0, "patches": 0, "patch_lines": 0,
                   "lessons": {}} for name, _, _ in SETS}
    for set_name, lesson, _, text in files_at(rev):
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        header = 0
        while header < len(lines) and lines[header].startswith("//"):
            header += 1
        s = sets[set_name]
        s["files"] += 1
        s["lines"] += len(lines)
        s["header"] += header
        if header < len(lines) and lines[header].startswith("--- "):
            s["patches"] += 1
            s["patch_lines"] += len(lines)
        s["lessons"][lesson] = s["lessons"].get(lesson, 0) + len(lines)
    total = {k: sum(s[k] for s in sets.values())
             for k in ("files", "lines", "header", "patches", "patch_lines")}
    return {"rev": rev or "working tree", "sets": sets, "total": total}


def shape_lines(text):
    """(line number, exact key, shape key) of each line that counts towards a pair."""
    out = []
    in_block = False
    for number, line in enumerate(text.split("\n"), 1):
        folded = " ".join(line.split())
        if in_block:
            if "*/" in folded:
                in_block = False
            continue
        if folded.startswith("/*"):
            in_block = "*/" not in folded
            continue
        code = folded.split("//", 1)[0].strip() if not folded.startswith('"') else folded
        if not code or code.startswith("#include") or not re.search(r"\w", code):
            continue
        tokens = TOKEN.findall(code)
        shape = " ".join("S" if t[0] in "\"'" else "N" if t[0].isdigit() else
                         t if t in KEYWORDS or not (t[0].isalpha() or t[0] == "_") else "X"
                         for t in tokens)
        out.append((number, code, shape))
    return out


def pairs_of(files):
    """Pairs of places among `files` (path -> text) that share PAIR_LINES lines or more:
    {(path a, path b): (first line in a, first line in b)}, a <= b."""
    where = {}
    for path, text in files.items():
        lines = shape_lines(text)
        for k in range(len(lines) - PAIR_LINES + 1):
            key = tuple(line[2] for line in lines[k:k + PAIR_LINES])
            where.setdefault(key, []).append((path, k, lines[k][0]))
    pairs = {}
    for places in where.values():
        if len(places) < 2 or len(places) > PAIR_MOST_PLACES:
            continue
        for (pa, ka, la), (pb, kb, lb) in itertools.combinations(sorted(places), 2):
            if pa == pb and kb - ka < PAIR_LINES:
                continue  # one place overlapping itself
            pairs.setdefault((pa, pb), (la, lb))
    return pairs


def count_pairs(rev):
    files = list(files_at(rev))
    pairs = pairs_of({name: text for _, _, name, text in files})
    kind = {name: set_name for set_name, _, name, _ in files}
    split = {"fixtures": 0, "corpus": 0, "across": 0}
    for a, b in pairs:
        split[kind[a] if kind[a] == kind[b] else "across"] += 1
    return {"pairs": len(pairs), **split,
            "list": [{"a": a, "line_a": la, "b": b, "line_b": lb}
                     for (a, b), (la, lb) in sorted(pairs.items())]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rev", help="count at this commit instead of the working tree")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--pairs", action="store_true", help="list the pairs")
    args = ap.parse_args()
    result = count(args.rev)
    result["pairs"] = count_pairs(args.rev)
    if not args.pairs and not args.json:
        del result["pairs"]["list"]
    if args.json:
        json.dump(result, sys.stdout, indent=2)
        print()
        return 0
    print(f"lines as stored ({result['rev']})\n")
    print("| set | files | lines | header | patches (their lines) |")
    print("|-----|-------|-------|--------|-----------------------|")
    rows = list(result["sets"].items()) + [("together", result["total"])]
    for name, s in rows:
        print(f"| {name} | {s['files']} | {s['lines']:,} | {s['header']:,} | "
              f"{s['patches']} ({s['patch_lines']:,}) |")
    for name, s in result["sets"].items():
        per = ", ".join(f"{lesson} {n:,}" for lesson, n in sorted(s["lessons"].items()))
        print(f"\n{name} by lesson: {per}")
    p = result["pairs"]
    print(f"\npairs sharing {PAIR_LINES}+ lines (same or same shape): {p['pairs']} "
          f"({p['fixtures']} among the fixtures, {p['corpus']} in the corpus, "
          f"{p['across']} across)")
    for row in p.get("list", []):
        print(f"  {row['a']}:{row['line_a']} ~ {row['b']}:{row['line_b']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
