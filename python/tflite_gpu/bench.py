"""Benchmark: the delegate against the CPU interpreter, model by model.

For every model four configurations run in one process, interleaved
invocation by invocation (the starting configuration rotates every round),
so machine noise hits all of them alike:

    xnnpack   CPU interpreter with its default XNNPACK delegate, threads = cores
    builtin   CPU interpreter, builtin kernels only (BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    fp32      the OpenCL delegate, FP32 (is_precision_loss_allowed=0)
    fp16      the OpenCL delegate, FP16 storage (is_precision_loss_allowed=1)

Reported per model and configuration:

* time to first result: load_delegate + Interpreter construction +
  allocate_tensors + set inputs + first invoke, timed in a fresh Python
  process (imports excluded).  "cold" runs with POCL_KERNEL_CACHE=0 (every
  OpenCL program is compiled from source); "warm" lets PoCL reuse the
  kernel binaries it cached when the benchmark process built the same
  delegate.  The CPU configurations involve no kernel cache and are
  measured once (reported as cold);
* median and p90 invoke latency after warm-up (time.perf_counter around
  Interpreter.invoke(), inputs set once beforehand), and the median's ratio
  to XNNPACK's (lower is better);
* the model's FLOPs (see count_flops for the convention) and the achieved
  GFLOP/s = FLOPs / median latency;
* for the delegate: kernel launches per invoke, the device memory of the
  activation arena against its lower bound (the peak of simultaneously live
  tensor bytes), nodes delegated / left on the CPU;
* with cache_dir (--cache-dir): the time to first result with the
  delegate's own kernel cache (serialization_dir + model_token, still
  POCL_KERNEL_CACHE=0): one fresh process writes the cache, the next loads
  it ("our cache"), against the cold time without it;
* with profile=True: the top kernels by OpenCL event time, measured in a
  separate process with TFLITE_GPU_PROFILE=1 (profiling queues are slower,
  so the latencies above never come from a profiled delegate).

Models the CPU interpreter cannot run (MediaPipe custom ops) keep whatever
configurations did run, are marked "no CPU reference", and never stop the run.

Every model is verified (verify.py) and its memory needs checked against
the machine and the device before the run starts; each model is then
benchmarked in its own child process (isolate.py), so a model that crashes
the CPU interpreter or the delegate is reported in the results instead of
ending the run. A model that cannot be read, verified or fitted in memory
is a row of its own too (every configuration "error"), and the others run.

Every configuration that failed has "status": "error", its "error" and its
"kind" (errors.KINDS): "kernel-build" when the device's OpenCL compiler
rejected one of the library's kernels (a failure of tflite-gpu on that
device, not of the model), the crash's kind when the model's process
crashed, else "model". A model with a failure that counts has a row-level
"error": {"exit_code", "kind", "message"} (model_error): it could not be
read, its process crashed, no configuration ran it, or a delegate
configuration's kernels did not build. The CLI exits with the worst of them.

    python -m tflite_gpu bench MODEL... [--json P] [--markdown P] [--png P] [--profile]

Modules: bench_setup (configurations, their interpreters), bench_flops
(FLOPs), bench_child (the first-result and profile child processes),
bench_report (Markdown, output files), bench_chart (PNG); this one runs
the benchmark and assembles the report, and re-exports their API.
"""
from __future__ import annotations

import datetime
import gc
import math
import os
import pathlib
import platform
import sys
import time

import numpy as np

from . import _capi, __version__, cache_options, errors, isolate, library_path, resources, verify
from . import inputs as model_inputs
from ._output import display
from .check import KernelBuildError
from .bench_chart import chart_problem, chart_rows, write_png  # noqa: F401 - this module's API
from .bench_child import _child_main, measure_first_result, measure_profile
from .bench_flops import FLOPS_CONVENTION, count_flops
from .bench_report import to_markdown, write_outputs  # noqa: F401 - this module's API
from .bench_setup import (CONFIGS, CPU_CONFIGS, DEFAULT_ITERATIONS, DEFAULT_TOP, DEFAULT_WARMUP,  # noqa: F401
                          DELEGATE_CONFIGS, LABELS, _phase_name, _set_inputs, _short_error, default_threads,
                          delegate_options, make_interpreter, runtime_info_kept_out)


