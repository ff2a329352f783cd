"""The start after `tflite-gpu tune` against today's cached start, per model:
does an application that loads the delegate with default options (and the
tuning's cache directory) build only the chosen programs, time nothing, and
start as fast as a build before the policy started from its kernel cache?

    python tools/bench_tuned_start.py --before OLD.so [--before-python OLD/python] --after NEW.so [--repeats 3]
                                      [--json F] [--markdown F] [MODEL ...]

Every start is a fresh process with POCL_KERNEL_CACHE=0 timing load_delegate +
Interpreter + allocate_tensors + inputs + the first invoke. before: a start
that writes an empty serialization_dir, then --repeats cached starts from it.
after: `tflite-gpu tune MODEL --cache-dir DIR` with the new library, then
--repeats starts with DIR as serialization_dir. Each start counts the
programs compiled from source (TFLITE_GPU_BUILD_LOG=1 lines), the kernel
cache's hits and misses and the tuner's timed candidates (must be none). The
two libraries alternate per model.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))

CHILD = r"""
import json, sys, time
import numpy as np
import tflite_gpu
from tflite_gpu import _capi, load_delegate
mod = tflite_gpu.runtime()
path, opts = sys.argv[1], json.loads(sys.argv[2])
t0 = time.perf_counter()
d = load_delegate(**opts)
it = mod.Interpreter(model_path=path, experimental_delegates=[d])
it.allocate_tensors()
rng = np.random.default_rng(1)
for det in it.get_input_details():
    it.set_tensor(det["index"], rng.standard_normal(det["shape"]).astype(det["dtype"]))
it.invoke()
first = time.perf_counter() - t0
ptr = d._get_native_delegate_pointer()
s = _capi.delegate_stats(ptr)
row = {"first": first, "hits": s["cache_hits"], "misses": s["cache_misses"]}
try:
    row["timed"] = sum(1 for r in _capi.delegate_tuning(ptr) if r["us"] is not None)
    row["execution"] = "+".join(sorted({p["execution"] for p in _capi.delegate_partitions(ptr)}))
except AttributeError:  # a library before the policy
    pass
print(json.dumps(row))
"""


PYTHON_OF = {}  # library -> the python/ tree that goes with it (--before-python)


def _env(lib):
    env = dict(os.environ, POCL_KERNEL_CACHE="0", TFLITE_GPU_LIBRARY=str(lib), TFLITE_GPU_BUILD_LOG="1",
               PYTHONPATH=PYTHON_OF.get(str(lib), str(ROOT / "python")))
    env.pop("TFLITE_GPU_CACHE_DIR", None)
    env.pop("TFLITE_GPU_POLICY", None)
    return env


def start(lib, path, opts) -> dict:
    p = subprocess.run([sys.executable, "-c", CHILD, str(path), json.dumps(opts)], env=_env(lib),
                       capture_output=True, text=True)
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        return {"error": p.stderr[-400:]}
    row = json.loads(lines[-1])
    row["compiled"] = sum(1 for ln in p.stderr.splitlines() if ln.startswith("tflite-gpu build "))
    return row


def tune(lib, path, cache_dir) -> None:
    p = subprocess.run([sys.executable, "-m", "tflite_gpu", "tune", str(path), "--cache-dir", str(cache_dir),
                        "--no-progress"], env=dict(_env(lib), TFLITE_GPU_BUILD_LOG="0"), capture_output=True,
                       text=True)
    if p.returncode:
        raise SystemExit(f"tflite-gpu tune {path} failed: {p.stderr[-1000:]}")


def measure(before, after, name, repeats) -> dict:
    from tflite_gpu import model_token, models

    path = models.model_path(name)
    opts = lambda d: {"serialization_dir": str(d), "model_token": model_token(path)}  # noqa: E731
    row = {"model": name}
    with tempfile.TemporaryDirectory(prefix="tuned-start-a-") as a, tempfile.TemporaryDirectory(
            prefix="tuned-start-b-") as b:
        row["before_write"] = start(before, path, opts(a))
        tune(after, path, b)
        row["before"], row["after"] = [], []
        for _ in range(repeats):  # alternating, so load on the machine hits both alike
            row["before"].append(start(before, path, opts(a)))
            row["after"].append(start(after, path, opts(b)))
    return row


def _median(runs, key="first"):
    vals = [r[key] for r in runs if key in r]
    return statistics.median(vals) if vals else None


def markdown(rows) -> str:
    out = ["| model | ran | cached start before (s) | start after tune (s) | after / before | programs compiled "
           "after | cache hits / misses after | candidates timed after |", "|---|---|---:|---:|---:|---:|---:|---:|"]
    ratios = []
    for r in rows:
        b, a = _median(r["before"]), _median(r["after"])
        ratio = a / b if a and b else None
        ratios += [(ratio, r["model"])] if ratio else []
        last = r["after"][-1]
        out.append(f"| {r['model']} | {last.get('execution', '?')} | {b:.3f} | {a:.3f} | {ratio:.2f} | "
                   f"{max(x.get('compiled', -1) for x in r['after'])} | {last.get('hits')} / {last.get('misses')} | "
                   f"{max(x.get('timed', -1) for x in r['after'])} |")
    if ratios:
        worst = max(ratios)
        out.append(f"\nafter / before: median {statistics.median(x for x, _ in ratios):.2f}, worst {worst[1]} "
                   f"{worst[0]:.2f}, over {len(ratios)} models.")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    from tflite_gpu import models

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*")
    ap.add_argument("--before", required=True)
    ap.add_argument("--after", required=True)
    ap.add_argument("--before-python", help="the python/ directory of --before's checkout (default: this one's)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json")
    ap.add_argument("--markdown")
    args = ap.parse_args(argv)
    if args.before_python:
        PYTHON_OF[str(args.before)] = args.before_python
    rows = []
    for name in args.models or list(models.MODELS):
        rows.append(measure(args.before, args.after, name, args.repeats))
        r = rows[-1]
        print(f"{name:34s} before {_median(r['before']):.3f} s  after {_median(r['after']):.3f} s  compiled "
              f"{[x.get('compiled') for x in r['after']]}  timed {[x.get('timed') for x in r['after']]}", flush=True)
    text = markdown(rows)
    print(text)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    if args.markdown:
        pathlib.Path(args.markdown).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
