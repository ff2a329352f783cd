"""`tflite-gpu bench MODEL...`: its arguments, the output paths checked
before anything runs, and the report printed and written (bench.py runs
the benchmark). cli.py hands in the helpers it shares with the other
commands, as for tune (cli_tune.py)."""
from __future__ import annotations

import os
import pathlib
import tempfile

from . import errors
from ._output import display
from .cli_inputs import add_input_arguments, one_model_inputs, user_inputs
from .errors import EXIT_OK, CliError

# --quick: enough timed invokes for a median and p90 (MIN_SAMPLES), no first-result processes.
QUICK_WARMUP, QUICK_ITERATIONS = 1, 5
MIN_SAMPLES = 5  # fewer timed invokes than this: the median and p90 say little, and bench warns


def add_parser(sub, int_at_least, fn):
    from .bench_setup import DEFAULT_ITERATIONS, DEFAULT_WARMUP

    p = sub.add_parser("bench", help="benchmark models: CPU XNNPACK, CPU builtin, delegate FP32 and FP16, interleaved")
    p.add_argument("model", nargs="+", help="a .tflite path or a MediaPipe model name")
    p.add_argument("--quick", action="store_true",
                   help=f"a short run: {QUICK_WARMUP} warm-up and {QUICK_ITERATIONS} timed invokes per configuration "
                        "(unless --warmup/--iterations say otherwise), no time-to-first-result processes")
    p.add_argument("--warmup", type=int_at_least(0), default=None,
                   help=f"untimed invokes per configuration (default {DEFAULT_WARMUP})")
    p.add_argument("--iterations", type=int_at_least(1), default=None,
                   help=f"timed invokes per configuration (default {DEFAULT_ITERATIONS}; under {MIN_SAMPLES} the "
                        "median and p90 rest on too few samples, and bench says so)")
    p.add_argument("--configs", default="xnnpack,builtin,fp32,fp16",
                   help="comma-separated subset of xnnpack,builtin,fp32,fp16 (default all)")
    p.add_argument("--threads", type=int_at_least(1), default=None,
                   help="CPU interpreter threads (default: the cores)")
    p.add_argument("--opt", action="append", metavar="KEY=VALUE", help="extra delegate option (repeatable)")
    p.add_argument("--profile", action="store_true", help="list the top kernels by OpenCL event time")
    p.add_argument("--top", type=int_at_least(0), default=10,
                   help="kernels listed per model with --profile (default 10)")
    p.add_argument("--no-first-result", action="store_true", help="skip the time-to-first-result processes")
    p.add_argument("--no-warm", action="store_true", help="skip the warm (PoCL kernel cache) first result")
    p.add_argument("--cache-dir", metavar="DIR",
                   help="also time the first result with the delegate's kernel cache in DIR (written, then loaded)")
    p.add_argument("--seed", type=int_at_least(0), default=0, help="seed of the random inputs")
    p.add_argument("--json", metavar="PATH", help="write the full results as JSON to PATH ('-': stdout, "
                                                  "instead of the markdown report)")
    p.add_argument("--markdown", metavar="PATH", help="write the markdown report")
    p.add_argument("--png", metavar="PATH", help="write a bar chart of latency ratios to XNNPACK (matplotlib)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_input_arguments(p)
    p.set_defaults(fn=fn)
    return p


def check_output_path(path, flag: str) -> None:
    """CliError (usage) unless a file can be written at `path`: checked
    before a long run, not after it. Its folder must exist (a typo there
    is not taken as a folder to make)."""
    p = pathlib.Path(path)
    shown = display(p)
    if p.is_dir():
        raise CliError("usage", f"{flag} {shown}: is a directory")
    if p.exists():
        try:
            open(p, "ab").close()  # writable, and nothing truncated
        except OSError as e:
            raise CliError("usage", f"{flag} {shown}: cannot be written: {e.strerror}") from e
        return
    parent = p.absolute().parent
    if not parent.exists():
        above = parent
        while not above.exists() and above != above.parent:
            above = above.parent
        if not above.is_dir():
            raise CliError("usage", f"{flag} {shown}: {display(above)} is not a directory")
        raise CliError("usage", f"{flag} {shown}: the folder {display(parent)} does not exist")
    if not parent.is_dir():
        raise CliError("usage", f"{flag} {shown}: {display(parent)} is not a directory")
    try:
        fd, probe = tempfile.mkstemp(dir=parent, prefix=".tflite-gpu-probe-")
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise CliError("usage", f"{flag} {shown}: cannot write in {display(parent)}: {e.strerror}") from e


def few_samples(report: dict) -> str | None:
    """The warning for configurations whose median and p90 rest on fewer
    than MIN_SAMPLES timed invokes, else None."""
    from .bench import LABELS

    few = sorted({(cr["iterations"], LABELS.get(c, c)) for m in report["models"]
                  for c, cr in m.get("configs", {}).items() if cr.get("median_ms") and
                  0 < cr.get("iterations", MIN_SAMPLES) < MIN_SAMPLES})
    if not few:
        return None
    n = min(k for k, _ in few)
    which = ", ".join(dict.fromkeys(label for _, label in few))
    return (f"warning: the median and p90 of {which} rest on {n} timed invoke(s), fewer than {MIN_SAMPLES}: "
            f"use --iterations {MIN_SAMPLES} or more for numbers worth comparing")


def cmd_bench(args, out, *, parse_opts, resolve_model, need_opencl, need_delegate, slow_build_note):
    from . import bench, verify
    from .bench_setup import DEFAULT_ITERATIONS, DEFAULT_WARMUP

    one_model_inputs(args)
    configs = [c.strip() for c in args.configs.split(",") if c.strip()]
    bad = [c for c in configs if c not in bench.CONFIGS]
    if bad or not configs:
        raise CliError("usage", f"--configs: unknown configuration(s) {', '.join(bad) or '(none given)'}: "
                                f"choose from {','.join(bench.CONFIGS)}")
    json_path = None if args.json in (None, "-") else args.json
    for flag, value in (("--json", json_path), ("--markdown", args.markdown), ("--png", args.png)):
        if value:
            check_output_path(value, flag)
    if args.png:
        problem = bench.chart_problem(configs)
        if problem:
            raise CliError("usage", problem)
    extra = parse_opts(args.opt)
    warmup = args.warmup if args.warmup is not None else (QUICK_WARMUP if args.quick else DEFAULT_WARMUP)
    iterations = args.iterations if args.iterations is not None else (
        QUICK_ITERATIONS if args.quick else DEFAULT_ITERATIONS)
    # A name that is neither a file nor a MediaPipe model is a row of its own (its error in the message at the
    # end); run_bench makes the rows of the files it cannot read or verify.
    # With a single model, one that cannot be found or read is the top-level error, as it always was.
    single = len(args.model) == 1
    resolved = []
    for name in args.model:
        try:
            resolved.append(resolve_model(name))
        except CliError as e:
            if e.kind in errors.RUN_KINDS or single:
                raise
            resolved.append(e)
    paths = [p for p in resolved if not isinstance(p, CliError)]
    entries = user_inputs(args, paths[0]) if single else []  # checked before anything runs
    if any(c in bench.DELEGATE_CONFIGS for c in configs):
        need_opencl("; benchmark the CPU alone with --configs xnnpack,builtin")
        need_delegate(extra)
        slow_build_note(extra, out)
    try:
        report = bench.run_bench(paths, configs=configs, warmup=warmup, iterations=iterations,
                                 threads=args.threads, extra_options=extra,
                                 first_result=not (args.no_first_result or args.quick),
                                 warm_first_result=not (args.no_warm or args.quick), profile=args.profile,
                                 top=args.top, seed=args.seed, progress=not args.no_progress,
                                 cache_dir=args.cache_dir, bad_model_rows=not single, user_inputs=entries)
    except verify.ModelError as e:  # a single model (bad_model_rows=False)
        raise CliError("model", str(e)) from e
    except ValueError as e:
        raise CliError("usage", str(e)) from e
    rows = iter(report["models"])
    report["models"] = [next(rows) if not isinstance(p, CliError) else
                        bench._failed_model(name, None, configs, p.message, kind=p.kind)
                        for name, p in zip(args.model, resolved)]
    for p in bench.write_outputs(report, json_path, args.markdown, args.png, warn=out.note):
        out.note(f"wrote {display(p)}")
    out.text(bench.to_markdown(report))
    for m in report["models"]:
        for c, cr in m["configs"].items():
            if cr.get("status") == "error" and not m.get("crash") and m.get("cpu_reference") is not None:
                out.note(f"{m['model']}: {bench.LABELS[c]} failed: {cr.get('error')}")
    warning = few_samples(report)
    if warning:
        out.note(warning)
    document = report if args.json == "-" else None  # --json PATH: written above
    # Every model must have run in at least one configuration, and the delegate's kernels must have built
    # (bench.model_error); the exit code is the worst of the models' codes.
    failed = [m for m in report["models"] if m.get("error")]
    if not failed:
        return EXIT_OK, document
    code = errors.worst(m["error"]["exit_code"] for m in failed)
    kind = next(m["error"]["kind"] for m in failed if m["error"]["exit_code"] == code)
    dead = [m for m in failed if not any(c.get("median_ms") for c in m["configs"].values())]
    partial = [m for m in failed if m not in dead]
    parts = []
    if dead:
        why = "; ".join(f"{m['model']}: {m.get('note') or 'no configuration ran'}" for m in dead)
        parts.append(f"no configuration could run {len(dead)} model(s) ({why})")
    if partial:
        why = "; ".join(m["error"]["message"] for m in partial)
        parts.append(f"{len(partial)} model(s) ran only in part ({why})")
    out.error_after_report(CliError(kind, "; ".join(parts)))
    return code, document
