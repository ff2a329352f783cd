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
ending the run.

    python -m tflite_gpu bench MODEL... [--json P] [--markdown P] [--png P] [--profile]

The module is also the child process of the first-result and profile
measurements (python -m tflite_gpu.bench --first-result / --profile-run).
"""
from __future__ import annotations

import datetime
import gc
import json
import math
import os
import pathlib
import platform
import subprocess
import sys
import time

import numpy as np

from . import _capi, __version__, cache_options, isolate, library_path, load_delegate, resources, runtime, verify
from ._output import display
from .check import model_source, random_inputs

CONFIGS = ("xnnpack", "builtin", "fp32", "fp16")
CPU_CONFIGS = ("xnnpack", "builtin")
DELEGATE_CONFIGS = ("fp32", "fp16")
LABELS = {
    "xnnpack": "CPU XNNPACK",
    "builtin": "CPU builtin",
    "fp32": "delegate FP32",
    "fp16": "delegate FP16",
}
DEFAULT_WARMUP = 3
DEFAULT_ITERATIONS = 30
DEFAULT_TOP = 10
_CHILD_TIMEOUT_S = 900

FLOPS_CONVENTION = (
    "FLOPs = 2 x MACs for CONV_2D (N*OH*OW*Cout*KH*KW*Cin), DEPTHWISE_CONV_2D (N*OH*OW*C*KH*KW), "
    "FULLY_CONNECTED (output elements * input features), BATCH_MATMUL, TRANSPOSE_CONV and MediaPipe's "
    "Convolution2DTransposeBias (N*IH*IW*Cin*KH*KW*Cout); bias adds and fused activations are not counted. "
    "Pooling counts KH*KW per output element, reductions (MEAN, SUM, ...) one per input element, every other "
    "computing op (elementwise, activations, resize, softmax, custom ops) one per output element. Data "
    "movement (RESHAPE, CONCATENATION, PAD, STRIDED_SLICE, ...) and constant folding (DEQUANTIZE, DENSIFY) "
    "count zero. Only the main subgraph is counted."
)

# Ops that move or reinterpret data, or are folded into constants at prepare time.
_ZERO_FLOP_OPS = frozenset("""
    RESHAPE SQUEEZE EXPAND_DIMS CONCATENATION PAD PADV2 MIRROR_PAD STRIDED_SLICE SLICE SPLIT SPLIT_V
    TRANSPOSE GATHER GATHER_ND DEPTH_TO_SPACE SPACE_TO_DEPTH BATCH_TO_SPACE_ND SPACE_TO_BATCH_ND
    DEQUANTIZE QUANTIZE DENSIFY CAST SHAPE PACK UNPACK TILE BROADCAST_TO FILL ZEROS_LIKE ONES_LIKE
    REVERSE_V2 IDENTITY
