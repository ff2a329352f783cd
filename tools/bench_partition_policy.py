"""partition_policy A/B: each model through the delegate with largest, all
and measured, and on the CPU alone (XNNPACK, one thread), in one
interleaved run; prints median latencies and each policy's ratio to
`largest`, and what measured chose. The models: the tests' split models
(tests/test_partition_policy.py, tests/test_elementwise.py) at a few sizes,
and (with --mediapipe) whole MediaPipe models, where measured decides
between the device and the CPU for the one partition.

Usage: python tools/bench_partition_policy.py [--rounds N] [--mediapipe]
"""
from __future__ import annotations

import argparse
import pathlib
import statistics
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "python"), str(ROOT / "tests")]

import numpy as np  # noqa: E402

import tflite_gpu  # noqa: E402
from tflite_gpu import _capi, interpreters, models  # noqa: E402

POLICIES = ("largest", "all", "measured")


def split_models():
    import test_elementwise as te
    import test_partition_policy as tp
    out = {f"split conv {s}x{s}x{c} + chain": tp.split_model(size=s, channels=c) for s, c in
           ((12, 5), (40, 17), (96, 32))}
    out["bool between partitions"] = te._bool_between_partitions()
    out["int32 between partitions"] = te._int_between_partitions()
    return out


def mediapipe_models(names):
    paths = models.fetch_models(names, progress=False)
    out = {}
    for name in names:
        it = interpreters.make(paths[name])
        rng = np.random.default_rng(0)
        inputs = [rng.uniform(-1, 1, d["shape"]).astype(d["dtype"]) for d in it.get_input_details()]
        out[name] = (pathlib.Path(paths[name]).read_bytes(), inputs)
    return out


def bench(model, inputs, rounds):
    runs = {"cpu": interpreters.make(model, threads=1)}
    chosen = ""
    for p in POLICIES:
        d = tflite_gpu.load_delegate(log_level="silent", partition_policy=p)
        runs[p] = (interpreters.make(model, delegate=d, threads=1), d)
        if p == "measured":
            cands = _capi.delegate_candidates(d._get_native_delegate_pointer())
            chosen = "; ".join(f"{len(c['nodes'])} nodes {c['device_us']:.0f}/{c['cpu_us']:.0f} us "
                               f"-> {c['where']}" for c in cands)
    times = {k: [] for k in runs}
    for _ in range(rounds):
        for k, v in runs.items():
            it = v[0] if isinstance(v, tuple) else v
            t0 = time.perf_counter()
            interpreters.run(it, inputs)
            times[k].append(time.perf_counter() - t0)
    return {k: statistics.median(v) * 1e3 for k, v in times.items()}, chosen


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--mediapipe", action="store_true")
    args = ap.parse_args()
    cases = split_models()
    if args.mediapipe:
        cases.update(mediapipe_models(["hand_recrop", "face_detection_short_range", "pose_detection"]))
    print("| model | CPU ms | largest ms | all ms | measured ms | measured / largest | measured's candidates "
          "(device/CPU estimate) |")
    print("|---|---|---|---|---|---|---|")
    for name, (model, inputs) in cases.items():
        ms, chosen = bench(model, inputs, args.rounds)
        print(f"| {name} | {ms['cpu']:.3f} | {ms['largest']:.3f} | {ms['all']:.3f} | {ms['measured']:.3f} | "
              f"{ms['measured'] / ms['largest']:.2f} | {chosen} |", flush=True)


if __name__ == "__main__":
    main()