def _execution(runs) -> dict:
    """execution (the modes the partitions ran in, e.g. "persistent" or
    "kernels+stepped"), launches per invoke, and each fallback's reason."""
    modes = sorted({x["execution"] for x in runs})
    return {"execution": "+".join(modes) or None, "launches": sum(x["launches"] for x in runs),
            "fallbacks": [f"partition {x['partition']}: {x['fallback']}" for x in runs if x["fallback"]]}


def machine_info() -> dict:
    cpu = platform.processor() or platform.machine()
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpu": cpu, "cores": default_threads(), "logical_cpus": os.cpu_count(),
            "os": f"{platform.system()} {platform.release()}", "python": platform.python_version()}


def _runtime_version() -> str:
    try:
        from importlib.metadata import version

        for dist in ("tflite-runtime", "tflite_runtime", "ai-edge-litert"):
            try:
                return f"{dist} {version(dist)}"
            except Exception:  # noqa: BLE001
                continue
    except ImportError:
        pass
    return "unknown"


def _percentile_ms(times, q) -> float:
    return float(np.percentile(np.asarray(times), q)) * 1e3


class _Progress:
    """tqdm over models x configurations (fractional steps), or nothing."""

    def __init__(self, total, enabled):
        self.bar = None
        if enabled:
            try:
                from tqdm import tqdm

                self.bar = tqdm(total=total, unit="cfg", desc="bench", dynamic_ncols=True,
                                bar_format="{desc}: {percentage:3.0f}%|{bar}| {n:.1f}/{total:.0f} cfg "
                                           "[{elapsed}<{remaining}{postfix}]")
            except ImportError:
                pass

    def step(self, amount, note=None):
        if self.bar is not None:
            if note:
                self.bar.set_postfix_str(note, refresh=False)
            self.bar.update(amount)

    def goto(self, n, note=None):
        if self.bar is not None:
            if note:
                self.bar.set_postfix_str(note, refresh=False)
            self.bar.update(n - self.bar.n)

    def close(self):
        if self.bar is not None:
            self.bar.close()


