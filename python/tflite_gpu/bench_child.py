"""The benchmark's child processes: time to first result and the kernel
profile, each measured in a fresh Python process (python -m
tflite_gpu.bench_child --first-result / --profile-run) that prints one JSON
line; measure_first_result and measure_profile start them and read it back."""
from __future__ import annotations

import json
import subprocess
import sys
import time

import numpy as np

from . import _capi, interpreters, isolate, load_delegate, runtime, verify
from .bench_setup import (CONFIGS, DEFAULT_ITERATIONS, DEFAULT_WARMUP, DELEGATE_CONFIGS, _set_inputs, _short_error,
                          default_threads, delegate_options, make_interpreter)
from . import inputs as model_inputs
from .check import model_source

_CHILD_TIMEOUT_S = 900



def _run_child(args: list, env_extra: dict) -> dict:
    cmd = [sys.executable, "-m", "tflite_gpu.bench_child", *[str(a) for a in args]]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, errors="backslashreplace",
                           env=isolate.child_env(env_extra), timeout=_CHILD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {_CHILD_TIMEOUT_S} s"}
    for line in reversed(p.stdout.splitlines()):
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                break
    if p.returncode < 0:
        return {"error": f"the process crashed: {isolate.Crashed(None, p.returncode).how}"}
    tail = [ln for ln in p.stderr.splitlines() if ln.strip() and not ln.startswith("INFO:")]
    return {"error": f"child exited with {p.returncode}: {tail[-1] if tail else 'no output'}"[:1000]}


def measure_first_result(model_path, config: str, threads: int, extra_options: dict | None = None,
                         cold: bool = True, seed: int = 0, user_inputs: list | None = None) -> dict:
    """Time to first result in a fresh process: {"seconds": s} or {"error": msg}.

    cold: POCL_KERNEL_CACHE=0, so the OpenCL programs are compiled from source.
    """
    env = {"POCL_KERNEL_CACHE": "0" if cold else "1"}
    return _run_child(["--first-result", model_path, config, "--threads", threads, "--seed", seed,
                       "--options", json.dumps(extra_options or {}), "--user-inputs", json.dumps(user_inputs or [])],
                      env)


def measure_profile(model_path, config: str, threads: int, extra_options: dict | None = None,
                    warmup: int = DEFAULT_WARMUP, iterations: int = DEFAULT_ITERATIONS, seed: int = 0,
                    user_inputs: list | None = None) -> dict:
    """Per-kernel OpenCL event times of a delegate configuration, measured in a
    fresh process with TFLITE_GPU_PROFILE=1: {"invokes", "kernels", "median_ms"}
    or {"error": msg}."""
    return _run_child(["--profile-run", model_path, config, "--threads", threads, "--seed", seed,
                       "--warmup", warmup, "--iterations", iterations, "--options", json.dumps(extra_options or {}),
                       "--user-inputs", json.dumps(user_inputs or [])], {"TFLITE_GPU_PROFILE": "1"})


def _child_first_result(model, config, threads, options, seed, plan) -> dict:
    runtime()  # imported before the clock starts, as an app has it
    source = model_source(model)
    t0 = time.perf_counter()
    if config in DELEGATE_CONFIGS:
        delegate = load_delegate(**delegate_options(config, options))
        it = interpreters.make(source, delegate=delegate, threads=threads)
    else:
        it = interpreters.make(source, cpu=config, threads=threads)
    g0 = time.perf_counter()
    inputs = model_inputs.make(plan, it.get_input_details(), seed)  # making the data is not the runtime's cost
    gen = time.perf_counter() - g0
    interpreters.set_inputs(it, inputs)
    it.invoke()
    for det in it.get_output_details():
        it.get_tensor(det["index"])
    out = {"seconds": time.perf_counter() - t0 - gen}
    if config in DELEGATE_CONFIGS:  # after the clock: did the kernel cache hit?
        st = _capi.delegate_stats(delegate._get_native_delegate_pointer())
        out.update({k: st[k] for k in ("cache_hits", "cache_misses", "cache_writes", "cache_rejected")})
    return out


def _child_profile(model, config, threads, options, seed, warmup, iterations, plan) -> dict:
    if not hasattr(_capi, "delegate_profile"):
        return {"error": "this tflite_gpu has no _capi.delegate_profile"}
    it, delegate = make_interpreter(model, config, threads, options)
    _set_inputs(it, seed, plan)
    for _ in range(warmup):
        it.invoke()
    ptr = delegate._get_native_delegate_pointer()
    before = {r["kernel"]: r for r in _capi.delegate_profile(ptr)}  # prepare/warm-up launches are excluded
    times = []
    for _ in range(iterations):
        t = time.perf_counter()
        it.invoke()
        times.append(time.perf_counter() - t)
    kernels = []
    for r in _capi.delegate_profile(ptr):
        b = before.get(r["kernel"], {"calls": 0, "total_ms": 0.0})
        calls, ms = r["calls"] - b["calls"], r["total_ms"] - b["total_ms"]
        if calls > 0:
            kernels.append({"kernel": r["kernel"], "calls": calls, "total_ms": ms})
    kernels.sort(key=lambda r: -r["total_ms"])
    return {"invokes": iterations, "kernels": kernels, "median_ms": float(np.median(times)) * 1e3 if times else None}


def _child_main(argv=None) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m tflite_gpu.bench_child", description="internal: benchmark child process")
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--first-result", action="store_true")
    g.add_argument("--profile-run", action="store_true")
    ap.add_argument("model")
    ap.add_argument("config", choices=CONFIGS)
    ap.add_argument("--threads", type=int, default=default_threads())
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--warmup", type=int, default=DEFAULT_WARMUP)
    ap.add_argument("--iterations", type=int, default=DEFAULT_ITERATIONS)
    ap.add_argument("--options", default="{}")
    ap.add_argument("--user-inputs", default="[]")
    a = ap.parse_args(argv)
    options = json.loads(a.options)
    try:
        plan = model_inputs.plan(verify.read_model(a.model), json.loads(a.user_inputs))
        if a.first_result:
            out = _child_first_result(a.model, a.config, a.threads, options, a.seed, plan)
        else:
            out = _child_profile(a.model, a.config, a.threads, options, a.seed, a.warmup, a.iterations, plan)
    except Exception as e:  # noqa: BLE001 - reported to the parent, which carries on
        out = {"error": _short_error(e)}
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(_child_main())