""".split())
_REDUCE_OPS = frozenset("MEAN SUM REDUCE_MAX REDUCE_MIN REDUCE_PROD ARG_MAX ARG_MIN L2_NORMALIZATION".split())
_POOL_OPS = frozenset("AVERAGE_POOL_2D MAX_POOL_2D L2_POOL_2D".split())


# --------------------------------------------------------------------------
# FLOPs


def count_flops(model) -> dict:
    """FLOPs of one inference of `model` (a path or .tflite bytes), read from
    the flatbuffer with the `tflite` schema package; see FLOPS_CONVENTION.

    Returns {"total": int, "by_op": {op name: FLOPs}}.
    """
    import tflite

    buf = model if isinstance(model, (bytes, bytearray)) else pathlib.Path(model).read_bytes()
    m = tflite.Model.GetRootAsModel(buf, 0)
    names = {v: k for k, v in vars(tflite.BuiltinOperator).items() if not k.startswith("_") and isinstance(v, int)}
    sg = m.Subgraphs(0)

    def shape(i):
        if i < 0:
            return []
        t = sg.Tensors(i)
        return [int(t.Shape(j)) for j in range(t.ShapeLength())]

    def elems(i):
        return int(np.prod(shape(i), dtype=np.int64)) if i >= 0 else 0

    def options(op, cls):
        tab = op.BuiltinOptions()
        if tab is None:
            return None
        o = cls()
        o.Init(tab.Bytes, tab.Pos)
        return o

    by_op: dict = {}
    for k in range(sg.OperatorsLength()):
        op = sg.Operators(k)
        oc = m.OperatorCodes(op.OpcodeIndex())
        code = max(int(oc.BuiltinCode()), int(oc.DeprecatedBuiltinCode()))
        if code == tflite.BuiltinOperator.CUSTOM:
            custom = oc.CustomCode()
            name = "CUSTOM:" + (custom.decode() if custom else "?")
        else:
            name = names.get(code, f"OP_{code}")
        ins = [int(op.Inputs(j)) for j in range(op.InputsLength())]
        outs = [int(op.Outputs(j)) for j in range(op.OutputsLength())]
        out0 = outs[0] if outs else -1
        flops = 0
        try:
            if name == "CONV_2D":
                w = shape(ins[1])  # [Cout, KH, KW, Cin/groups]
                flops = 2 * elems(out0) * w[1] * w[2] * w[3]
            elif name == "DEPTHWISE_CONV_2D":
                w = shape(ins[1])  # [1, KH, KW, Cout]
                flops = 2 * elems(out0) * w[1] * w[2]
            elif name == "FULLY_CONNECTED":
                w = shape(ins[1])  # [units, in_features]
                flops = 2 * elems(out0) * w[-1]
            elif name == "BATCH_MATMUL":
                a = shape(ins[0])
                o = options(op, tflite.BatchMatMulOptions)
                kdim = a[-2] if (o is not None and o.AdjX()) else a[-1]
                flops = 2 * elems(out0) * kdim
            elif name == "TRANSPOSE_CONV":
                w = shape(ins[1])  # [Cout, KH, KW, Cin]; ins[2] is the input
                flops = 2 * elems(ins[2]) * w[0] * w[1] * w[2]
            elif name == "CUSTOM:Convolution2DTransposeBias":
                w = shape(ins[1])  # [Cout, KH, KW, Cin]; ins[0] is the input
                flops = 2 * elems(ins[0]) * w[0] * w[1] * w[2]
            elif name in _POOL_OPS:
                o = options(op, tflite.Pool2DOptions)
                window = (o.FilterHeight() * o.FilterWidth()) if o is not None else 1
                flops = elems(out0) * window
            elif name in _REDUCE_OPS:
                flops = elems(ins[0])
            elif name in _ZERO_FLOP_OPS:
                flops = 0
            else:
                flops = sum(elems(o) for o in outs)
        except (IndexError, TypeError):  # malformed or unexpected operand layout: count nothing
            flops = 0
        by_op[name] = by_op.get(name, 0) + int(flops)
    return {"total": int(sum(by_op.values())), "by_op": dict(sorted(by_op.items(), key=lambda kv: -kv[1]))}


# --------------------------------------------------------------------------
# Interpreters


def default_threads() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def delegate_options(config: str, extra: dict | None = None) -> dict:
    opts = {"log_level": "silent"}
    opts.update(extra or {})
    opts["is_precision_loss_allowed"] = "1" if config == "fp16" else "0"
    return opts


def make_interpreter(model_path, config: str, threads: int, extra_options: dict | None = None):
    """(interpreter, delegate or None) for one configuration, tensors allocated."""
    mod = runtime()
    source = model_source(model_path)
    if config == "xnnpack":
        return _allocated(mod.Interpreter(**source, num_threads=threads)), None
    if config == "builtin":
        return _allocated(mod.Interpreter(
            **source, num_threads=threads,
            experimental_op_resolver_type=mod.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)), None
    if config in DELEGATE_CONFIGS:
        delegate = load_delegate(**delegate_options(config, extra_options))
        it = mod.Interpreter(**source, num_threads=threads, experimental_delegates=[delegate])
        return _allocated(it), delegate
    raise ValueError(f"unknown configuration {config!r} (one of {', '.join(CONFIGS)})")


def _allocated(it):
    it.allocate_tensors()
    return it


def _set_inputs(it, seed: int):
    for det, x in zip(it.get_input_details(), random_inputs(it.get_input_details(), seed)):
        it.set_tensor(det["index"], x)


def _short_error(e: BaseException | str) -> str:
    """The informative lines of an error, on one line (at most 1000 characters)."""
    from .errors import reason

    text = reason(e)
    return text if len(text) <= 1000 else text[:997] + "..."


def _phase_name(config: str, what: str) -> str:
    """isolate phase names: "cpu:..." while a CPU configuration runs, "delegate:..." while the delegate does."""
    return f"{'delegate' if config in DELEGATE_CONFIGS else 'cpu'}:{config} {what}"


# --------------------------------------------------------------------------
# Child processes: time to first result, kernel profile


def _run_child(args: list, env_extra: dict) -> dict:
    cmd = [sys.executable, "-m", "tflite_gpu.bench", *[str(a) for a in args]]
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
                         cold: bool = True, seed: int = 0) -> dict:
    """Time to first result in a fresh process: {"seconds": s} or {"error": msg}.

    cold: POCL_KERNEL_CACHE=0, so the OpenCL programs are compiled from source.
    """
    env = {"POCL_KERNEL_CACHE": "0" if cold else "1"}
    return _run_child(["--first-result", model_path, config, "--threads", threads, "--seed", seed,
                       "--options", json.dumps(extra_options or {})], env)


def measure_profile(model_path, config: str, threads: int, extra_options: dict | None = None,
                    warmup: int = DEFAULT_WARMUP, iterations: int = DEFAULT_ITERATIONS, seed: int = 0) -> dict:
    """Per-kernel OpenCL event times of a delegate configuration, measured in a
    fresh process with TFLITE_GPU_PROFILE=1: {"invokes", "kernels", "median_ms"}
    or {"error": msg}."""
    return _run_child(["--profile-run", model_path, config, "--threads", threads, "--seed", seed,
                       "--warmup", warmup, "--iterations", iterations,
                       "--options", json.dumps(extra_options or {})], {"TFLITE_GPU_PROFILE": "1"})


def _child_first_result(model, config, threads, options, seed) -> dict:
    mod = runtime()  # imported before the clock starts, as an app has it
    source = model_source(model)
    t0 = time.perf_counter()
    if config in DELEGATE_CONFIGS:
        delegate = load_delegate(**delegate_options(config, options))
        it = mod.Interpreter(**source, num_threads=threads, experimental_delegates=[delegate])
    elif config == "xnnpack":
        it = mod.Interpreter(**source, num_threads=threads)
    else:
        it = mod.Interpreter(**source, num_threads=threads,
                             experimental_op_resolver_type=mod.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    it.allocate_tensors()
    g0 = time.perf_counter()
    inputs = random_inputs(it.get_input_details(), seed)  # making the data is not the runtime's cost
    gen = time.perf_counter() - g0
    for det, x in zip(it.get_input_details(), inputs):
        it.set_tensor(det["index"], x)
    it.invoke()
    for det in it.get_output_details():
        it.get_tensor(det["index"])
    out = {"seconds": time.perf_counter() - t0 - gen}
    if config in DELEGATE_CONFIGS:  # after the clock: did the kernel cache hit?
        st = _capi.delegate_stats(delegate._get_native_delegate_pointer())
        out.update({k: st[k] for k in ("cache_hits", "cache_misses", "cache_writes", "cache_rejected")})
    return out


def _child_profile(model, config, threads, options, seed, warmup, iterations) -> dict:
    if not hasattr(_capi, "delegate_profile"):
        return {"error": "this tflite_gpu has no _capi.delegate_profile"}
    it, delegate = make_interpreter(model, config, threads, options)
    _set_inputs(it, seed)
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

    ap = argparse.ArgumentParser(prog="python -m tflite_gpu.bench", description="internal: benchmark child process")
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
    a = ap.parse_args(argv)
    options = json.loads(a.options)
    try:
        if a.first_result:
            out = _child_first_result(a.model, a.config, a.threads, options, a.seed)
        else:
            out = _child_profile(a.model, a.config, a.threads, options, a.seed, a.warmup, a.iterations)
    except Exception as e:  # noqa: BLE001 - reported to the parent, which carries on
        out = {"error": _short_error(e)}
    print(json.dumps(out), flush=True)
    return 0


# --------------------------------------------------------------------------
# The benchmark


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
                profile=False, top=DEFAULT_TOP, seed=0, name=None, _progress=None, cache_dir=None) -> dict:
    """Benchmarks one model (a .tflite path) in the given configurations; see the module doc."""
    threads = threads or default_threads()
    path = pathlib.Path(model_path)
    shown = display(path.name)
    name = name or (shown[:-7] if shown.endswith(".tflite") else shown)
    progress = _progress or _Progress(0, False)
    share = 1.0  # progress units per configuration
    res = {"model": name, "path": display(path), "configs": {c: {"label": LABELS[c]} for c in configs}}
    # first_result: True (every configuration), False, or the configurations to measure.
    fr_configs = set(configs if first_result is True else (first_result or ()))
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
            fr = measure_first_result(path, c, threads, extra_options, cold=True, seed=seed)
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
            it, d = make_interpreter(path, c, threads, extra_options)
            _set_inputs(it, seed)
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
        progress.step(0.1 * share)

    # 3. Warm time to first result: the interpreters above filled PoCL's kernel cache.
    for c in configs:
        r = res["configs"][c]
        if c in fr_configs and warm_first_result and c in DELEGATE_CONFIGS and r.get("status") == "ok":
            progress.step(0, f"{name}: {c} first result (warm)")
            if os.environ.get("POCL_KERNEL_CACHE") == "0":  # this process did not fill the cache
                measure_first_result(path, c, threads, extra_options, cold=False, seed=seed)
            fr = measure_first_result(path, c, threads, extra_options, cold=False, seed=seed)
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
                fill = measure_first_result(path, c, threads, cached_opts, cold=True, seed=seed)
                r["first_result_cache_write_s"] = fill.get("seconds")
                fr = measure_first_result(path, c, threads, cached_opts, cold=True, seed=seed)
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
                res["configs"][c].update(status="error", error=_short_error(e))
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
                                    iterations=max(1, min(iterations, 10)), seed=seed)
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
                         warm_first_result, profile, top, seed, cache_dir):
    """bench_model in a child process (isolate.run("bench_model", ...)); the
    progress goes to the parent as {"progress": [amount, note]} messages."""
    class _Forward:
        def step(self, amount, note=None):
            isolate.send({"progress": [amount, note]})

    fr = first_result if isinstance(first_result, bool) else tuple(first_result)
    return bench_model(path, tuple(configs), warmup, iterations, threads, extra_options, fr, warm_first_result,
                       profile, top, seed, name, _Forward(), cache_dir)


def _failed_model(path, name, configs, why: str, crash: dict | None = None) -> dict:
    """The result of a model whose benchmark process ended without results."""
    shown = display(pathlib.Path(path).name)
    res = {"model": name or (shown[:-7] if shown.endswith(".tflite") else shown), "path": display(path),
           "configs": {c: {"label": LABELS[c], "status": "error", "error": why} for c in configs},
           "cpu_reference": None, "note": why}  # None: not known, the process died
    if crash:
        res["crash"] = crash
    return res


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
              seed=0, progress=True, names=None, cache_dir=None, isolated=True) -> dict:
    """Benchmarks every model (paths); returns the report (see to_markdown, write_png).

    first_result: measure the time to first result of every configuration
    (True), of none (False), or of the configurations listed.
    cache_dir: also time the first result with the delegate's kernel cache there.
    isolated: each model in its own child process (a crash is reported in
    its result, "crash"); False runs them in this process.
    Raises ValueError for bad settings and verify.ModelError for a model
    that is not valid or does not fit in memory, before anything runs.
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
    preflight(models, configs, extra_options)
    bar = _Progress(len(models) * len(configs), progress)
    args = dict(warmup=warmup, iterations=iterations, threads=threads, extra_options=dict(extra_options or {}),
                first_result=first_result if isinstance(first_result, bool) else list(first_result),
                warm_first_result=warm_first_result, profile=profile, top=top, seed=seed,
                cache_dir=str(cache_dir) if cache_dir else None)
    results = []
    try:
        for i, (path, name) in enumerate(zip(models, names)):
            if isolated:
                results.append(_bench_isolated(path, name, configs, args, bar))
            else:
                results.append(bench_model(path, configs, warmup, iterations, threads, extra_options, first_result,
                                           warm_first_result, profile, top, seed, name, bar, cache_dir))
            bar.goto((i + 1) * len(configs))
    finally:
        bar.close()

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
            "launches": "OpenCL kernel launches (dispatches) per invoke",
        },
        "geomean_fp32_over_xnnpack": geo,
        "geomean_models": n_geo,
        "models": results,
    }


