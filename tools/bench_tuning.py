"""SUSTAINED_SPEED A/B: each model through the delegate with the selector's
work-groups (FAST_SINGLE_ANSWER) and with the tuned ones
(inference_preference=SUSTAINED_SPEED, tune.c), both kernel sets, in one
process and one interleaved run (rounds alternate A and B); prints the
median latencies and tuned / untuned. The tuning is timed at the first
start and read from the kernel-cache directory after that (a fresh
temporary directory per run unless --cache-dir).

Usage: python tools/bench_tuning.py [--rounds N] [--kernel-sets cpu,gpu] [MODEL ...]
"""
from __future__ import annotations

import argparse
import pathlib
import statistics
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "python")]

import numpy as np  # noqa: E402

import tflite_gpu  # noqa: E402
from tflite_gpu import interpreters, models  # noqa: E402

DEFAULT_MODELS = ["hand_recrop", "face_detection_short_range", "iris_landmark", "face_landmark", "pose_detection"]


def _interpreter(path, cache_dir, kernel_set, sustained):
    opts = dict(log_level="silent", kernel_set=kernel_set, serialization_dir=cache_dir,
                model_token=tflite_gpu.model_token(path))
    if sustained:
        opts["inference_preference"] = "SUSTAINED_SPEED"
    d = tflite_gpu.load_delegate(**opts)
    return interpreters.make(pathlib.Path(path).read_bytes(), delegate=d), d


def bench(name, kernel_set, cache_dir, rounds, invokes):
    path = str(models.model_path(name))
    pair = {label: _interpreter(path, cache_dir, kernel_set, label == "tuned") for label in ("selector", "tuned")}
    rng = np.random.default_rng(0)
    for it, _ in pair.values():
        for det in it.get_input_details():
            it.set_tensor(det["index"], rng.uniform(-1, 1, det["shape"]).astype(det["dtype"]))
        it.invoke()
    times = {label: [] for label in pair}
    for _ in range(rounds):
        for label, (it, _) in pair.items():
            t0 = time.perf_counter()
            for _ in range(invokes):
                it.invoke()
            times[label].append((time.perf_counter() - t0) / invokes * 1e3)
    return {label: statistics.median(v) for label, v in times.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", default=DEFAULT_MODELS)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--invokes", type=int, default=10)
    ap.add_argument("--kernel-sets", default="cpu,gpu")
    ap.add_argument("--cache-dir", help="kernel-cache directory (default: a new temporary one)")
    args = ap.parse_args()
    models.fetch_models(args.models, progress=False)
    with tempfile.TemporaryDirectory() as tmp:
        cache_dir = args.cache_dir or tmp
        print(f"{'model':32} {'set':4} {'selector ms':>12} {'tuned ms':>10} {'tuned/selector':>15}")
        for name in args.models:
            for ks in args.kernel_sets.split(","):
                m = bench(name, ks, cache_dir, args.rounds, args.invokes)
                print(f"{name:32} {ks:4} {m['selector']:12.3f} {m['tuned']:10.3f} {m['tuned'] / m['selector']:15.3f}",
                      flush=True)


if __name__ == "__main__":
    main()
