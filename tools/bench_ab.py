"""A/B latency of two builds of libgpu_delegate.so (or two option sets) on
the same models, interleaved in one process, with XNNPACK as the yardstick.

Usage: python tools/bench_ab.py --a OLD.so --b NEW.so [--opt-a k=v] [--opt-b k=v]
                                [--env-a K=V] [--env-b K=V] [--rounds 7] [--iterations 10]
                                [--runs N] [--gate] [--tolerance 0.05]
                                [--json FILE] [--markdown FILE] [--label-a X] [--label-b Y]
                                [MODEL ...]

MODEL is a MediaPipe model name or a .tflite path; none: the 11 MediaPipe
models the CPU interpreter can run.

--env-a / --env-b set an environment variable while that side's interpreter
is made (the library reads its test hooks and the policy override when it
prepares a partition, e.g. TFLITE_GPU_FUSE_CHANNEL_SCALE=0 or
TFLITE_GPU_POLICY=fuse_dw_1x1=0), so one library can be its own baseline;
--opt-b policy=... overrides the policy's fields for one side alone.

Each round times every configuration of every model once (XNNPACK, A, B,
A and B in turns), so drift on a noisy machine hits all three alike; per
configuration the minimum over rounds of the median invoke is kept. Prints
per model the latencies, A / XNNPACK, B / XNNPACK and B / A, then the
geomeans and the worst model (the largest B / A): a geomean hides one
model that got slower.

--runs N repeats the whole interleaved run N times (new interpreters each
time). --gate is the regression check: two runs (or --runs) of at least 7
rounds each; it exits 1 when a model is more than --tolerance (5%) slower
in B than in A in every run. One run is noise on a shared 2-core machine,
two that agree are not. Exit 0 otherwise; 2 on bad usage.
"""
from __future__ import annotations

import argparse
import contextlib
import json
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

# The MediaPipe models with custom ops the CPU interpreter lacks: A and B only.
CUSTOM = ("face_landmark_with_attention", "selfie_segmentation", "selfie_segmentation_landscape")
GATE_MIN_ROUNDS = 7
GATE_MIN_RUNS = 2


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
    it.gd_delegate = delegate  # kept beside it, for what it ran (bench_policy.py)
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


def resolve_models(args_models):
    """[(name, path, has_cpu_reference)]: MediaPipe names fetched, paths as given."""
    wanted = args_models or [n for n in models.MODELS if n not in CUSTOM]
    names = [m for m in wanted if not m.endswith(".tflite")]
    unknown = [n for n in names if n not in models.MODELS]
    if unknown:
        raise SystemExit(f"bench_ab.py: not a MediaPipe model name or a .tflite path: {', '.join(unknown)}")
    fetched = models.fetch_models(names, progress=False) if names else {}
    out = []
    for m in wanted:
        if m.endswith(".tflite"):
            if not pathlib.Path(m).is_file():
                raise SystemExit(f"bench_ab.py: no such model file: {m}")
            out.append((pathlib.Path(m).stem, m, True))
        else:
            out.append((m, fetched[m], m not in CUSTOM))
    return out


def line(name, best):
    """One model's line (gpu_summary.py reads lines with ' ms  A ')."""
    x = best.get("xnnpack")
    vs = (f"xnnpack {x:7.2f} ms  A {best['A']:7.2f} ms  B {best['B']:7.2f} ms  A/xnn  {best['A'] / x:5.2f}  "
          f"B/xnn {best['B'] / x:5.2f}" if x else f"xnnpack     –      A {best['A']:7.2f} ms  B {best['B']:7.2f} ms")
    return f"{name:36s} {vs}  B/A {best['B'] / best['A']:5.2f}"


