#!/usr/bin/env python3
"""Samples of the op tests for tools/run_matrix.sh, from the kernel records
that tools/matrix_plugin.py writes (--matrix-kernels: one JSON line per test
with the kernels its delegates launched and its time).

  matrix_sample.py cover RECORDS [--extra-every N] [--out FILE]
      A small set of passing tests that together launch every kernel the
      records saw (FP16-storage builds counted apart, as NAME@FP16): greedy
      weighted set cover, cheapest first (time per newly covered kernel), so
      the sample favours the small shapes. --extra-every N adds every Nth
      test as well. Prints node ids in record order.

  matrix_sample.py check RECORDS SAMPLE_RECORDS
      Exit 1, naming them, if a kernel in RECORDS was launched by no test in
      SAMPLE_RECORDS (the sampled run did not cover every variant).

  matrix_sample.py kernels RECORDS
      The kernels seen, with how many tests launched each.
"""
from __future__ import annotations

import argparse
import json
import sys


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def cover(records, extra_every=0):
    usable = [r for r in records if r["outcome"] == "passed" and r["kernels"]]
    universe = set().union(*(set(r["kernels"]) for r in usable)) if usable else set()
    chosen, covered = [], set()
    # A fixed overhead per test (delegate creation, CPU reference) keeps the
    # cover from preferring many tiny tests over one that covers several.
    overhead = 0.05
    while covered != universe:
        best = min((r for r in usable if set(r["kernels"]) - covered),
                   key=lambda r: ((r["seconds"] + overhead) / len(set(r["kernels"]) - covered), r["nodeid"]))
        chosen.append(best["nodeid"])
        covered |= set(best["kernels"])
    ids = set(chosen)
    if extra_every:
        ids |= {r["nodeid"] for i, r in enumerate(records) if i % extra_every == 0}
    return [r["nodeid"] for r in records if r["nodeid"] in ids], universe


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("cover")
    c.add_argument("records")
    c.add_argument("--extra-every", type=int, default=0)
    c.add_argument("--out")
    k = sub.add_parser("check")
    k.add_argument("records")
    k.add_argument("sample_records")
    s = sub.add_parser("kernels")
    s.add_argument("records")
    args = p.parse_args(argv)

    if args.cmd == "cover":
        records = load(args.records)
        ids, universe = cover(records, args.extra_every)
        seconds = sum(r["seconds"] for r in records if r["nodeid"] in set(ids))
        text = "".join(f"{i}\n" for i in ids)
        header = (f"# {len(ids)} of {len(records)} tests cover {len(universe)} kernels "
                  f"({seconds:.1f} s in the recorded run)\n")
        if args.out:
            with open(args.out, "w") as f:
                f.write(header + text)
        else:
            sys.stdout.write(header + text)
        print(header.strip("# \n"), file=sys.stderr)
        return 0
    if args.cmd == "check":
        want = set().union(*(set(r["kernels"]) for r in load(args.records) if r["outcome"] == "passed"))
        got = set().union(set(), *(set(r["kernels"]) for r in load(args.sample_records)))
        missing = sorted(want - got)
        if missing:
            print(f"sampled run launched {len(want) - len(missing)} of {len(want)} kernels; never: "
                  f"{', '.join(missing)}", file=sys.stderr)
            return 1
        print(f"sampled run launched all {len(want)} kernels")
        return 0
    if args.cmd == "kernels":
        counts = {}
        for r in load(args.records):
            for name in r["kernels"]:
                counts[name] = counts.get(name, 0) + 1
        for name in sorted(counts):
            print(f"{counts[name]:6d}  {name}")
        return 0
    return 2


if __name__ == "__main__":
    sys.exit(main())
