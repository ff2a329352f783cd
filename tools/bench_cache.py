"""Time to first result without and with the delegate's kernel cache
(serialization_dir + model_token) on the MediaPipe models; writes
docs/benchmarks/serialization.md and serialization.json.

Usage: python tools/bench_cache.py [--configs fp32,fp16] [--repeats 3] [--out-dir docs/benchmarks] [MODEL ...]
       python tools/bench_cache.py --from-json docs/benchmarks/serialization.json   # re-render the markdown

Every measurement is a fresh Python process (imports excluded) timing
load_delegate + Interpreter construction + allocate_tensors + set inputs +
first invoke, always with POCL_KERNEL_CACHE=0 so PoCL's own cache never helps:

    cold     no kernel cache: every program compiled from source, every
             work-group function generated at its first launch
    writing  an empty cache directory: the same compile, then the program
             binaries are read back and written after the first invoke
    cached   the directory the previous run filled: binaries loaded, nothing
             compiled (the run must report a cache hit and no miss)

cached / cold is the number the issue asks to be <= 10% on every model.
"""
import argparse
import datetime
import json
import os
import pathlib
import statistics
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))

from tflite_gpu import bench, cache_options, models  # noqa: E402

TARGET = 0.10


def _median(runs):
    secs = [r["seconds"] for r in runs if "seconds" in r]
    return statistics.median(secs) if secs else None


def measure(path, config, threads, repeats, seed=0):
    """One model and configuration: cold, writing and cached runs."""
    row = {"config": config}
    cold = [bench.measure_first_result(path, config, threads, {}, cold=True, seed=seed) for _ in range(repeats)]
    row["cold_s"] = _median(cold)
    row["cold_runs"] = [r.get("seconds") for r in cold]
    errors = [r["error"] for r in cold if "error" in r]
    with tempfile.TemporaryDirectory(prefix="tflite_gpu_cache_") as d:
        opts = cache_options(d, path)
        write = bench.measure_first_result(path, config, threads, opts, cold=True, seed=seed)
        row["writing_s"] = write.get("seconds")
        row["written"] = write.get("cache_writes", 0)
        errors += [write["error"]] if "error" in write else []
        cached = [bench.measure_first_result(path, config, threads, opts, cold=True, seed=seed) for _ in range(repeats)]
        row["cached_s"] = _median(cached)
        row["cached_runs"] = [r.get("seconds") for r in cached]
        row["all_hits"] = all(r.get("cache_hits", 0) > 0 and r.get("cache_misses", 1) == 0 for r in cached)
        row["cache_bytes"] = sum(p.stat().st_size for p in pathlib.Path(d).iterdir())
        errors += [r["error"] for r in cached if "error" in r]
    if errors:
        row["error"] = errors[0]
    if row["cold_s"] and row["cached_s"]:
        row["ratio"] = row["cached_s"] / row["cold_s"]
    return row


def to_markdown(report) -> str:
    m = report["machine"]
    lines = [
        "# Time to first result with the kernel cache",
        "",
        f"- **Date**: {report['date']}",
        f"- **Machine**: {m.get('cpu', '?')}, {m.get('cores', '?')} cores; load average at start "
        f"{report['loadavg_start']}, at end {report['loadavg_end']}",
        f"- **Device**: {report.get('device') or '?'}",
        f"- **Method**: {report['method']}",
        f"- **Target**: cached <= {TARGET:.0%} of cold on every model.",
        "",
        "| model | config | cold (s) | writing (s) | cached (s) | cached / cold | hit | cache file (KiB) |",
        "|---|---|---:|---:|---:|---:|---|---:|",
    ]
    ok = True
    for r in report["rows"]:
        if r.get("error") and r.get("ratio") is None:
            lines.append(f"| {r['model']} | {r['config']} | failed: {r['error'][:120].replace('|', '/')} "
                         "|  |  |  |  |  |")
            continue
        ratio = r.get("ratio")
        ok &= ratio is not None and ratio <= TARGET and r["all_hits"]
        f = (lambda v: "–" if v is None else f"{v:.3f}")
        lines.append(f"| {r['model']} | {r['config']} | {f(r['cold_s'])} | {f(r['writing_s'])} | {f(r['cached_s'])} | "
                     f"{'–' if ratio is None else f'{ratio:.1%}'} | {'yes' if r['all_hits'] else 'NO'} | "
                     f"{r['cache_bytes'] / 1024:.0f} |")
    ratios = [r["ratio"] for r in report["rows"] if r.get("ratio")]
    if ratios:
        lines += ["", f"Worst cached / cold: {max(ratios):.1%}; median {statistics.median(ratios):.1%} over "
                      f"{len(ratios)} model/configuration pairs. Target met on every measured model: "
                      f"{'yes' if ok else 'NO'}."]
    failed = sorted({r["model"] for r in report["rows"] if r.get("ratio") is None})
    if failed:
        lines += ["", f"Not measured: {', '.join(failed)}: the run failed before a first result (for the MediaPipe "
                      "custom ops the stock runtime cannot even build the interpreter, with or without the delegate)."]
    if report.get("note"):
        lines += ["", report["note"]]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", help="a subset of the 14 models (default: all)")
    ap.add_argument("--configs", default="fp32,fp16", help="delegate configurations (default fp32,fp16)")
    ap.add_argument("--repeats", type=int, default=1, help="cold and cached runs per model, median (default 1)")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--out-dir", default=str(ROOT / "docs" / "benchmarks"))
    ap.add_argument("--name", default="serialization")
    ap.add_argument("--note", default="", help="a sentence recorded under the table (e.g. machine load)")
    ap.add_argument("--from-json", metavar="PATH", help="only re-render the markdown of an earlier run's JSON")
    args = ap.parse_args(argv)
    if args.from_json:
        report = json.loads(pathlib.Path(args.from_json).read_text())
        (pathlib.Path(args.out_dir) / f"{args.name}.md").write_text(to_markdown(report))
        return 0

    paths = models.fetch_models(args.models or None, progress=False)
    configs = [c.strip() for c in args.configs.split(",") if c.strip()]
    threads = args.threads or bench.default_threads()
    load0 = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    rows = []
    for name in sorted(paths):
        for c in configs:
            row = measure(paths[name], c, threads, args.repeats)
            row["model"] = name
            rows.append(row)
            print(f"{name} {c}: cold {row['cold_s']} writing {row['writing_s']} cached {row['cached_s']} "
                  f"ratio {row.get('ratio')} hit {row['all_hits']} {row.get('error', '')}", file=sys.stderr)
    report = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": bench.machine_info(),
        "loadavg_start": load0,
        "loadavg_end": " / ".join(f"{x:.2f}" for x in os.getloadavg()),
        "method": "fresh process per run; load_delegate + Interpreter + allocate_tensors + set inputs + first "
                  "invoke, imports excluded; POCL_KERNEL_CACHE=0 in every run; cold: no serialization options; "
                  "writing: serialization_dir (empty) + model_token; cached: the same directory afterwards; "
                  f"median of {args.repeats} run(s) for cold and cached",
        "note": args.note,
        "rows": rows,
    }
    try:
        from tflite_gpu import _capi

        d = next(iter(_capi.devices()), None)
        report["device"] = f"{d['name']} ({d['platform']}, {d['version']})" if d else None
    except Exception:  # noqa: BLE001
        report["device"] = None
    out = pathlib.Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{args.name}.json").write_text(json.dumps(report, indent=2) + "\n")
    (out / f"{args.name}.md").write_text(to_markdown(report))
    print(to_markdown(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
