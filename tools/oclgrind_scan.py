#!/usr/bin/env python3
"""Finds Oclgrind's reports in a captured log (stdout and stderr of a run
under Oclgrind, with tools/matrix_plugin.py's --matrix-markers lines naming
the test around each report), prints a summary, and exits 1 if there is any.

    oclgrind_scan.py LOG [--json OUT] [--examples N] [--tolerate TEST ...]

--tolerate TEST: reports and crashes inside that test (a node id from the
markers) are counted apart and do not fail the scan; tools/matrix.py uses it
for tests in which Oclgrind itself crashed in its uninitialised-value pass.

Oclgrind (21.10) writes each report as a blank line, a heading at column 0
and tab-indented details (Kernel:, Entity:, the instruction, "At line N of
input.cl"), for example

    Invalid write of size 4 at global memory address 0x1000000000100
    	Kernel: oob
    	Entity: Global(60,0,0) Local(12,0,0) Group(3,0,0)
    	...

and API errors (OCLGRIND_CHECK_API=1) as "Oclgrind - OpenCL runtime error
detected" with "\tFunction: clX" and "\tError: CL_Y" lines. The headings
matched are listed in HEADINGS below, taken from Oclgrind's sources (MemCheck,
RaceDetector, Uninitialized, WorkGroup, WorkItem, the runtime).

One report is not an error and is counted apart: clGetDeviceInfo answering
CL_INVALID_VALUE for 'param_name', i.e. a query of a parameter that an
OpenCL 1.2 device does not have (pyopencl probes newer ones at start-up;
a caller that handles the error is correct).
"""
from __future__ import annotations

import argparse
import collections
import json
import re
import sys

HEADINGS = [
    ("invalid access", r"^Invalid (read|write) of size \d+"),
    ("invalid access", r"^Invalid (read from|write to) .*buffer"),
    ("invalid access", r"^Invalid memory (load|store)"),
    ("invalid access", r"^Index \(.*\) exceeds static array size"),
    ("unaligned", r"^Unaligned address on "),
    ("data race", r"^(Read-write|Write-write) data race at "),
    ("uninitialized", r"^Uninitialized (value|address) "),
    ("uninitialized", r"^(Controlflow|Instruction) depends on (an )?uninitialized"),
    ("divergence", r"^Work-group divergence detected"),
    ("events", r"^(Invalid wait event|Work-item finished without waiting for events)"),
    ("trap", r"^Encountered (trap|unreachable) instruction"),
    ("unsupported", r"^(Undefined external function|Unsupported |Insufficient private memory)"),
    ("fatal", r"^OCLGRIND FATAL ERROR"),
    ("api", r"^Oclgrind - OpenCL runtime error detected"),
    ("oclgrind", r"^Oclgrind: "),
]
_HEADINGS = [(kind, re.compile(rx)) for kind, rx in HEADINGS]
MARKER = re.compile(r"^== matrix (test|done): (.*)$")
CRASH = re.compile(r"^(Fatal Python error|Segmentation fault|Aborted)")


def _ignored(kind, details):
    text = "\n".join(details)
    return (kind == "api" and "Function: clGetDeviceInfo" in text and "CL_INVALID_VALUE" in text
            and "'param_name'" in text)


def scan(lines):
    """Returns (reports, ignored, crashes); a report is a dict with kind,
    heading, test, kernel, location and the whole text."""
    reports, ignored, crashes = [], 0, []
    test = None
    i = 0
    while i < len(lines):
        line = lines[i].rstrip("\n")
        m = MARKER.match(line)
        if m:
            test = m.group(2) if m.group(1) == "test" else None
            i += 1
            continue
        if CRASH.match(line):
            crashes.append({"test": test, "line": line})
        kind = next((k for k, rx in _HEADINGS if rx.match(line)), None)
        if kind is None:
            i += 1
            continue
        details = []
        j = i + 1
        while j < len(lines) and lines[j].startswith("\t"):
            details.append(lines[j].rstrip("\n"))
            j += 1
        if _ignored(kind, details):
            ignored += 1
        else:
            kernel = next((d.split(":", 1)[1].strip() for d in details if d.strip().startswith("Kernel:")), "")
            function = next((d.split(":", 1)[1].strip() for d in details if d.strip().startswith("Function:")), "")
            where = next((d.strip() for d in details if d.strip().startswith("At line")), "")
            reports.append({"kind": kind, "heading": re.sub(r"0x[0-9a-f]+", "0x...", line), "test": test,
                            "kernel": kernel or function, "location": where,
                            "text": "\n".join([line] + details)})
        i = j
    return reports, ignored, crashes


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("log")
    p.add_argument("--json", metavar="OUT", help="write the counts and the first reports as JSON")
    p.add_argument("--examples", type=int, default=3, help="reports printed in full (default 3)")
    p.add_argument("--tolerate", action="append", default=[], metavar="TEST",
                   help="do not count reports and crashes inside this test")
    args = p.parse_args(argv)
    with open(args.log, errors="replace") as f:
        lines = f.readlines()
    reports, ignored, crashes = scan(lines)
    tolerated = [r for r in reports if r["test"] in args.tolerate] + [c for c in crashes if c["test"] in args.tolerate]
    reports = [r for r in reports if r["test"] not in args.tolerate]
    crashes = [c for c in crashes if c["test"] not in args.tolerate]
    by_kind = collections.Counter(r["kind"] for r in reports)
    by_site = collections.Counter((r["kind"], r["kernel"], r["location"]) for r in reports)
    tests = sorted({r["test"] or "(outside a test)" for r in reports})
    print(f"oclgrind: {len(reports)} report(s)"
          + (f" ({', '.join(f'{k} {n}' for k, n in by_kind.most_common())})" if reports else "")
          + f"; {ignored} ignored unsupported-parameter queries; {len(crashes)} crash(es)"
          + (f"; {len(tolerated)} tolerated in {len(args.tolerate)} test(s) where Oclgrind crashed"
             if args.tolerate else ""))
    if reports:
        print(f"  in {len(tests)} test(s): " + ", ".join(tests[:8]) + (" ..." if len(tests) > 8 else ""))
        for (kind, kernel, where), n in by_site.most_common(10):
            print(f"  {n:5d}  {kind:14s} {kernel or '?'}  {where}")
        shown = set()
        for r in reports:
            if len(shown) >= args.examples:
                break
            key = (r["kind"], r["kernel"], r["location"])
            if key in shown:
                continue
            shown.add(key)
            print(f"\n  -- first {r['kind']} report in {r['test'] or '(outside a test)'}:")
            print("  " + r["text"].replace("\n", "\n  "))
    for c in crashes:
        print(f"  crash in {c['test'] or '(outside a test)'}: {c['line']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"reports": len(reports), "by_kind": dict(by_kind), "ignored": ignored,
                       "tolerated": len(tolerated),
                       "crashes": crashes, "tests": tests, "first": reports[:20]}, f, indent=1)
    return 1 if reports or crashes else 0


if __name__ == "__main__":
    sys.exit(main())
