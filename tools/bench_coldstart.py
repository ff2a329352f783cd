"""Cold start, cache-writing start and cached start of two builds of the
library, A/B per model (issue 16); writes docs/benchmarks/coldstart.md and
coldstart.json.

Usage: python tools/bench_coldstart.py --before OLD.so --after NEW.so [--out-dir docs/benchmarks] [MODEL ...]
       python tools/bench_coldstart.py --lib LIB.so [--notes FILE.md] [MODEL ...]  # one build: where the time goes
       python tools/bench_coldstart.py --from-json docs/benchmarks/coldstart.json   # re-render the markdown

Every run is a fresh process with POCL_KERNEL_CACHE=0, timing load_delegate +
Interpreter + allocate_tensors + set inputs (zeros) + first invoke ("first"),
and also until the interpreter and delegate are freed ("until freed": a
kernel-cache write still running on its thread is waited for there). Per
model and build: cold (no cache), writing (an empty serialization_dir),
cached (the same directory again). The two builds alternate per model, so
load on the machine hits both alike.

Per-program build times: TFLITE_GPU_BUILD_LOG=1 prints one stderr line per
program the library compiles.
"""
import argparse
import datetime
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))

from tflite_gpu import model_token, models  # noqa: E402

CHILD = r"""
import json, sys, time
import numpy as np
import tflite_gpu
from tflite_gpu import load_delegate
mod = tflite_gpu.runtime()
path, opts = sys.argv[1], json.loads(sys.argv[2])
t0 = time.perf_counter()
d = load_delegate(**opts)
it = mod.Interpreter(model_path=path, experimental_delegates=[d])
t1 = time.perf_counter()
it.allocate_tensors()
for det in it.get_input_details():
    it.set_tensor(det["index"], np.zeros(det["shape"], det["dtype"]))
t2 = time.perf_counter()
it.invoke()
t3 = time.perf_counter()
del it, d
t4 = time.perf_counter()
print(json.dumps({"interpreter": t1 - t0, "invoke": t3 - t2, "first": t3 - t0, "until_freed": t4 - t0}))
"""


def run(lib, path, opts):
    env = dict(os.environ, POCL_KERNEL_CACHE="0", TFLITE_GPU_LIBRARY=str(lib),
               PYTHONPATH=str(ROOT / "python"))
    env.pop("TFLITE_GPU_CACHE_DIR", None)
    p = subprocess.run([sys.executable, "-c", CHILD, str(path), json.dumps(opts)], env=env, capture_output=True,
                       text=True)
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    return json.loads(lines[-1]) if lines else {"error": p.stderr[-300:]}


def measure(libs, name):
    path = models.model_path(name)
    tok = model_token(path)
    row = {"model": name}
    for tag, lib in libs.items():
        with tempfile.TemporaryDirectory(prefix="tflite_gpu_cold_") as d:
            opts = {"serialization_dir": d, "model_token": tok}
            row[tag] = {"cold": run(lib, path, {}), "write": run(lib, path, opts), "cached": run(lib, path, opts)}
    return row


def _machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores"


def s(x, fmt="{:.3f}"):
    """A table cell: x formatted, or "error" for a run that failed."""
    return fmt.format(x) if x is not None else "error"


def _f(x, key="first"):
    return x.get(key) if isinstance(x, dict) else None


