#!/usr/bin/env python3
"""The execution modes against each other on one device (issue 36):
execution=kernels with the GPU and the CPU kernel sets, stepped and
persistent (the VM program, the CPU set's bodies), on the same inputs,
interleaved round by round, each checked against the CPU interpreter.

    python tools/bench_execution.py [--rounds 30] [--json OUT] [--mode SPEC ...] MODEL...

--mode replaces the four modes with one's own, repeatable:
LABEL:KEY=VALUE,... where a KEY starting with TFLITE_GPU_ is an environment
variable set while that delegate is created and the model prepared (a test
hook, or TFLITE_GPU_CACHE_DIR: an empty one runs without what a tuning
remembered) and any other KEY a delegate option; policy=FIELD=VALUE may
repeat (the policy's fields, joined), e.g.
  --mode tiles:execution=persistent,policy=vm_fine=1,policy=vm_tiles=1

Prints per model and mode: median invoke ms, dispatches per invoke (from
the library's report; the JSON also has the last invoke's launches, any
fallback, which the table marks, setup_s: load_delegate to the first
result, mostly the mode's programs compiled; no kernel cache; and grid: a
VM mode's groups per launch), the relative L2 error of the worst output against the
CPU interpreter's builtin kernels, and for persistent whether a fallback
happened. Exit 0; 1 when a mode's outputs are wrong (relative L2 > 1e-4).
"""
from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "tools"))
from bench_ab import environment  # noqa: E402

MODES = [("kernels-gpu", {"kernel_set": "gpu"}), ("kernels-cpu", {"kernel_set": "cpu"}),
         ("stepped", {"execution": "stepped"}), ("persistent", {"execution": "persistent"})]


def _rel(a, e) -> float:
    import numpy as np

    a, e = np.asarray(a, np.float64), np.asarray(e, np.float64)
    return float(np.linalg.norm(a - e) / max(np.linalg.norm(e), 1e-30))


def parse_mode(spec: str):
    """(label, delegate options, environment) of a --mode SPEC."""
    label, _, rest = spec.partition(":")
    opts, env = {}, {}
    for kv in filter(None, rest.split(",")):
        k, sep, v = kv.partition("=")
        if not sep:
            raise SystemExit(f"bench_execution.py: --mode {spec!r}: {kv!r} is not KEY=VALUE")
        if k == "policy" and "policy" in opts:
            opts["policy"] += "," + v
        else:
            (env if k.startswith("TFLITE_GPU_") else opts)[k] = v
    return label, opts, env


def bench(name: str, rounds: int, modes=None) -> dict:
    import tflite_gpu
    from tflite_gpu import _capi, check, interpreters, models

    path = pathlib.Path(name) if name.endswith(".tflite") else models.fetch_models([name], progress=False)[name]
    source = interpreters.model_source(path)
    try:
        cpu = interpreters.make(source, cpu="builtin")
        inputs = check.random_inputs(cpu.get_input_details(), 0)
        want = interpreters.run(cpu, inputs)
    except (RuntimeError, ValueError):
        want, inputs = None, None
    runs = {}
    for mode, opts, env in modes or [(m, o, {}) for m, o in MODES]:
        with environment(f"{k}={v}" for k, v in env.items()):
            t = time.perf_counter()
            d = tflite_gpu.load_delegate(**{"log_level": "silent", **opts})  # a mode may ask for log_level=info
            it = interpreters.make(source, delegate=d)
            x = inputs or check.random_inputs(it.get_input_details(), 0)
            got = interpreters.run(it, x)
            setup = time.perf_counter() - t  # the first result: mostly this mode's programs compiled
            interpreters.run(it, x)  # warm
        stats = _capi.delegate_stats(d._get_native_delegate_pointer())
        # A persistent grid's groups (SUSTAINED_SPEED may size it): the most any partition's phases have.
        grid = max((ph["groups"] for ph in _capi.delegate_phases(d._get_native_delegate_pointer())), default=None)
        runs[mode] = {"it": it, "d": d, "times": [], "dispatches": stats["dispatches"], "setup_s": setup, "grid": grid,
                      "rel_l2": max((_rel(g, w) for g, w in zip(got, want)), default=0.0) if want else None}
    for _ in range(rounds):
        for r in runs.values():
            t = time.perf_counter()
            r["it"].invoke()
            r["times"].append(time.perf_counter() - t)
    out = {"model": path.stem, "modes": {}}
    for mode, r in runs.items():
        last = _capi.delegate_runs(r["d"]._get_native_delegate_pointer())
        out["modes"][mode] = {"median_ms": statistics.median(r["times"]) * 1e3, "min_ms": min(r["times"]) * 1e3,
                              "dispatches": r["dispatches"], "rel_l2": r["rel_l2"], "setup_s": r["setup_s"],
                              "grid": r["grid"],
                              "launches": sum(x["launches"] for x in last),
                              "fallback": "; ".join(x["fallback"] for x in last if x["fallback"])}
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="+")
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--json")
    ap.add_argument("--mode", action="append", default=[], help="LABEL:KEY=VALUE,... (see above); repeatable")
    args = ap.parse_args(argv)
    modes = [parse_mode(s) for s in args.mode] or [(m, o, {}) for m, o in MODES]
    rows, bad = [], False
    print("| model | " + " | ".join(m for m, _, _ in modes) + " | worst rel L2 |")
    print("|---|" + "---:|" * len(modes) + "---:|")
    for m in args.models:
        r = bench(m, args.rounds, modes)
        rows.append(r)
        errs = [x["rel_l2"] for x in r["modes"].values() if x["rel_l2"] is not None]
        bad |= any(e > 1e-4 for e in errs)
        cells = [f"{x['median_ms']:.3f} ms ({x['dispatches']}{', fallback' if x['fallback'] else ''})"
                 for x in r["modes"].values()]
        print(f"| {r['model']} | " + " | ".join(cells) + f" | {max(errs) if errs else float('nan'):.2e} |", flush=True)
        if args.json:  # after each model: a run cut short by a deadline keeps the models it finished
            pathlib.Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
