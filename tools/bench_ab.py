"""A/B latency of two builds of libgpu_delegate.so (or two option sets) on
the same models, interleaved in one process, with XNNPACK as the yardstick.

Usage: python tools/bench_ab.py --a OLD.so --b NEW.so [--opt-a k=v] [--opt-b k=v]
                                [--env-a K=V] [--env-b K=V]
                                [--rounds 7] [--iterations 10] [MODEL ...]

--env-a / --env-b set an environment variable while that side's interpreter
is made (the library reads its test hooks, e.g. TFLITE_GPU_FUSE_DW_1X1=0
or TFLITE_GPU_PINNED_STAGING=0, when it prepares a partition), so one
library can be its own baseline.

Each round times every configuration of every model once (XNNPACK, A, B in
turn), so drift on a noisy machine hits all three alike; per configuration
the minimum over rounds of the median invoke is kept. Prints per model the
latencies, A / XNNPACK, B / XNNPACK and B / A, and the geomeans.
"""
import argparse
import contextlib
import math
import os
import pathlib
import statistics
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))

import tflite_gpu  # noqa: E402
from tflite_gpu import interpreters, models  # noqa: E402


def _options(pairs):
    out = {"log_level": "silent"}
    for p in pairs:
        k, _, v = p.partition("=")
        out[k] = v
    return out


def _interpreter(path, library=None, options=None, threads=2):
    # A library of its own (the A or B build), so load_delegate(library, ...) directly.
    delegate = tflite_gpu.runtime().load_delegate(library, options) if library else None
    it = interpreters.make(path, delegate=delegate, threads=threads)
    rng = np.random.default_rng(0)
    interpreters.set_inputs(it, [rng.uniform(-1, 1, det["shape"]).astype(det["dtype"])
                                 for det in it.get_input_details()])
    return it


@contextlib.contextmanager
def environment(pairs):
    """os.environ with these KEY=VALUE pairs set, restored after (bench_execution.py too)."""
    saved = {}
    for p in pairs:
        k, _, v = p.partition("=")
        saved[k] = os.environ.get(k)
        os.environ[k] = v
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _median_ms(it, n):
    times = []
    for _ in range(n):
        t = time.perf_counter()
        it.invoke()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*")
    ap.add_argument("--a", required=True, help="library A (the baseline)")
    ap.add_argument("--b", required=True, help="library B")
    ap.add_argument("--opt-a", action="append", default=[])
    ap.add_argument("--opt-b", action="append", default=[])
    ap.add_argument("--env-a", action="append", default=[], help="K=V while A's interpreter is made")
    ap.add_argument("--env-b", action="append", default=[], help="K=V while B's interpreter is made")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--iterations", type=int, default=10)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args(argv)
    # Default: the 11 models the CPU interpreter can run (no MediaPipe custom ops).
    custom = ("face_landmark_with_attention", "selfie_segmentation", "selfie_segmentation_landscape")
    names = args.models or [n for n in models.MODELS if n not in custom]
    paths = models.fetch_models(names, progress=False)
    rows = []
    for name in names:
        # The CPU interpreter lacks MediaPipe's custom ops (custom, below):
        # those models compare A and B only.
        its = {} if name in custom else {"xnnpack": _interpreter(paths[name], threads=args.threads)}
        with environment(args.env_a):
            its["A"] = _interpreter(paths[name], args.a, _options(args.opt_a))
        with environment(args.env_b):
            its["B"] = _interpreter(paths[name], args.b, _options(args.opt_b))
        for it in its.values():  # warm-up: first launches compile work-group functions
            for _ in range(3):
                it.invoke()
        best = {k: math.inf for k in its}
        for _ in range(args.rounds):
            for k, it in its.items():
                best[k] = min(best[k], _median_ms(it, args.iterations))
        rows.append((name, best))
        x = best.get("xnnpack")
        vs = (f"xnnpack {x:7.2f} ms  A {best['A']:7.2f} ms  B {best['B']:7.2f} ms  A/xnn {best['A'] / x:5.2f}  "
              f"B/xnn {best['B'] / x:5.2f}" if x else f"xnnpack     –      A {best['A']:7.2f} ms  B {best['B']:7.2f} ms")
        print(f"{name:36s} {vs}  B/A {best['B'] / best['A']:5.2f}", flush=True)
        del its

    def geo(key, base):
        kept = [r[1] for r in rows if base in r[1]]
        return math.exp(statistics.fmean(math.log(b[key] / b[base]) for b in kept)) if kept else math.nan
    ga, gb = geo("A", "xnnpack"), geo("B", "xnnpack")
    print(f"geomean over {len(rows)} models: A/xnnpack {ga:.3f}  B/xnnpack {gb:.3f}  B/A {geo('B', 'A'):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