# --------------------------------------------------------------------------
# Reports


def _f(v, fmt="{:.2f}", none="–"):
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return none
    return fmt.format(v)


def _mib(b):
    return None if b is None else b / 2**20


def to_markdown(report: dict) -> str:
    m, dev, s = report["machine"], report.get("device") or {}, report["settings"]
    configs = s["configs"]
    geo, n_geo = report.get("geomean_fp32_over_xnnpack"), report.get("geomean_models", 0)
    lines = [
        "# tflite-gpu benchmark",
        "",
        f"- **Machine**: {m['cpu']}, {m['cores']} cores ({m['os']}, Python {m['python']})",
        f"- **OpenCL device**: {dev.get('name', 'unknown')}"
        + (f" ({dev.get('platform')}, {dev.get('version')})" if dev.get("platform") else ""),
        f"- **Date**: {report['date']}",
        f"- **Software**: tflite-gpu {report['tflite_gpu']} (library {report['library'].get('version') or '?'}), "
        f"{report['runtime']}",
        f"- **Settings**: {s['warmup']} warm-up + {s['iterations']} timed invokes per configuration, interleaved; "
        f"CPU threads = {s['threads']}"
        + (f"; delegate options {s['delegate_options']}" if s["delegate_options"] else ""),
        "- **Geometric mean of delegate FP32 / XNNPACK median latency**: "
        + (f"**{geo:.2f}x** over {n_geo} model(s) ({'slower' if geo > 1 else 'faster'} than XNNPACK)"
           if geo else "n/a (no model ran in both)"),
        "",
        "## Summary (median invoke latency, ms; ratio to XNNPACK in parentheses, lower is better)",
        "",
        "| model | GFLOP | " + " | ".join(LABELS[c] for c in configs) + " |",
        "|---|---:|" + "---:|" * len(configs),
    ]
    for r in report["models"]:
        cells = []
        for c in configs:
            cr = r["configs"].get(c, {})
            if cr.get("median_ms") is None:
                no_cpu = c in CPU_CONFIGS and r.get("cpu_reference", True) is False
                cells.append("n/a" if no_cpu else ("failed" if cr.get("status") == "error" else "–"))
            elif c != "xnnpack" and cr.get("ratio_to_xnnpack"):
                cells.append(f"{cr['median_ms']:.2f} ({cr['ratio_to_xnnpack']:.2f}x)")
            else:
                cells.append(f"{cr['median_ms']:.2f}")
        mark = " †" if r.get("cpu_reference", True) is False else ""
        lines.append(f"| {r['model']}{mark} | {_f(_gflop(r), '{:.3f}')} | " + " | ".join(cells) + " |")
    if any(r.get("cpu_reference", True) is False for r in report["models"]):
        lines += ["", "† no CPU reference: the CPU interpreter cannot run the model (custom ops); "
                      "only the delegate columns can be reported."]

    lines += [
        "",
        "## Details",
        "",
        "| model | configuration | first result cold (s) | warm (s) | median (ms) | p90 (ms) | x XNNPACK | "
        "GFLOP/s | launches / invoke | arena (MiB) | lower bound (MiB) | arena / bound | nodes GPU / CPU |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in report["models"]:
        for c in configs:
            cr = r["configs"].get(c, {})
            if cr.get("status") == "error" and cr.get("median_ms") is None:
                err = cr.get("error", "").replace("|", "/")
                lines.append(f"| {r['model']} | {LABELS[c]} | {_f(cr.get('first_result_cold_s'), '{:.3f}')} | "
                             f"{_f(cr.get('first_result_warm_s'), '{:.3f}')} | failed: {err} |  |  |  |  |  |  |  |  |")
                continue
            is_del = c in DELEGATE_CONFIGS
            lines.append(
                f"| {r['model']} | {LABELS[c]} | {_f(cr.get('first_result_cold_s'), '{:.3f}')} | "
                f"{_f(cr.get('first_result_warm_s'), '{:.3f}')} | {_f(cr.get('median_ms'))} | "
                f"{_f(cr.get('p90_ms'))} | {_f(cr.get('ratio_to_xnnpack'))} | {_f(cr.get('gflops_per_s'))} | "
                + (f"{cr.get('dispatches', '–')} | {_f(_mib(cr.get('arena_bytes')))} | "
                   f"{_f(_mib(cr.get('live_peak_bytes')))} | {_f(cr.get('arena_over_lower_bound'))} | "
                   f"{cr.get('delegated_nodes', '–')} / {cr.get('cpu_nodes', '–')} |"
                   if is_del else "– | – | – | – | – |"))

    cached = [(r, c) for r in report["models"] for c in configs
              if r["configs"].get(c, {}).get("first_result_cached_s") is not None]
    if cached:
        lines += ["", "## Time to first result with the kernel cache (--cache-dir, POCL_KERNEL_CACHE=0)", "",
                  "| model | configuration | cold, no cache (s) | first run, writing (s) | our cache (s) "
                  "| cached / cold | hit |", "|---|---|---:|---:|---:|---:|---|"]
        for r, c in cached:
            cr = r["configs"][c]
            cold, warm = cr.get("first_result_cold_s"), cr["first_result_cached_s"]
            lines.append(f"| {r['model']} | {LABELS[c]} | {_f(cold, '{:.3f}')} | "
                         f"{_f(cr.get('first_result_cache_write_s'), '{:.3f}')} | {warm:.3f} | "
                         f"{_f(warm / cold if cold else None, '{:.1%}')} | "
                         f"{'yes' if cr.get('first_result_cache_hit') else 'NO'} |")

    profiled = [(r, c) for r in report["models"] for c in configs if r["configs"].get(c, {}).get("profile")]
    profile_errors = [(r, c) for r in report["models"] for c in configs
                      if r["configs"].get(c, {}).get("profile_error")]
    if profiled or profile_errors:
        lines += ["", "## Top kernels by OpenCL event time (TFLITE_GPU_PROFILE=1, separate process)", ""]
        for r, c in profiled:
            p = r["configs"][c]["profile"]
            lines += [f"**{r['model']}, {LABELS[c]}**: {p['kernel_ms_per_invoke']:.2f} ms of kernel time per invoke "
                      f"(profiled median latency {_f(p.get('profiled_median_ms'))} ms, {p['invokes']} invokes)", "",
                      "| kernel | launches / invoke | ms / invoke | share |", "|---|---:|---:|---:|"]
            for k in p["top"]:
                lines.append(f"| `{k['kernel']}` | {k['calls_per_invoke']:.1f} | {k['ms_per_invoke']:.3f} | "
                             f"{100 * k['share']:.1f}% |")
            lines.append("")
        for r, c in profile_errors:
            lines.append(f"- {r['model']}, {LABELS[c]}: no profile ({r['configs'][c]['profile_error']})")

    notes = [f"- {r['model']}: {r['note']}" for r in report["models"] if r.get("note")]
    lines += ["", "## Conventions", ""]
    for k, v in report["conventions"].items():
        lines.append(f"- **{k}**: {v}")
    if notes:
        lines += ["", "## Notes", ""] + notes
    return "\n".join(lines) + "\n"


def _gflop(r):
    t = (r.get("flops") or {}).get("total")
    return None if t is None else t / 1e9


def chart_problem(configs) -> str | None:
    """Why --png cannot draw a chart for these configurations (None: it can)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError as e:
        return f"--png needs matplotlib ({e}; pip install matplotlib)"
    if "xnnpack" not in configs:
        return "--png draws each configuration's latency relative to CPU XNNPACK: add xnnpack to --configs"
    if not [c for c in configs if c != "xnnpack"]:
        return "--png compares configurations with CPU XNNPACK: add at least one other to --configs"
    return None


def _why_missing(r: dict, c: str) -> str:
    cr = r["configs"].get(c, {})
    if r.get("crash"):
        return "crashed"
    if cr.get("status") == "error":
        return f"{LABELS[c]} failed"
    if c == "xnnpack" and r.get("cpu_reference", True) is False:
        return "the CPU interpreter cannot run it"
    return f"no {LABELS[c]} result"


def chart_rows(report: dict) -> tuple:
    """(the models drawn: those with an XNNPACK latency, the footnote's
    entries: every model or bar left out, with the reason)."""
    others = [c for c in report["settings"]["configs"] if c != "xnnpack"]
    rows = [r for r in report["models"] if r["configs"].get("xnnpack", {}).get("median_ms")]
    missing = [f"{r['model']} ({_why_missing(r, 'xnnpack')})" for r in report["models"] if r not in rows]
    missing += [f"{r['model']} {LABELS[c]} ({_why_missing(r, c)})" for r in rows for c in others
                if not r["configs"].get(c, {}).get("ratio_to_xnnpack")]
    return rows, missing


def write_png(report: dict, path):
    """Bar chart: median latency ratio to XNNPACK per model (log scale).
    Returns None when drawn, else why there is nothing to draw (and writes nothing)."""
    configs = report["settings"]["configs"]
    problem = chart_problem(configs)
    if problem:
        return problem
    others = [c for c in configs if c != "xnnpack"]
    rows, missing = chart_rows(report)
    if not rows:
        return "no model has a CPU XNNPACK latency to compare with (" + "; ".join(
            f"{r['model']}: {_why_missing(r, 'xnnpack')}" for r in report["models"]) + ")"
    if not any(r["configs"].get(c, {}).get("ratio_to_xnnpack") for r in rows for c in others):
        return "no configuration other than CPU XNNPACK has a latency to draw"
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    fig, ax = plt.subplots(figsize=(max(7.0, 0.8 * len(rows) + 3), 5.5))
    width = 0.8 / max(len(others), 1)
    colors = {"builtin": "#9e9e9e", "fp32": "#1f77b4", "fp16": "#ff7f0e"}
    lowest = highest = 1.0
    for j, c in enumerate(others):
        xs, ys = [], []
        for i, r in enumerate(rows):
            v = r["configs"].get(c, {}).get("ratio_to_xnnpack")
            if v:
                xs.append(i + (j - (len(others) - 1) / 2) * width)
                ys.append(v)
        lowest, highest = min([lowest, *ys]), max([highest, *ys])
        bars = ax.bar(xs, ys, width=width, label=LABELS[c], color=colors.get(c))
        ax.bar_label(bars, labels=[f"{v:.2g}" for v in ys], fontsize=6, padding=1)
    ax.axhline(1.0, color="black", linewidth=1, linestyle="--", label="CPU XNNPACK = 1")
    ax.set_yscale("log")
    ax.set_ylim(bottom=min(0.5, lowest / 1.5), top=highest * 4)  # room for the legend
    ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}x"))
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([r["model"] for r in rows], rotation=40, ha="right", fontsize=8)
    ax.set_ylabel("median latency / XNNPACK median (log, lower is better)")
    geo = report.get("geomean_fp32_over_xnnpack")
    dev = (report.get("device") or {}).get("name", "unknown device")
    ax.set_title(f"tflite-gpu on {dev} vs CPU ({report['machine']['cpu']}, {report['machine']['cores']} cores)"
                 + (f"\ngeomean delegate FP32 / XNNPACK = {geo:.2f}x" if geo else ""), fontsize=9)
    ax.legend(fontsize=8, ncol=4, loc="upper center")
    ax.grid(axis="y", which="both", alpha=0.3)
    if missing:
        fig.text(0.01, 0.01, "not shown: " + ", ".join(missing), fontsize=7, wrap=True)
    fig.tight_layout(rect=(0, 0.04 if missing else 0, 1, 1))
    pathlib.Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return None


def write_outputs(report: dict, json_path=None, markdown_path=None, png_path=None, warn=None) -> list:
    """Writes the requested files; returns the paths written. A chart that
    cannot be drawn is not written; warn(reason) (default: stderr) says why."""
    from ._output import dumps

    written = []
    if json_path:
        p = pathlib.Path(json_path)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(dumps(report) + "\n")
        written.append(p)
    if markdown_path:
        p = pathlib.Path(markdown_path)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(to_markdown(report), errors="backslashreplace")
        written.append(p)
    if png_path:
        why = write_png(report, png_path)
        if why is None:
            written.append(pathlib.Path(png_path))
        else:
            (warn or (lambda m: print(m, file=sys.stderr)))(f"no chart written to {display(png_path)}: {why}")
    return written


if __name__ == "__main__":
    sys.exit(_child_main())