def bench_model(model_path, configs=CONFIGS, warmup=DEFAULT_WARMUP, iterations=DEFAULT_ITERATIONS,
                threads=None, extra_options=None, first_result=True, warm_first_result=True,
                profile=False, top=DEFAULT_TOP, seed=0, name=None, _progress=None, cache_dir=None,
                user_inputs=None) -> dict:
    """Benchmarks one model (a .tflite path) in the given configurations; see the module doc.
    user_inputs: the user's arrays (inputs.user_entries), the rest generated (inputs.plan)."""
    threads = threads or default_threads()
    path = pathlib.Path(model_path)
    shown = display(path.name)
    name = name or (shown[:-7] if shown.endswith(".tflite") else shown)
    progress = _progress or _Progress(0, False)
    share = 1.0  # progress units per configuration
    res = {"model": name, "path": display(path), "configs": {c: {"label": LABELS[c]} for c in configs}}
    # first_result: True (every configuration), False, or the configurations to measure.
    fr_configs = set(configs if first_result is True else (first_result or ()))
    plan = model_inputs.plan(verify.read_model(path), user_inputs)
    res["inputs"] = [p.to_dict() for p in plan]
    try:
        res["flops"] = count_flops(path)
    except Exception as e:  # noqa: BLE001
        res["flops"] = {"total": None, "by_op": {}, "error": _short_error(e)}
    total_flops = res["flops"]["total"]

    # 1. Cold time to first result, each configuration in a fresh process.
    for c in configs:
        r = res["configs"][c]
        if c in fr_configs:
            progress.step(0, f"{name}: {c} first result (cold)")
            fr = measure_first_result(path, c, threads, extra_options, cold=True, seed=seed, user_inputs=user_inputs)
            r["first_result_cold_s"] = fr.get("seconds")
            if "error" in fr:
                r["first_result_error"] = fr["error"]
        progress.step(0.3 * share)

    # 2. One interpreter per configuration, up front.
    live, delegates = {}, {}
    for c in configs:
        r = res["configs"][c]
        progress.step(0, f"{name}: {c} setup")
        isolate.phase(_phase_name(c, "setup"))
        try:
            with runtime_info_kept_out():  # the runtime's INFO line would break the parent's progress bar
                it, d = make_interpreter(path, c, threads, extra_options)
                _set_inputs(it, seed, plan)
                it.invoke()  # the first invoke may still allocate or compile; not a timed one
            live[c] = it
            if d is not None:
                delegates[c] = d
                ptr = d._get_native_delegate_pointer()
                r.update(_capi.delegate_stats(ptr))
                r["arena_over_lower_bound"] = (r["arena_bytes"] / r["live_peak_bytes"]
                                               if r["live_peak_bytes"] else None)
                try:
                    res.setdefault("device", _capi.delegate_device(ptr))
                except Exception:  # noqa: BLE001
                    pass
            r["status"] = "ok"
        except Exception as e:  # noqa: BLE001 - a configuration that cannot run is reported, not fatal
            r["status"] = "error"
            r["error"] = _short_error(e)
            r["kind"] = "kernel-build" if isinstance(e, KernelBuildError) else "model"
        progress.step(0.1 * share)

    # 3. Warm time to first result: the interpreters above filled PoCL's kernel cache.
    for c in configs:
        r = res["configs"][c]
        if c in fr_configs and warm_first_result and c in DELEGATE_CONFIGS and r.get("status") == "ok":
            progress.step(0, f"{name}: {c} first result (warm)")
            if os.environ.get("POCL_KERNEL_CACHE") == "0":  # this process did not fill the cache
                measure_first_result(path, c, threads, extra_options, cold=False, seed=seed, user_inputs=user_inputs)
            fr = measure_first_result(path, c, threads, extra_options, cold=False, seed=seed, user_inputs=user_inputs)
            r["first_result_warm_s"] = fr.get("seconds")
            if "error" in fr:
                r.setdefault("first_result_error", fr["error"])
        progress.step(0.1 * share)

    # 3b. Time to first result with our kernel cache: one process writes it, the next loads it.
    if cache_dir:
        cached_opts = dict(extra_options or {}, **cache_options(cache_dir, path))
        for c in configs:
            r = res["configs"][c]
            if c in DELEGATE_CONFIGS and r.get("status") == "ok":
                progress.step(0, f"{name}: {c} first result (our cache)")
                fill = measure_first_result(path, c, threads, cached_opts, cold=True, seed=seed, user_inputs=user_inputs)
                r["first_result_cache_write_s"] = fill.get("seconds")
                fr = measure_first_result(path, c, threads, cached_opts, cold=True, seed=seed, user_inputs=user_inputs)
                r["first_result_cached_s"] = fr.get("seconds")
                r["first_result_cache_hit"] = bool(fr.get("cache_hits")) and not fr.get("cache_misses")
                if "error" in fr or "error" in fill:
                    r.setdefault("first_result_error", fr.get("error") or fill.get("error"))

    # 4. Interleaved timing: every round invokes each live configuration once.
    order = [c for c in configs if c in live]
    times = {c: [] for c in order}
    rounds = warmup + iterations
    per_round = (0.5 * share * len(configs)) / max(rounds, 1)
    for rnd in range(rounds):
        progress.step(per_round, f"{name}: {'warm-up' if rnd < warmup else 'timing'} "
                                 f"{rnd + 1 if rnd < warmup else rnd + 1 - warmup}/"
                                 f"{warmup if rnd < warmup else iterations}")
        k = rnd % len(order) if order else 0
        for c in order[k:] + order[:k]:
            if c not in live:
                continue
            isolate.phase(_phase_name(c, "invoke"))
            t = time.perf_counter()
            try:
                live[c].invoke()
            except Exception as e:  # noqa: BLE001
                res["configs"][c].update(status="error", error=_short_error(e), kind="model")
                del live[c]
                continue
            dt = time.perf_counter() - t
            if rnd >= warmup:
                times[c].append(dt)
    xnn_median = None
    for c in order:
        r = res["configs"][c]
        if c in live and times[c]:
            r["iterations"] = len(times[c])
            r["median_ms"] = _percentile_ms(times[c], 50)
            r["p90_ms"] = _percentile_ms(times[c], 90)
            r["min_ms"] = float(min(times[c])) * 1e3
            r["mean_ms"] = float(np.mean(times[c])) * 1e3
            r["gflops_per_s"] = (total_flops / (r["median_ms"] * 1e-3) / 1e9) if total_flops else None
            if c == "xnnpack":
                xnn_median = r["median_ms"]
    for c in order:
        r = res["configs"][c]
        if xnn_median and r.get("median_ms"):
            r["ratio_to_xnnpack"] = r["median_ms"] / xnn_median
        if c in delegates and c in live:  # how the last timed invoke ran: mode, launches, fallbacks
            pointer = delegates[c]._get_native_delegate_pointer()
            r.update(_execution(_capi.delegate_runs(pointer)))
            r["policies"] = _capi.delegate_stats(pointer)["policies"]  # each partition's, with sources
    isolate.phase("delegate:release")  # the interpreters and delegates are freed
    live.clear()
    delegates.clear()
    gc.collect()
    isolate.phase("done")

    # 5. Kernel profile, in its own process (a profiling queue is slower).
    if profile:
        for c in configs:
            r = res["configs"][c]
            if c in DELEGATE_CONFIGS and r.get("status") == "ok":
                progress.step(0, f"{name}: {c} profile")
                p = measure_profile(path, c, threads, extra_options, warmup=warmup,
                                    iterations=max(1, min(iterations, 10)), seed=seed, user_inputs=user_inputs)
                if "error" in p:
                    r["profile_error"] = p["error"]
                else:
                    n = max(p["invokes"], 1)
                    total = sum(k["total_ms"] for k in p["kernels"]) or 1.0
                    r["profile"] = {
                        "invokes": p["invokes"],
                        "profiled_median_ms": p.get("median_ms"),
                        "kernel_ms_per_invoke": total / n,
                        "top": [{"kernel": k["kernel"], "calls_per_invoke": k["calls"] / n,
                                 "ms_per_invoke": k["total_ms"] / n, "share": k["total_ms"] / total}
                                for k in p["kernels"][:top]],
                    }

    cpu_ok = [c for c in CPU_CONFIGS if c in configs and res["configs"][c].get("status") == "ok"]
    res["cpu_reference"] = bool(cpu_ok) or not any(c in configs for c in CPU_CONFIGS)
    if not cpu_ok and any(c in configs for c in CPU_CONFIGS):
        errs = [res["configs"][c].get("error") for c in CPU_CONFIGS if c in configs]
        res["note"] = "the CPU interpreter cannot run this model: " + (next((e for e in errs if e), "") or "?")
    return res


