#!/usr/bin/env python3
"""Memory held flat over long runs (issue 37): delegates and interpreters
created and destroyed many times, and many invokes of one model, with the
process's resident memory and the library's live OpenCL objects sampled.

    python tools/soak.py [MODEL] [--cycles 1000] [--invokes 10000] [--json OUT]

MODEL: a MediaPipe model name or a .tflite path (default
face_detection_short_range). Two phases:
- cycles: `--cycles` times a delegate (load_delegate) and an interpreter
  through it, one invoke, both destroyed;
- invokes: one delegate and interpreter, `--invokes` invokes on one input.
Each phase warms up first (its first 10% of the work, at least 20: program
builds, caches and the allocator's pools grow there), then must hold:
- the live OpenCL objects of every kind (contexts, queues, buffers,
  programs, kernels, events) back to their count after the warm-up at every
  sample (exactly: one object a cycle is a leak);
- resident memory (VmRSS) within --rss-bound-mib of its value after the
  warm-up (default 16 MiB over the whole phase: an OpenCL driver's own pools
  move by a few MiB; a 1 KiB leak per invoke over 10,000 invokes is 10 MiB,
  per cycle over 1,000 cycles 1 MiB, so a leak of a tensor's buffer per cycle
  shows).
Prints one line per phase and exits 1 when a bound is broken, 2 on bad usage.
"""
from __future__ import annotations

import argparse
import gc
import json
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
# The installed package first (it holds the library); the source tree where none is installed.
sys.path.append(str(ROOT / "python"))

KINDS = ("live_contexts", "live_queues", "live_buffers", "live_programs", "live_kernels", "live_events")


def rss_mib() -> float:
    for line in pathlib.Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024.0
    return float("nan")


def live() -> dict:
    from tflite_gpu import _capi

    c = _capi.debug_counters()
    return {k: int(c[k]) for k in KINDS}


def _phase(name, total, step, samples_every) -> dict:
    """Runs step(i) total times; samples after the warm-up and every
    samples_every steps."""
    warm = max(20, total // 10)
    rows, base_rss, base_live = [], None, None
    t0 = time.monotonic()
    for i in range(total):
        step(i)
        done = i + 1
        if done == warm or (done > warm and (done - warm) % samples_every == 0) or done == total:
            gc.collect()
            sample = {"done": done, "rss_mib": round(rss_mib(), 2), **live()}
            if base_rss is None and done >= warm:
                base_rss, base_live = sample["rss_mib"], {k: sample[k] for k in KINDS}
            rows.append(sample)
    grew = max(r["rss_mib"] for r in rows) - base_rss if rows else 0.0
    leaked = {k: max(r[k] for r in rows) - base_live[k] for k in KINDS if any(r[k] != base_live[k] for r in rows)}
    return {"phase": name, "steps": total, "warmup": warm, "seconds": round(time.monotonic() - t0, 1),
            "rss_after_warmup_mib": base_rss, "rss_growth_mib": round(grew, 2), "live_after_warmup": base_live,
            "live_changed": leaked, "samples": rows}


def soak(model, cycles: int, invokes: int, samples: int = 20) -> list:
    import numpy as np

    import tflite_gpu
    from tflite_gpu import check, interpreters, models

    path = pathlib.Path(model) if model.endswith(".tflite") else models.fetch_models([model], progress=False)[model]
    source = interpreters.model_source(path)
    probe = interpreters.make(source)
    inputs = check.random_inputs(probe.get_input_details(), 0)
    del probe
    out = []
    if cycles:
        def cycle(_):
            d = tflite_gpu.load_delegate(log_level="silent")
            it = interpreters.make(source, delegate=d)
            interpreters.run(it, inputs)
            del it, d

        out.append(_phase("cycles", cycles, cycle, max(1, cycles // samples)))
    if invokes:
        d = tflite_gpu.load_delegate(log_level="silent")
        it = interpreters.make(source, delegate=d)
        interpreters.set_inputs(it, [np.asarray(x) for x in inputs])
        out.append(_phase("invokes", invokes, lambda _: it.invoke(), max(1, invokes // samples)))
        del it, d
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", nargs="?", default="face_detection_short_range")
    ap.add_argument("--cycles", type=int, default=1000, help="delegate + interpreter create/destroy cycles")
    ap.add_argument("--invokes", type=int, default=10000, help="invokes of one interpreter")
    ap.add_argument("--rss-bound-mib", type=float, default=16.0, help="resident memory growth allowed per phase")
    ap.add_argument("--json", help="write the phases and their samples here")
    args = ap.parse_args(argv)
    if args.cycles < 0 or args.invokes < 0 or args.cycles + args.invokes == 0:
        ap.error("--cycles and --invokes: not negative, and not both 0")
    phases = soak(args.model, args.cycles, args.invokes)
    ok = True
    for p in phases:
        held = p["rss_growth_mib"] <= args.rss_bound_mib and not p["live_changed"]
        ok &= held
        print(f"{p['phase']}: {p['steps']} in {p['seconds']} s; resident {p['rss_after_warmup_mib']} MiB after "
              f"{p['warmup']}, grew {p['rss_growth_mib']} MiB (bound {args.rss_bound_mib:g}); live OpenCL objects "
              f"{'unchanged' if not p['live_changed'] else 'CHANGED ' + json.dumps(p['live_changed'])}: "
              f"{'held' if held else 'NOT HELD'}")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps({"model": args.model, "rss_bound_mib": args.rss_bound_mib,
                                                       "phases": phases}, indent=1) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