def _single_markdown(report) -> str:
    """One build: cold first result split into Interpreter construction
    (program builds) and first invoke (PoCL's work-group functions)."""
    lines = [
        "# Cold start (issue 16)",
        "",
        f"- **Date**: {report['date']}",
        f"- **Machine**: {report['machine']}; load average at start {report['loadavg_start']}, "
        f"at end {report['loadavg_end']}",
        f"- **Library**: {report.get('library', '')}",
        "- **Method**: fresh process per run, POCL_KERNEL_CACHE=0; *Interpreter* = load_delegate + "
        "Interpreter(...) (the delegate's prepare: every OpenCL program is built here); *first invoke* = "
        "the first invoke() after allocate_tensors and the inputs (PoCL compiles each kernel's work-group "
        "function at its first launch); *first result* = both and the rest; writing = an empty "
        "serialization_dir; cached = the same directory again; FP32, one run each.",
        "- **Targets**: first result <= 1.5 s cold; writing <= 1.2x cold; cached <= 0.15 s.",
        "",
        "| model | cold: Interpreter (s) | cold: first invoke (s) | cold: first result (s) | writing (s) "
        "| writing / cold | cached (s) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]

    firsts, ratios, cached = [], [], []
    for r in report["rows"]:
        b = r["lib"]
        c, w, k = _f(b["cold"]), _f(b["write"]), _f(b["cached"])
        ratio = w / c if c and w else None
        firsts += [c] if c else []
        ratios += [ratio] if ratio else []
        cached += [k] if k else []
        lines.append(f"| {r['model']} | {s(_f(b['cold'], 'interpreter'))} | {s(_f(b['cold'], 'invoke'))} | {s(c)} "
                     f"| {s(w)} | {s(ratio, '{:.2f}x')} | {s(k)} |")
    if firsts and ratios and cached:
        lines += ["", f"Over {len(firsts)} models: cold first result {min(firsts):.2f}-{max(firsts):.2f} s "
                      f"(median {statistics.median(firsts):.2f}); writing / cold {min(ratios):.2f}-"
                      f"{max(ratios):.2f}x (median {statistics.median(ratios):.2f}x); cached "
                      f"{min(cached):.3f}-{max(cached):.3f} s (median {statistics.median(cached):.3f})."]
    lines += ["", report.get("notes", "")]
    return "\n".join(lines).rstrip() + "\n"


def to_markdown(report) -> str:
    if report.get("mode") == "single":
        return _single_markdown(report)
    rows = report["rows"]
    lines = [
        "# Cold start (issue 16)",
        "",
        f"- **Date**: {report['date']}",
        f"- **Machine**: {report['machine']}; load average at start {report['loadavg_start']}, "
        f"at end {report['loadavg_end']} (before and after alternate per model, so load hits both alike)",
        "- **Method**: fresh process per run, POCL_KERNEL_CACHE=0; *first* = load_delegate + Interpreter + "
        "allocate_tensors + set inputs + first invoke; *freed* = until the interpreter and delegate are "
        "deleted (a cache write on its thread is waited for); writing = empty serialization_dir; cached = "
        "the same directory again; FP32, one run each.",
        "- **Targets**: first result <= 1.5 s cold; writing <= 1.2x cold; cached <= 0.15 s.",
        "",
        "| model | cold before (s) | cold after (s) | after: Interpreter + first invoke (s) "
        "| writing / cold before | writing / cold after "
        "| writing after, until freed (s) | cached before (s) | cached after (s) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    ratios_b, ratios_a = [], []
    for r in rows:
        b, a = r["before"], r["after"]
        cb, ca = _f(b["cold"]), _f(a["cold"])
        wb, wa = _f(b["write"]), _f(a["write"])
        rb = wb / cb if cb and wb else None
        ra = wa / ca if ca and wa else None
        if rb:
            ratios_b.append(rb)
        if ra:
            ratios_a.append(ra)

        split = f"{s(_f(a['cold'], 'interpreter'))} + {s(_f(a['cold'], 'invoke'))}"
        lines.append(f"| {r['model']} | {s(cb)} | {s(ca)} | {split} | {s(rb, '{:.2f}x')} | {s(ra, '{:.2f}x')} | "
                     f"{s(_f(a['write'], 'until_freed'))} | {s(_f(b['cached']))} | {s(_f(a['cached']))} |")
    if ratios_b and ratios_a:
        lines += ["", f"Writing / cold, median over models: before {statistics.median(ratios_b):.2f}x, "
                      f"after {statistics.median(ratios_a):.2f}x (worst {max(ratios_a):.2f}x)."]
    colds = [(_f(r["before"]["cold"]), _f(r["after"]["cold"])) for r in rows]
    colds = [(b, a) for b, a in colds if b and a]
    if colds:
        lines += ["", f"Cold first result, median over models: before {statistics.median(b for b, _ in colds):.2f} s, "
                      f"after {statistics.median(a for _, a in colds):.2f} s (after / before: median "
                      f"{statistics.median(a / b for b, a in colds):.2f}, range {min(a / b for b, a in colds):.2f}-"
                      f"{max(a / b for b, a in colds):.2f})."]
    lines += ["", report.get("notes", "")]
    return "\n".join(lines).rstrip() + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*")
    ap.add_argument("--before")
    ap.add_argument("--after")
    ap.add_argument("--lib", help="one build: record where its cold start goes (instead of --before/--after)")
    ap.add_argument("--notes", help="markdown appended under the table")
    ap.add_argument("--out-dir", default=str(ROOT / "docs" / "benchmarks"))
    ap.add_argument("--from-json")
    args = ap.parse_args(argv)
    out = pathlib.Path(args.out_dir)
    if args.from_json:
        report = json.loads(pathlib.Path(args.from_json).read_text())
    else:
        if not (args.lib or (args.before and args.after)):
            ap.error("--lib, or --before and --after, are required")
        libs = {"lib": args.lib} if args.lib else {"before": args.before, "after": args.after}
        names = args.models or list(models.MODELS)
        load0 = " / ".join(f"{x:.2f}" for x in os.getloadavg())
        rows = []
        for n in names:
            rows.append(measure(libs, n))
            print(json.dumps(rows[-1]), flush=True)
        report = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                  "machine": _machine(), "loadavg_start": load0,
                  "loadavg_end": " / ".join(f"{x:.2f}" for x in os.getloadavg()), "rows": rows}
        if args.lib:
            head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                                  text=True).stdout.strip()
            report.update(mode="single", library=f"{args.lib} (source tree at {head or 'unknown commit'})")
    if args.notes:
        report["notes"] = pathlib.Path(args.notes).read_text()
    if not args.from_json or args.notes:
        (out / "coldstart.json").write_text(json.dumps(report, indent=1) + "\n")
    (out / "coldstart.md").write_text(to_markdown(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