def geomean_ratio(models, config="fp32", reference="xnnpack"):
    """Geometric mean of median(config) / median(reference) over models with both."""
    ratios = []
    for m in models:
        a, b = m["configs"].get(config, {}), m["configs"].get(reference, {})
        if a.get("median_ms") and b.get("median_ms"):
            ratios.append(a["median_ms"] / b["median_ms"])
    if not ratios:
        return None, 0
    return float(math.exp(sum(math.log(r) for r in ratios) / len(ratios))), len(ratios)


def isolated_bench_model(path, name, configs, warmup, iterations, threads, extra_options, first_result,
                         warm_first_result, profile, top, seed, cache_dir, user_inputs=None):
    """bench_model in a child process (isolate.run("bench_model", ...)); the
    progress goes to the parent as {"progress": [amount, note]} messages."""
    class _Forward:
        def step(self, amount, note=None):
            isolate.send({"progress": [amount, note]})

    fr = first_result if isinstance(first_result, bool) else tuple(first_result)
    return bench_model(path, tuple(configs), warmup, iterations, threads, extra_options, fr, warm_first_result,
                       profile, top, seed, name, _Forward(), cache_dir, user_inputs)


def _failed_model(path, name, configs, why: str, crash: dict | None = None, kind: str | None = None) -> dict:
    """The result of a model whose benchmark process ended without results
    (crash: how), or that could not be read or verified (kind "model")."""
    shown = display(pathlib.Path(path).name)
    kind = kind or (crash or {}).get("kind") or "model"
    res = {"model": name or (shown[:-7] if shown.endswith(".tflite") else shown), "path": display(path),
           "configs": {c: {"label": LABELS[c], "status": "error", "error": why, "kind": kind} for c in configs},
           "cpu_reference": None, "note": why}  # None: not known, the process died
    if crash:
        res["crash"] = crash
    res["error"] = {"exit_code": errors.KINDS[kind], "kind": kind, "message": why}
    return res


