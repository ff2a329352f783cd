"""The tuned policy against the fixed ones, on this device: `tflite-gpu tune`
on the models (unless --no-tune), then, interleaved round by round in one
process, each model with its remembered policy and with each fixed policy
(kernels, persistent, persistent with the fine bodies and the GPU set's
tiles), XNNPACK beside them as the yardstick.

    python tools/bench_policy.py [--runs 2] [--rounds 7] [--iterations 10] [--instances 2] [--pause 0.05] [--budget 60]
                                 [--cache-dir DIR] [--no-tune] [--json FILE] [--markdown FILE] [MODEL ...]

MODEL: MediaPipe names or .tflite paths (default: all 14). The fixed
policies run with nothing remembered (an empty cache directory) and no
kernel cache; the tuned one with the directory the tuning wrote (its kernel
cache too, as an application after `tflite-gpu tune` has it).

Each configuration is built --instances times (one interpreter can run 10-15%
off another of the same configuration for its whole life on a shared CPU
host; --diagnose shows it). Prints per model and run the best median invoke
of each configuration over its instances and rounds, the tuned one over
the fastest fixed one (the median over rounds of their ratio within a
round), and per run the geomean of the tuned
over the best single fixed policy (the one of lowest geomean) and the
worst model. --gate exits 1 when a model is more than 5% slower tuned than
the fastest fixed policy in every run, or the geomean is over 1.00 in
every run.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "tools"))

from bench_ab import _interpreter, _median_ms, environment, geomean, resolve_models  # noqa: E402

FIXED = {
    "kernels": {"execution": "kernels"},
    "persistent": {"execution": "persistent"},
    "persistent-tiles": {"execution": "persistent", "policy": "vm_fine=1,vm_group_bodies=1,vm_tiles=1"},
}


def tune(paths, cache_dir, budget) -> float:
    """`tflite-gpu tune` on every model into cache_dir; its seconds."""
    t = time.perf_counter()
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    r = subprocess.run([sys.executable, "-m", "tflite_gpu", "tune", *map(str, paths), "--budget", f"{budget:g}",
                        "--cache-dir", str(cache_dir), "--no-progress"], env=env, text=True, capture_output=True)
    print(r.stdout, end="", flush=True)
    if r.returncode:
        raise SystemExit(f"bench_policy.py: tflite-gpu tune failed (exit {r.returncode}): {r.stderr[-2000:]}")
    return time.perf_counter() - t


def ran_as(it) -> str:
    """How an interpreter's partitions ran: each one's execution, and [measured] where the
    remembered policy chose it."""
    from tflite_gpu import _capi

    out = []
    for p in _capi.delegate_stats(it.gd_delegate._get_native_delegate_pointer())["policies"]:
        e = p.get("execution", {})
        out.append(f"{e.get('value')}" + (" [measured]" if e.get("source") == "measured" else ""))
    return "+".join(out)


def diagnostic_interpreters(path, cache_dir, empty_dir) -> dict:
    """--diagnose: what separates the tuned interpreter from the fixed one on the same policy: a second
    plain `kernels` one (built later), `kernels` built from cached binaries, and the remembered policy
    compiled from source (no serialization, so no binaries)."""
    import tflite_gpu

    out = {}
    plain = {"log_level": "silent", "execution": "kernels"}
    with environment([f"TFLITE_GPU_CACHE_DIR={empty_dir}"]):
        out["kernels-again"] = _interpreter(path, tflite_gpu.library_path(), plain)
        binaries = tempfile.mkdtemp(prefix="bench-policy-bin-")
        _interpreter(path, tflite_gpu.library_path(), {**plain, **tflite_gpu.cache_options(binaries, path)})
        out["kernels-binaries"] = _interpreter(path, tflite_gpu.library_path(),
                                               {**plain, **tflite_gpu.cache_options(binaries, path)})
    with environment([f"TFLITE_GPU_CACHE_DIR={cache_dir}"]):
        out["tuned-source"] = _interpreter(path, tflite_gpu.library_path(), {"log_level": "silent"})
    return out


def configurations(path, reference, args, cache_dir, empty_dir) -> dict:
    """One interpreter of each configuration: XNNPACK, the tuned policy (remembered in cache_dir, with its
    kernel cache) and the fixed ones (nothing remembered)."""
    import tflite_gpu

    its = {"xnnpack": _interpreter(path, threads=args.threads)} if reference else {}
    with environment([f"TFLITE_GPU_CACHE_DIR={cache_dir}"]):
        its["tuned"] = _interpreter(path, tflite_gpu.library_path(),
                                    {"log_level": "silent", **tflite_gpu.cache_options(cache_dir, path)})
    with environment([f"TFLITE_GPU_CACHE_DIR={empty_dir}"]):
        for label, opts in FIXED.items():
            its[label] = _interpreter(path, tflite_gpu.library_path(), {"log_level": "silent", **opts})
    if args.diagnose:
        its.update(diagnostic_interpreters(path, cache_dir, empty_dir))
    return its


def measure(models, args, cache_dir, empty_dir) -> dict:

    rows = {}
    for name, path, reference in models:
        # Several interpreters a configuration, built in turn: on a shared CPU host one interpreter can run
        # 10-15% off another of the same configuration for its whole life (buffers' placement, the
        # runtime's threads); each configuration's time is the best of its instances.
        instances = [configurations(path, reference, args, cache_dir, empty_dir) for _ in range(args.instances)]
        for its in instances:
            for it in its.values():
                for _ in range(3):
                    it.invoke()
        # A configuration far slower than the fastest fixed one cannot be the fastest: fewer invokes a
        # sample (persistent with tiles takes 20-50x kernels' time on Intel's runtime).
        warm = {k: _median_ms(it, 1) for k, it in instances[0].items()}
        fastest_warm = min(warm[k] for k in FIXED)
        invokes = {k: 3 if warm[k] > 3 * fastest_warm else args.iterations for k in warm}
        ran = {k: ran_as(it) for k, it in instances[0].items() if k != "xnnpack"}
        if "measured" not in ran["tuned"]:
            print(f"bench_policy.py: {name}: nothing remembered was used ({ran['tuned']}): was it tuned into "
                  f"{cache_dir}?", file=sys.stderr)
        # Per round, each configuration's median (the best of its instances); the ms columns are the best
        # round's, the ratios the median over rounds of the ratio within a round, so that load that
        # comes and goes between rounds cancels.
        per_round = {k: [] for k in instances[0]}
        order = [(k, i) for i in range(len(instances)) for k in instances[0]]
        for r in range(args.rounds):
            this = {k: math.inf for k in per_round}
            for k, i in order[r % len(order):] + order[:r % len(order)]:  # each one takes its turn first
                # A pause first: a runtime's worker threads spin for a while after an invoke (XNNPACK's
                # pool, an OpenCL CPU runtime's), and without it whatever runs next pays for them
                # (on Intel's runtime the configuration after XNNPACK ran 1.3-1.6x slower).
                time.sleep(args.pause)
                this[k] = min(this[k], _median_ms(instances[i][k], invokes[k]))
            for k, v in this.items():
                per_round[k].append(v)
        best = {k: min(v) for k, v in per_round.items()}
        rows[name] = dict(best, ran=ran, rounds=per_round)
        fastest = min(FIXED, key=lambda k: best[k])
        print(f"{name:34s} " + "  ".join(f"{k} {v:7.2f}" for k, v in best.items()) +
              f"  tuned/fastest fixed ({fastest}) {paired(rows[name], 'tuned', fastest):5.3f}  tuned ran "
              f"{ran['tuned']}", flush=True)
        del instances
    return rows


def paired(row, a, b) -> float:
    """a's time over b's: the median over rounds of the ratio within each round."""
    return statistics.median(x / y for x, y in zip(row["rounds"][a], row["rounds"][b]))


def fastest_fixed(row) -> str:
    return min(FIXED, key=lambda k: row[k])


def summary(rows) -> dict:
    single = {k: geomean(paired(b, "tuned", k) for b in rows.values()) for k in FIXED}
    best_single = min(single, key=lambda k: geomean(b[k] for b in rows.values()))
    ratios = {m: paired(b, "tuned", fastest_fixed(b)) for m, b in rows.items()}
    worst = max(ratios.items(), key=lambda kv: kv[1])
    return {"tuned_over_best_single": single[best_single], "best_single": best_single, "tuned_over": single,
            "worst": worst, "ratios": ratios}


def markdown(runs) -> str:
    labels = ["xnnpack", "tuned", *FIXED]
    head = ["model", "tuned ran"] + [f"{k} (ms, run {i + 1})" for i in range(len(runs)) for k in labels] + \
           [f"tuned / fastest fixed (run {i + 1})" for i in range(len(runs))]
    out = ["| " + " | ".join(head) + " |", "|---|---" + "|---:" * (len(head) - 2) + "|"]
    for m in runs[0]:
        cells = [m, runs[0][m]["ran"]["tuned"]] + [f"{run[m][k]:.2f}" if k in run[m] else "–" for run in runs for k in labels]
        cells += [f"{paired(run[m], 'tuned', fastest_fixed(run[m])):.3f}" for run in runs]
        out.append("| " + " | ".join(cells) + " |")
    for i, run in enumerate(runs):
        s = summary(run)
        out.append(f"\nRun {i + 1}: tuned / best single fixed policy ({s['best_single']}) "
                   f"**{s['tuned_over_best_single']:.3f}** (geomean over {len(run)}); worst model "
                   f"{s['worst'][0]} {s['worst'][1]:.3f} of its fastest fixed policy.")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    from tflite_gpu import models as corpus

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*")
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--iterations", type=int, default=10)
    ap.add_argument("--instances", type=int, default=2, help="interpreters a configuration (its best counts)")
    ap.add_argument("--pause", type=float, default=0.05, help="seconds idle before each sample")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--budget", type=float, default=60.0)
    ap.add_argument("--cache-dir", help="where the tuning is (or was) written; default: a new temporary one")
    ap.add_argument("--no-tune", action="store_true", help="measure what --cache-dir holds already")
    ap.add_argument("--gate", action="store_true")
    ap.add_argument("--diagnose", action="store_true",
                    help="also time kernels built again, kernels from cached binaries, the tuned policy from source")
    ap.add_argument("--json")
    ap.add_argument("--markdown")
    args = ap.parse_args(argv)
    model_list = resolve_models(args.models or list(corpus.MODELS))
    cache_dir = pathlib.Path(args.cache_dir or tempfile.mkdtemp(prefix="bench-policy-"))
    cache_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(cache_dir, 0o700)
    empty_dir = pathlib.Path(tempfile.mkdtemp(prefix="bench-policy-empty-"))
    tune_s = None if args.no_tune else tune([p for _, p, _ in model_list], cache_dir, args.budget)
    if tune_s is not None:
        print(f"tflite-gpu tune on {len(model_list)} models: {tune_s:.0f} s", flush=True)
    runs = []
    for i in range(args.runs):
        print(f"run {i + 1} of {args.runs} ({args.rounds} rounds x {args.iterations} invokes)", flush=True)
        runs.append(measure(model_list, args, cache_dir, empty_dir))
        s = summary(runs[-1])
        print(f"tuned / best single fixed ({s['best_single']}) {s['tuned_over_best_single']:.3f}; worst "
              f"{s['worst'][0]} {s['worst'][1]:.3f} of its fastest fixed", flush=True)
    slow = [m for m in runs[0] if all(summary(r)["ratios"][m] > 1.05 for r in runs)]
    geo_over = all(summary(r)["tuned_over_best_single"] > 1.0 for r in runs)
    ok = not slow and not geo_over
    print(f"gate: {'ok' if ok else 'FAIL'}: {len(slow)} model(s) more than 5% slower tuned than their fastest fixed "
          f"policy in every run{': ' + ', '.join(slow) if slow else ''}; geomean over 1.00 in every run: {geo_over}")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps({"tune_seconds": tune_s, "runs": runs, "rounds": args.rounds,
                                                       "instances": args.instances,
                                                       "iterations": args.iterations, "ok": ok}, indent=1) + "\n")
    if args.markdown:
        pathlib.Path(args.markdown).write_text(markdown(runs))
    return 1 if args.gate and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
