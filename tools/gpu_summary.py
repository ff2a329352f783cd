#!/usr/bin/env python3
"""Markdown summary of a tools/gpu_run.sh run directory (machine.txt,
devices.json, ops-KS.xml, models-KS-PREC.json, bench-KS.json), for
docs/benchmarks/. Prints to stdout; exit 1 if an op test or a model check
failed or a file is unreadable.

    gpu_summary.py DIR

Targets (issue 12): the GPU kernel set at least 10x faster than XNNPACK on
2 threads on the five largest MediaPipe models (by FLOPs), and faster than
the CPU kernel set on the same GPU on every model; both checked for FP32
and for FP16 storage.
"""
from __future__ import annotations

import json
import pathlib
import sys
import xml.etree.ElementTree as ET

KSETS = ("cpu", "gpu")
PRECS = ("fp32", "fp16")


def _load(path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _junit(path):
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return None
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    n = sum(int(s.get("tests", 0)) for s in suites)
    failed = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
    skipped = sum(int(s.get("skipped", 0)) for s in suites)
    seconds = sum(float(s.get("time", 0)) for s in suites)
    return n - failed - skipped, failed, skipped, seconds


def _ms(x):
    return "–" if x is None else f"{x:.3f}" if x < 1 else f"{x:.2f}"


def _x(a, b):
    """b / a as a speed-up, or None."""
    return b / a if a and b else None


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    d = pathlib.Path(argv[0])
    ok = True
    out = []
    machine = (d / "machine.txt").read_text().splitlines() if (d / "machine.txt").exists() else []
    info = dict(line.split(": ", 1) for line in machine if ": " in line)
    devices = _load(d / "devices.json") or []
    dev = devices[0] if devices else {}
    title = info.get("gpu", "").split(",")[0].strip() or dev.get("name", "unknown device")
    out += [f"# tflite-gpu on {title}", ""]
    out += [f"- **Date**: {info.get('date', '?')}",
            f"- **GPU**: {info.get('gpu', '?')} (nvidia-smi: name, driver, memory)",
            f"- **OpenCL device**: {dev.get('name', '?')} ({dev.get('platform', '?')}, {dev.get('version', '?')}, "
            f"driver {dev.get('driver', '?')}); {dev.get('compute_units', '?')} compute units, work-groups up to "
            f"{dev.get('max_work_group_size', '?')}, local memory {dev.get('local_mem_bytes', 0) // 1024} KiB, "
            f"fp16 {'yes' if dev.get('fp16') else 'no'}, subgroups {'yes' if dev.get('subgroups') else 'no'}",
            f"- **Host**: {info.get('cpu', '?')}; {info.get('host', '?')}",
            f"- **ICD**: {info.get('icd', '?')}",
            f"- **Bundle**: {info.get('bundle', '?')}", ""]

    out += ["## Op tests (tests/test_ops.py)", "", "| kernel set | passed | failed | skipped | time (s) |",
            "|---|---:|---:|---:|---:|"]
    for ks in KSETS:
        r = _junit(d / f"ops-{ks}.xml")
        if r is None:
            out.append(f"| {ks} | not run | | | |")
            continue
        ok &= r[1] == 0
        out.append(f"| {ks} | {r[0]} | {r[1]} | {r[2]} | {r[3]:.0f} |")

    out += ["", "## MediaPipe models (`tflite-gpu check`: PASS, worst relative L2)", ""]
    checks = {(ks, p): _load(d / f"models-{ks}-{p}.json") for ks in KSETS for p in PRECS}
    names = sorted({pathlib.Path(r["model"]).stem for v in checks.values() if v for r in v})
    if names:
        cols = [(ks, p) for ks in KSETS for p in PRECS]
        out += ["| model | " + " | ".join(f"{ks} {p.upper()}" for ks, p in cols) + " |",
                "|---|" + "---|" * len(cols)]
        for name in names:
            cells = []
            for c in cols:
                r = next((r for r in checks[c] or [] if pathlib.Path(r["model"]).stem == name), None)
                if r is None:
                    cells.append("–")
                    continue
                worst = max((o.get("rel_l2") or 0 for o in r.get("outputs", [])), default=0)
                cells.append(f"{'PASS' if r.get('passed') else '**FAIL**'} {worst:.1e}")
                ok &= bool(r.get("passed"))
            out.append(f"| {name} | " + " | ".join(cells) + " |")
    else:
        out.append("not run")

    benches = {ks: _load(d / f"bench-{ks}.json") for ks in KSETS}
    if any(benches.values()):
        out += ["", "## Latency (`tflite-gpu bench`, median ms; XNNPACK on 2 threads)", ""]
        rows = {}
        for ks, rep in benches.items():
            for m in (rep or {}).get("models", []):
                row = rows.setdefault(m["model"], {"gflop": ((m.get("flops") or {}).get("total") or 0) / 1e9})
                cfg = m.get("configs", {})
                row.setdefault("xnnpack", (cfg.get("xnnpack") or {}).get("median_ms"))
                for p in PRECS:
                    row[(ks, p)] = (cfg.get(p) or {}).get("median_ms")
        out += ["| model | GFLOP | XNNPACK | cpu FP32 | cpu FP16 | gpu FP32 | gpu FP16 | gpu FP32 vs XNNPACK | "
                "gpu FP16 vs XNNPACK | gpu vs cpu set (FP32 / FP16) |",
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for name, r in sorted(rows.items(), key=lambda kv: -kv[1]["gflop"]):
            sx = [_x(r.get(("gpu", p)), r.get("xnnpack")) for p in PRECS]
            sc = [_x(r.get(("gpu", p)), r.get(("cpu", p))) for p in PRECS]
            out.append(f"| {name} | {r['gflop']:.3f} | {_ms(r.get('xnnpack'))} | "
                       + " | ".join(_ms(r.get((ks, p))) for ks in KSETS for p in PRECS) + " | "
                       + " | ".join("–" if s is None else f"{s:.1f}x" for s in sx) + " | "
                       + " / ".join("–" if s is None else f"{s:.2f}x" for s in sc) + " |")
        largest = sorted(rows, key=lambda n: -rows[n]["gflop"])[:5]
        out += ["", "### Targets", ""]
        for p in PRECS:
            sx = {n: _x(rows[n].get(("gpu", p)), rows[n].get("xnnpack")) for n in largest}
            met = all(s is not None and s >= 10 for s in sx.values())
            out.append(f"- gpu set {p.upper()} >= 10x XNNPACK (2 threads) on the five largest "
                       f"({', '.join(largest)}): **{'met' if met else 'not met'}** "
                       f"(" + ", ".join("–" if s is None else f"{s:.1f}x" for s in sx.values()) + ")")
            slower = [n for n in rows if not (_x(rows[n].get(("gpu", p)), rows[n].get(("cpu", p))) or 0) > 1]
            out.append(f"- gpu set {p.upper()} faster than the cpu set on every model: "
                       f"**{'met' if not slower else 'not met'}**"
                       + (f" (not on {', '.join(sorted(slower))})" if slower else ""))
    print("\n".join(out))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