def model_error(res: dict) -> dict | None:
    """The error of one model's row ({"exit_code", "kind", "message"}), or
    None when it counts as benchmarked: its "error" when it could not be
    read or its process crashed; "kernel-build" (5) when a delegate
    configuration's kernels did not build on the device, even if other
    configurations ran; "model" (4) when no configuration ran it (a
    configuration the model cannot run, such as the CPU on custom ops, is
    reported in its row but is not an error of the run)."""
    if res.get("error"):
        return res["error"]
    configs = res.get("configs", {})
    built = [cr for c, cr in configs.items() if cr.get("kind") == "kernel-build"]
    if built:
        return {"exit_code": errors.KINDS["kernel-build"], "kind": "kernel-build",
                "message": f"{res['model']}: {built[0].get('error')}"}
    if not any(cr.get("median_ms") for cr in configs.values()):
        why = res.get("note") or next((cr["error"] for cr in configs.values() if cr.get("error")), None)
        return {"exit_code": errors.KINDS["model"], "kind": "model",
                "message": f"{res['model']}: no configuration could run it" + (f" ({why})" if why else "")}
    return None


def _bench_isolated(path, name, configs, args, bar) -> dict:
    def forward(msg):
        if "progress" in msg:
            bar.step(*msg["progress"])

    try:
        return isolate.run("bench_model", dict(args, path=str(path), name=name, configs=list(configs)),
                           on_message=forward)
    except isolate.Crashed as e:
        err = e.cli_error(display(path))
        return _failed_model(path, name, configs, err.message,
                             {"kind": err.kind, "phase": e.phase, "how": e.how})
    except isolate.JobError as e:
        return _failed_model(path, name, configs, str(e), {"kind": e.kind, "phase": None, "how": str(e)})


def preflight(models, configs, extra_options=None) -> list:
    """Verifies every model and checks its memory needs against this
    machine (all configurations' interpreters live at once) and, with a
    delegate configuration, the device: verify.ModelError before any run."""
    infos = []
    uses_delegate = any(c in DELEGATE_CONFIGS for c in configs)
    for path in models:
        info = verify.verify_file(path)
        resources.check_fits(path, info, "bench", interpreters=max(len(configs), 1), io_copies=1,
                             delegate_options=dict(extra_options or {}) if uses_delegate else None)
        infos.append(info)
    return infos