def measure(model_list, args, out=print):
    """One interleaved run: {model: {"xnnpack"?, "A", "B": best median ms}}."""
    rows = {}
    for name, path, reference in model_list:
        its = {"xnnpack": _interpreter(path, threads=args.threads)} if reference else {}
        with environment(args.env_a):
            its["A"] = _interpreter(path, args.a, _options(args.opt_a))
        with environment(args.env_b):
            its["B"] = _interpreter(path, args.b, _options(args.opt_b))
        for it in its.values():  # warm-up: first launches compile work-group functions
            for _ in range(3):
                it.invoke()
        best = {k: math.inf for k in its}
        for r in range(args.rounds):
            # A and B take turns going first, so neither always follows the other's caches.
            order = sorted(its, key=lambda k: {"xnnpack": 0, "A": 1 + r % 2, "B": 2 - r % 2}[k])
            for k in order:
                best[k] = min(best[k], _median_ms(its[k], args.iterations))
        rows[name] = best
        out(line(name, best), flush=True)
        del its
    return rows


def geomean(values):
    values = list(values)
    return math.exp(statistics.fmean(math.log(v) for v in values)) if values else math.nan


def summary(rows):
    """{"a_xnn", "b_xnn", "b_a", "worst": (model, B/A)} of one run."""
    ref = [b for b in rows.values() if "xnnpack" in b]
    ratios = {m: b["B"] / b["A"] for m, b in rows.items()}
    worst = max(ratios.items(), key=lambda kv: kv[1])
    return {"a_xnn": geomean(b["A"] / b["xnnpack"] for b in ref), "b_xnn": geomean(b["B"] / b["xnnpack"] for b in ref),
            "b_a": geomean(ratios.values()), "worst": worst}


def summary_line(rows):
    s = summary(rows)
    return (f"geomean over {len(rows)} models: A/xnnpack {s['a_xnn']:.3f}  B/xnnpack {s['b_xnn']:.3f}  "
            f"B/A {s['b_a']:.3f}  worst: {s['worst'][0]} B/A {s['worst'][1]:.3f}")


def slower_in_every_run(runs, tolerance):
    """The models whose B / A exceeds 1 + tolerance in every run, with those
    ratios: [(model, [B/A per run])]. A model missing from a run is not."""
    out = []
    for model in runs[0]:
        ratios = [run[model]["B"] / run[model]["A"] for run in runs if model in run]
        if len(ratios) == len(runs) and all(r > 1 + tolerance for r in ratios):
            out.append((model, ratios))
    return out


def gate_verdict(runs, tolerance):
    """(ok, text) of --gate over the runs."""
    bad = slower_in_every_run(runs, tolerance)
    pct = f"{tolerance * 100:g}%"
    if bad:
        names = "; ".join(f"{m} (B/A {', '.join(f'{r:.3f}' for r in rs)})" for m, rs in bad)
        return False, f"gate: FAIL: {len(bad)} model(s) more than {pct} slower in all {len(runs)} runs: {names}"
    worst = max(runs[0], key=lambda m: min(run[m]["B"] / run[m]["A"] for run in runs if m in run))
    rs = ", ".join(f"{run[worst]['B'] / run[worst]['A']:.3f}" for run in runs if worst in run)
    return True, (f"gate: ok: no model more than {pct} slower in all {len(runs)} runs "
                  f"(closest: {worst}, B/A {rs})")


def markdown(runs, label_a, label_b):
    """One table: per model XNNPACK, A and B of each run and B / A of each."""
    head = ["model"]
    for i in range(len(runs)):
        n = f", run {i + 1}" if len(runs) > 1 else ""
        head += [f"XNNPACK (ms{n})", f"{label_a} (ms{n})", f"{label_b} (ms{n})", f"B / A{n and f' ({n[2:]})'}"]
    out = ["| " + " | ".join(head) + " |", "|---" + "|---:" * (len(head) - 1) + "|"]
    for model in runs[0]:
        cells = [model]
        for run in runs:
            b = run.get(model)
            if b is None:
                cells += ["–"] * 4
                continue
            cells += [f"{b['xnnpack']:.2f}" if "xnnpack" in b else "–", f"{b['A']:.2f}", f"{b['B']:.2f}",
                      f"{b['B'] / b['A']:.3f}"]
        out.append("| " + " | ".join(cells) + " |")
    geo = ["**geomean**"]
    worst = ["**worst**"]
    for run in runs:
        s = summary(run)
        geo += ["", f"{s['a_xnn']:.3f} x XNNPACK", f"{s['b_xnn']:.3f} x XNNPACK", f"**{s['b_a']:.3f}**"]
        worst += ["", "", s["worst"][0], f"**{s['worst'][1]:.3f}**"]
    out += ["| " + " | ".join(geo) + " |", "| " + " | ".join(worst) + " |"]
    return "\n".join(out) + "\n"


