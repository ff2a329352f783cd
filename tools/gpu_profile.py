#!/usr/bin/env python3
"""Where a model's latency goes on the GPU: per model, once, through the
delegate (GPU kernel set, FP32 unless told otherwise), in a fresh process
of its own (tools/gpu_run.sh's `profile` step):

- cold first result: load_delegate + Interpreter (allocate_tensors) + set
  inputs + first invoke, the first thing the fresh process does after its
  imports, with no kernel cache (no serialization_dir),
  CUDA_CACHE_DISABLE=1 and POCL_KERNEL_CACHE=0: every program is compiled
  from source; split into "Interpreter" and "first invoke";
- launches per invoke (delegate_stats' "dispatches"; with execution=stepped
  or persistent, those of the last timed invoke, delegate_runs, and the
  phases in "phases_per_invoke"), partitions, nodes on
  the GPU and left on the CPU;
- host time per invoke: median (and p90, min) wall time of
  Interpreter.invoke() over --invokes invokes after --warmup, on that
  delegate (no profiling);
- GPU time per invoke and per launch: a second delegate created with
  TFLITE_GPU_PROFILE=1 (OpenCL event profiling, a slower queue), the
  per-kernel event times of --profile-invokes invokes after the warm-up
  (_capi.delegate_profile); host minus GPU time is what launching and
  synchronising cost.

Writes OUT/profile.json and OUT/profile.md after every model (a run cut
short keeps the models done). Exit 0 when every model was measured, 1 when
one failed (its row says why), 124 when --deadline-s left models out, 2
bad usage.

    python tools/gpu_profile.py [--out DIR] [--kernel-set gpu] [--precision fp32] [MODEL ...]

MODEL: a MediaPipe model name (from $TFLITE_GPU_MODEL_DIR, fetched if
missing) or a .tflite path; default all 14.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
TOP = 5  # kernels listed per model in the markdown


# ----------------------------------------------------------------------------- the child


def _child(args) -> dict:
    """Runs in the fresh process: the measurements of one model."""
    import gc

    import numpy as np

    import tflite_gpu
    from tflite_gpu import _capi, interpreters
    from tflite_gpu.bench_setup import delegate_options
    from tflite_gpu.check import random_inputs

    tflite_gpu.runtime()  # imported before the clock starts, as an app has it
    options = delegate_options(args.precision, dict(json.loads(args.options), kernel_set=args.kernel_set))
    source = interpreters.model_source(args.model)
    os.environ.pop("TFLITE_GPU_PROFILE", None)

    t0 = time.perf_counter()
    delegate = tflite_gpu.load_delegate(**options)
    it = interpreters.make(source, delegate=delegate, threads=args.threads)
    t1 = time.perf_counter()
    inputs = random_inputs(it.get_input_details(), 0)  # making the data is not the runtime's cost
    t2 = time.perf_counter()
    interpreters.set_inputs(it, inputs)
    it.invoke()
    for det in it.get_output_details():
        it.get_tensor(det["index"])
    t3 = time.perf_counter()
    out = {"first_result_s": (t1 - t0) + (t3 - t2), "interpreter_s": t1 - t0, "first_invoke_s": t3 - t2}
    ptr = delegate._get_native_delegate_pointer()
    stats = _capi.delegate_stats(ptr)
    out.update({k: stats[k] for k in ("dispatches", "partitions", "delegated_nodes", "cpu_nodes",
                                      "compile_seconds", "arena_bytes")})
    try:
        out["device"] = _capi.delegate_device(ptr)
    except Exception:  # noqa: BLE001 - informational
        pass

    for _ in range(args.warmup):
        it.invoke()
    times = []
    for _ in range(args.invokes):
        t = time.perf_counter()
        it.invoke()
        times.append(time.perf_counter() - t)
    out["host_ms"] = {"median": float(np.median(times)) * 1e3, "p90": float(np.percentile(times, 90)) * 1e3,
                      "min": float(min(times)) * 1e3, "invokes": len(times)}
    # The VM (stepped, persistent): the launches of the last timed invoke, under
    # the key every report's launches column reads; its dispatches are phases.
    runs = _capi.delegate_runs(ptr)
    if any(r["execution"] != "kernels" for r in runs):
        out["phases_per_invoke"] = out["dispatches"]
        out["dispatches"] = sum(r["launches"] for r in runs)
    del it, delegate
    gc.collect()

    # The profiled delegate: the library reads TFLITE_GPU_PROFILE when a delegate is created.
    os.environ["TFLITE_GPU_PROFILE"] = "1"
    delegate = tflite_gpu.load_delegate(**options)
    it = interpreters.make(source, delegate=delegate, threads=args.threads)
    interpreters.set_inputs(it, inputs)
    for _ in range(args.warmup):
        it.invoke()
    ptr = delegate._get_native_delegate_pointer()
    before = {r["kernel"]: r for r in _capi.delegate_profile(ptr)}  # build-time and warm-up launches excluded
    intervals_before = _capi.delegate_launch_intervals(ptr)
    phases_before = _capi.delegate_phase_times(ptr)
    times = []
    for _ in range(args.profile_invokes):
        t = time.perf_counter()
        it.invoke()
        times.append(time.perf_counter() - t)
    n = max(len(times), 1)
    kernels = []
    for r in _capi.delegate_profile(ptr):
        b = before.get(r["kernel"], {"calls": 0, "total_ms": 0.0})
        calls, ms = r["calls"] - b["calls"], r["total_ms"] - b["total_ms"]
        if calls > 0:
            kernels.append({"kernel": r["kernel"], "calls_per_invoke": calls / n, "ms_per_invoke": ms / n,
                            "us_per_call": ms * 1e3 / calls})
    kernels.sort(key=lambda k: -k["ms_per_invoke"])
    gpu_ms = sum(k["ms_per_invoke"] for k in kernels)
    launches = sum(k["calls_per_invoke"] for k in kernels)
    out["gpu"] = {"ms_per_invoke": gpu_ms, "launches_per_invoke": launches,
                  "us_per_launch": gpu_ms * 1e3 / launches if launches else None,
                  "profiled_host_median_ms": float(np.median(times)) * 1e3 if times else None,
                  "invokes": len(times), "kernels": kernels,
                  "launch_intervals": _interval_deltas(intervals_before, _capi.delegate_launch_intervals(ptr), n),
                  # execution=stepped|persistent: each VM phase's kernel, work-items and grid (explain --phases),
                  # and persistent on a GPU with a timer its time
                  "phases": _phase_rows(ptr, phases_before)}
    return out


def _phase_rows(ptr, before: dict) -> list:
    """delegate_phases' rows, each, where the phases were stamped
    (persistent, a GPU timer), with "us_per_invoke" over the invokes since
    `before` (delegate_phase_times). Timing puts a grid barrier before every
    phase: phases one at a time, not side by side."""
    from tflite_gpu import _capi

    rows = _capi.delegate_phases(ptr)
    after = _capi.delegate_phase_times(ptr)
    seen: dict = {}
    for r in rows:
        k = seen[r["partition"]] = seen.get(r["partition"], -1) + 1  # its place in its partition
        a, b = after.get((r["partition"], k)), before.get((r["partition"], k), {"invokes": 0, "total_ms": 0.0})
        if a and a["invokes"] > b["invokes"]:
            r["us_per_invoke"] = (a["total_ms"] - b["total_ms"]) * 1e3 / (a["invokes"] - b["invokes"])
    return rows


def _interval_deltas(before: dict, after: dict, invokes: int) -> dict:
    """Per interval (queued_to_submit, submit_to_start, gap): µs per launch
    (per gap) and ms per invoke over the profiled invokes."""
    out = {}
    for name, a in after.items():
        b = before.get(name, {"count": 0, "total_ms": 0.0})
        count, ms = a["count"] - b["count"], a["total_ms"] - b["total_ms"]
        if count > 0:
            out[name] = {"us_each": ms * 1e3 / count, "ms_per_invoke": ms / invokes}
    return out


def child_main(argv) -> int:
    ap = argparse.ArgumentParser(prog="gpu_profile.py --child")
    ap.add_argument("--child", action="store_true")
    ap.add_argument("model")
    ap.add_argument("--kernel-set", default="gpu")
    ap.add_argument("--precision", default="fp32")
    ap.add_argument("--options", default="{}")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--invokes", type=int, default=20)
    ap.add_argument("--profile-invokes", type=int, default=10)
    args = ap.parse_args(argv)
    try:
        out = _child(args)
    except Exception as e:  # noqa: BLE001 - reported to the parent, which carries on
        text = " ".join(str(e).split()) or type(e).__name__
        out = {"error": {"kind": type(e).__name__, "message": text[:1000]}}
    print(json.dumps(out), flush=True)
    return 0


# ----------------------------------------------------------------------------- the parent


def _stem(name: str) -> str:
    n = pathlib.Path(name).name
    return n[:-7] if n.endswith(".tflite") else n


def _resolve(name: str) -> pathlib.Path:
    p = pathlib.Path(name)
    if p.exists():
        return p
    from tflite_gpu import models

    return models.model_path(name)


def _error(kind: str, message: str) -> dict:
    return {"kind": kind, "message": " ".join(str(message).split())[:1000]}


def measure(path, args, timeout_s: float) -> dict:
    """One model in a fresh process: the child's measurements, or {"error": {...}}."""
    from tflite_gpu import isolate

    extra = {"CUDA_CACHE_DISABLE": "1", "POCL_KERNEL_CACHE": "0"}
    try:
        env = isolate.child_env(extra)  # this very package and library
    except Exception:  # noqa: BLE001 - no library: the child says so in its row
        env = dict(os.environ, **extra)
    env.pop("TFLITE_GPU_PROFILE", None)
    cmd = [sys.executable, str(pathlib.Path(__file__).resolve()), "--child", str(path),
           "--kernel-set", args.kernel_set, "--precision", args.precision, "--options", json.dumps(args.opt),
           "--warmup", str(args.warmup), "--invokes", str(args.invokes),
           "--profile-invokes", str(args.profile_invokes)]
    if args.threads:
        cmd += ["--threads", str(args.threads)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, errors="backslashreplace", env=env,
                           timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return {"error": _error("timeout", f"no result after {timeout_s:.0f} s")}
    for line in reversed(p.stdout.splitlines()):
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                break
    tail = [ln for ln in p.stderr.splitlines() if ln.strip() and not ln.startswith("INFO:")]
    if p.returncode < 0:
        import signal

        try:
            sig = signal.Signals(-p.returncode).name
        except ValueError:
            sig = f"signal {-p.returncode}"
        return {"error": _error("crash", f"the process died of {sig}" + (f": {tail[-1]}" if tail else ""))}
    return {"error": _error("exit", f"exit {p.returncode}: {tail[-1] if tail else 'no output'}")}


def _num(x, fmt="{:.2f}"):
    return "–" if x is None else fmt.format(x)


def _cell(text) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def to_markdown(report) -> str:
    """The profile table (also used by tools/gpu_summary.py); never raises on
    a partial or odd report."""
    rows = report.get("models") if isinstance(report, dict) else None
    rows = [r for r in rows if isinstance(r, dict)] if isinstance(rows, list) else []
    s = report.get("settings", {}) if isinstance(report, dict) else {}
    s = s if isinstance(s, dict) else {}
    lines = [f"Kernel set {s.get('kernel_set', '?')}, {str(s.get('precision', '?')).upper()}; host time: median of "
             f"{s.get('invokes', '?')} invokes after {s.get('warmup', '?')} warm-up (no profiling); GPU time: OpenCL "
             f"event time of {s.get('profile_invokes', '?')} invokes with TFLITE_GPU_PROFILE=1; cold first result: "
             "fresh process, no kernel cache, CUDA_CACHE_DISABLE=1 (Interpreter + first invoke).", "",
             "| model | launches / invoke | host ms / invoke | GPU ms / invoke | GPU µs / launch | host − GPU ms "
             "| µs / launch: queued→submit, submit→start, gap "
             "| cold first result s (Interpreter + first invoke) | top kernels (ms / invoke, launches) |",
             "|---|---:|---:|---:|---:|---:|---|---|---|"]
    errors = []
    for r in rows:
        name = _cell(r.get("model", "?"))
        err = r.get("error")
        if err is not None:
            err = err if isinstance(err, dict) else {"kind": "error", "message": str(err)}
            errors.append(f"- {name}: **{_cell(err.get('kind', 'error'))}**: {_cell(err.get('message', ''))[:400]}")
            lines.append(f"| {name} | **ERROR** ({_cell(err.get('kind', 'error'))}) | | | | | | | |")
            continue
        try:
            host = (r.get("host_ms") or {}).get("median")
            gpu = r.get("gpu") or {}
            gms = gpu.get("ms_per_invoke")
            top = ", ".join(f"{_cell(k.get('kernel'))} {k.get('ms_per_invoke', 0):.3f} "
                            f"({k.get('calls_per_invoke', 0):g})" for k in (gpu.get("kernels") or [])[:TOP])
            fr = r.get("first_result_s")
            iv = gpu.get("launch_intervals") or {}
            ivs = ", ".join(_num((iv.get(k) or {}).get("us_each"), "{:.1f}")
                            for k in ("queued_to_submit", "submit_to_start", "gap"))
            lines.append(
                f"| {name} | {r.get('dispatches', '–')} | {_num(host, '{:.3f}')} | {_num(gms, '{:.3f}')} | "
                f"{_num(gpu.get('us_per_launch'), '{:.1f}')} | "
                f"{_num(host - gms if host is not None and gms is not None else None, '{:.3f}')} | {ivs} | "
                f"{_num(fr)} ({_num(r.get('interpreter_s'))} + {_num(r.get('first_invoke_s'))}) | {top} |")
        except (TypeError, ValueError, AttributeError) as e:
            lines.append(f"| {name} | unreadable row ({_cell(e)}) | | | | | | | |")
    if not rows:
        lines.append("| (no model measured) | | | | | | | | |")
    ok = [r for r in rows if "error" not in r and isinstance(r.get("dispatches"), int)]
    if ok:
        try:
            lines += ["", f"{len(ok)} models: {sum(r['dispatches'] for r in ok)} launches per invoke in all; host "
                          f"{sum((r.get('host_ms') or {}).get('median') or 0 for r in ok):.2f} ms, GPU "
                          f"{sum((r.get('gpu') or {}).get('ms_per_invoke') or 0 for r in ok):.2f} ms per invoke of "
                          "each model in turn."]
        except (TypeError, ValueError):
            pass
    lines += _slowest_phases(ok)
    if errors:
        lines += ["", "Errors:", *errors]
    return "\n".join(lines)


def _slowest_phases(rows) -> list:
    """Per model whose VM phases were timed: their sum and the TOP slowest
    (kernel, TFLite node, work-items, µs per invoke)."""
    out = []
    for r in rows:
        try:
            timed = [p for p in (r.get("gpu") or {}).get("phases") or [] if p.get("us_per_invoke") is not None]
            if not timed:
                continue
            if not out:
                out = ["", "VM phases (persistent, stamped by the GPU's timer; each phase alone between two grid "
                       "barriers): their sum, then the slowest (kernel, TFLite node, work-items: µs per invoke)", ""]
            top = sorted(timed, key=lambda p: -p["us_per_invoke"])[:TOP]
            listing = "; ".join(f"{_cell(p['kernel'])} n{p.get('tflite_node', -1)} {p['work_items']}: "
                                f"{p['us_per_invoke']:.1f}" for p in top)
            out.append(f"- {_cell(r.get('model', '?'))}: {len(timed)} phases, "
                       f"{sum(p['us_per_invoke'] for p in timed) / 1e3:.3f} ms; {listing}")
        except (TypeError, ValueError, KeyError, AttributeError):
            continue
    return out


def _write(out: pathlib.Path, report) -> None:
    for name, text in (("profile.json", json.dumps(report, indent=1) + "\n"),
                       ("profile.md", "# GPU profile (tools/gpu_profile.py)\n\n" + to_markdown(report) + "\n")):
        tmp = out / f".{name}.part"
        tmp.write_text(text)
        tmp.replace(out / name)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["--child"]:
        return child_main(argv)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("models", nargs="*", help="model names or .tflite paths (default: the 14)")
    ap.add_argument("--out", default=".", help="directory for profile.json and profile.md (default .)")
    ap.add_argument("--kernel-set", default="gpu", help="kernel_set option (default gpu)")
    ap.add_argument("--precision", choices=("fp32", "fp16"), default="fp32")
    ap.add_argument("--opt", action="append", default=[], metavar="KEY=VALUE", help="extra delegate option")
    ap.add_argument("--threads", type=int, default=2, help="interpreter threads (the CPU's nodes; default 2)")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--invokes", type=int, default=20, help="timed invokes, no profiling (default 20)")
    ap.add_argument("--profile-invokes", type=int, default=10, help="profiled invokes (default 10)")
    ap.add_argument("--timeout-s", type=float, default=120, help="per model (default 120)")
    ap.add_argument("--deadline-s", type=float, default=0,
                    help="start no model after this many seconds (0: none); the rest are listed as skipped")
    args = ap.parse_args(argv)
    opts = {}
    for kv in args.opt:
        if "=" not in kv:
            ap.error(f"--opt expects KEY=VALUE, got {kv!r}")
        k, v = kv.split("=", 1)
        opts[k] = v
    if args.precision == "fp16":
        opts.setdefault("fp16_guard", "on")  # as the models step checks FP16
    args.opt = opts
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    try:
        import tflite_gpu  # noqa: F401 - the installed package, else this tree's
    except ImportError:
        sys.path.insert(0, str(ROOT / "python"))
    if not args.models:
        from tflite_gpu.models import MODELS

        args.models = sorted(MODELS)
    report = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "settings": {"kernel_set": args.kernel_set, "precision": args.precision, "options": opts,
                           "threads": args.threads, "warmup": args.warmup, "invokes": args.invokes,
                           "profile_invokes": args.profile_invokes},
              "models": []}
    t_start = time.monotonic()
    failed = skipped = False
    for name in args.models:
        t = time.monotonic()
        left = args.deadline_s - (t - t_start) if args.deadline_s > 0 else None
        if left is not None and left < 5:
            row = {"error": _error("skipped", "the deadline (--deadline-s) was reached")}
            skipped = True
        else:
            try:
                path = _resolve(name)
            except Exception as e:  # noqa: BLE001 - a model that cannot be found is a row, not the end
                row = {"error": _error("model", f"{type(e).__name__}: {e}")}
            else:
                row = measure(path, args, args.timeout_s if left is None else min(args.timeout_s, left))
        row = {"model": _stem(name), **row, "seconds": time.monotonic() - t}
        failed |= "error" in row
        report["models"].append(row)
        _write(out, report)
        if "error" in row:
            print(f"gpu_profile: {row['model']}: {row['error']['kind']}: {row['error']['message'][:300]}", flush=True)
        else:
            print(f"gpu_profile: {row['model']}: {row['dispatches']} launches, host "
                  f"{row['host_ms']['median']:.3f} ms, GPU {row['gpu']['ms_per_invoke']:.3f} ms per invoke, cold "
                  f"first result {row['first_result_s']:.2f} s ({row['seconds']:.1f} s)", flush=True)
    _write(out, report)
    print(to_markdown(report))
    return 124 if skipped else 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