def run_bench(models, configs=CONFIGS, warmup=DEFAULT_WARMUP, iterations=DEFAULT_ITERATIONS, threads=None,
              extra_options=None, first_result=True, warm_first_result=True, profile=False, top=DEFAULT_TOP,
              seed=0, progress=True, names=None, cache_dir=None, isolated=True, bad_model_rows=True,
              user_inputs=None) -> dict:
    """Benchmarks every model (paths); returns the report (see to_markdown, write_png).

    first_result: measure the time to first result of every configuration
    (True), of none (False), or of the configurations listed.
    cache_dir: also time the first result with the delegate's kernel cache there.
    user_inputs: the user's arrays for a single model (inputs.user_entries).
    isolated: each model in its own child process (a crash is reported in
    its result, "crash"); False runs them in this process.
    Raises ValueError for bad settings, before anything runs. A model that
    is not valid or does not fit in memory (verify.ModelError) is a row with
    its "error" (kind "model"), and the others still run (bad_model_rows=False:
    raises the ModelError before anything runs instead); every row that
    failed has its "error" (model_error).
    """
    configs = tuple(configs)
    bad = [c for c in configs if c not in CONFIGS]
    if bad:
        raise ValueError(f"unknown configuration(s) {', '.join(bad)}: choose from {', '.join(CONFIGS)}")
    if not configs:
        raise ValueError("no configuration to run")
    if warmup < 0 or iterations < 1:
        raise ValueError("warm-up must be >= 0 and iterations >= 1")
    if threads is not None and threads < 1:
        raise ValueError(f"threads must be >= 1 (got {threads})")
    if seed < 0 or top < 0:
        raise ValueError("seed and top must be >= 0")
    threads = threads or default_threads()
    models = [pathlib.Path(m) for m in models]
    names = list(names) if names else [None] * len(models)
    unreadable = {}
    for i, path in enumerate(models):
        try:
            preflight([path], configs, extra_options)
        except verify.ModelError as e:
            if not bad_model_rows:
                raise
            unreadable[i] = str(e)
    bar = _Progress(len(models) * len(configs), progress)
    args = dict(warmup=warmup, iterations=iterations, threads=threads, extra_options=dict(extra_options or {}),
                first_result=first_result if isinstance(first_result, bool) else list(first_result),
                warm_first_result=warm_first_result, profile=profile, top=top, seed=seed,
                cache_dir=str(cache_dir) if cache_dir else None, user_inputs=list(user_inputs or []))
    results = []
    try:
        for i, (path, name) in enumerate(zip(models, names)):
            if i in unreadable:
                results.append(_failed_model(path, name, configs, unreadable[i], kind="model"))
            elif isolated:
                results.append(_bench_isolated(path, name, configs, args, bar))
            else:
                results.append(bench_model(path, configs, warmup, iterations, threads, extra_options, first_result,
                                           warm_first_result, profile, top, seed, name, bar, cache_dir,
                                           user_inputs))
            bar.goto((i + 1) * len(configs))
    finally:
        bar.close()
    for res in results:
        err = model_error(res)
        if err is not None:
            res["error"] = err

    device = next((m["device"] for m in results if m.get("device")), None)
    if device is None:
        try:
            devs = _capi.devices()
            d = next((d for d in devs if d["type"] == "GPU"), devs[0] if devs else None)
            if d:
                device = {"platform": d["platform"], "name": d["name"], "version": d["version"], "precision": None}
        except Exception:  # noqa: BLE001
            device = None
    try:
        lib_version = _capi.version()
    except Exception:  # noqa: BLE001
        lib_version = None
    geo, n_geo = geomean_ratio(results)
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine_info(),
        "device": device,
        "tflite_gpu": __version__,
        "library": {"path": library_path(), "version": lib_version},
        "runtime": _runtime_version(),
        "settings": {"configs": list(configs), "warmup": warmup, "iterations": iterations, "threads": threads,
                     "delegate_options": dict(extra_options or {}), "seed": seed,
                     "first_result": (list(configs) if first_result is True else list(first_result or [])),
                     "warm_first_result": warm_first_result, "cache_dir": str(cache_dir) if cache_dir else None,
                     "interleaved": True, "profile": profile},
        "conventions": {
            "flops": FLOPS_CONVENTION,
            "latency": "time.perf_counter() around Interpreter.invoke(), configurations interleaved invoke by "
                       "invoke after the warm-up rounds; median and p90 (linear interpolation) in ms",
            "ratio_to_xnnpack": "median latency / XNNPACK's median latency (lower is better)",
            "first_result": "fresh process; load_delegate + Interpreter + allocate_tensors + set inputs + first "
                            "invoke, imports excluded; cold: POCL_KERNEL_CACHE=0; warm: PoCL kernel cache "
                            "filled by the benchmark process; CPU configurations measured once (cold)",
            "memory": "arena_bytes: device memory of the delegate's activation arena; live_peak_bytes: the lower "
                      "bound, peak of simultaneously live tensor bytes",
            "launches": "OpenCL kernel launches in the last timed invoke, as it ran (one per dispatch with "
                        "execution=kernels, one per phase stepped, one per segment persistent); execution: the "
                        "modes the partitions ran in; fallbacks: why a persistent partition ran stepped, or one "
                        "asked to run on the VM ran its kernels",
        },
        "geomean_fp32_over_xnnpack": geo,
        "geomean_models": n_geo,
        "models": results,
    }


if __name__ == "__main__":  # the child processes' old entry point
    sys.exit(_child_main())