def _output_file(p, flag):
    if p is None:
        return None
    path = pathlib.Path(p)
    if not path.parent.is_dir():
        raise SystemExit(f"bench_ab.py: {flag} {p}: folder {path.parent} does not exist")
    return path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", help="MediaPipe model names or .tflite paths")
    ap.add_argument("--a", required=True, help="library A (the baseline)")
    ap.add_argument("--b", required=True, help="library B")
    ap.add_argument("--opt-a", action="append", default=[])
    ap.add_argument("--opt-b", action="append", default=[])
    ap.add_argument("--env-a", action="append", default=[], help="K=V while A's interpreter is made")
    ap.add_argument("--env-b", action="append", default=[], help="K=V while B's interpreter is made")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--iterations", type=int, default=10)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=None, help="interleaved runs (default 1; --gate: 2)")
    ap.add_argument("--gate", action="store_true",
                    help=f"exit 1 when a model is more than --tolerance slower in every run "
                         f"(at least {GATE_MIN_RUNS} runs of {GATE_MIN_ROUNDS} rounds)")
    ap.add_argument("--tolerance", type=float, default=0.05, help="--gate's allowance (0.05: 5%%)")
    ap.add_argument("--json", help="write every run's numbers to this file")
    ap.add_argument("--markdown", help="write every run as one markdown table to this file")
    ap.add_argument("--label-a", default="A", help="A's name in the markdown table (a commit, say)")
    ap.add_argument("--label-b", default="B", help="B's name in the markdown table")
    args = ap.parse_args(argv)
    runs_wanted = args.runs if args.runs is not None else (GATE_MIN_RUNS if args.gate else 1)
    if runs_wanted < 1 or args.rounds < 1 or args.iterations < 1:
        ap.error("--runs, --rounds and --iterations must be at least 1")
    if args.gate and (runs_wanted < GATE_MIN_RUNS or args.rounds < GATE_MIN_ROUNDS):
        ap.error(f"--gate needs at least {GATE_MIN_RUNS} runs of {GATE_MIN_ROUNDS} rounds "
                 f"(got {runs_wanted} of {args.rounds}): one short run is noise here")
    if not 0 <= args.tolerance < 1:
        ap.error("--tolerance must be in [0, 1)")
    for side in ("a", "b"):
        if not pathlib.Path(getattr(args, side)).is_file():
            ap.error(f"--{side} {getattr(args, side)}: no such library")
    json_path, md_path = _output_file(args.json, "--json"), _output_file(args.markdown, "--markdown")
    model_list = resolve_models(args.models)
    runs = []
    for i in range(runs_wanted):
        if runs_wanted > 1:
            print(f"run {i + 1} of {runs_wanted} ({args.rounds} rounds x {args.iterations} invokes)", flush=True)
        runs.append(measure(model_list, args))
        print(summary_line(runs[-1]), flush=True)
    ok, verdict = gate_verdict(runs, args.tolerance)
    if args.gate or runs_wanted > 1:
        print(verdict)
    if json_path:
        json_path.write_text(json.dumps({"a": args.a, "b": args.b, "opt_a": args.opt_a, "opt_b": args.opt_b,
                                         "env_a": args.env_a, "env_b": args.env_b, "rounds": args.rounds,
                                         "iterations": args.iterations, "threads": args.threads,
                                         "runs": runs, "summaries": [summary(r) for r in runs],
                                         "gate": {"tolerance": args.tolerance, "ok": ok, "text": verdict}},
                                        indent=1) + "\n")
    if md_path:
        md_path.write_text(markdown(runs, args.label_a, args.label_b))
    return 1 if args.gate and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
