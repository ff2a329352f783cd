"""`tflite-gpu tune MODEL...`: ahead of time, each partition's candidate
policies timed on this device (the library's tuner, option tune=force:
kernels, persistent, the VM's bodies and grids, then the kernels'
work-group sizes), the fastest whose outputs agree with the first kept and
remembered in the cache directory, so that an application's later
`load_delegate` with default options builds only what was chosen and times
nothing. With the kernel cache on (the default here), the chosen programs
are cached too: the next start compiles nothing. `--clear` forgets what
was remembered (option tune=clear).

Each model runs in a child process (isolate.py), as check and explain do."""
from __future__ import annotations

import time

import numpy as np

from . import _capi, interpreters, isolate, resources, verify
from ._output import display
from .check import apply_delegate, as_cli_errors, load, model_source, random_inputs

DEFAULT_BUDGET = 60.0


def tune_model(model, options: dict) -> dict:
    """{"model", "seconds", "partitions": [explain's partition rows, each
    with its "policy"], "tuning": _capi.delegate_tuning's rows}: the
    delegate applied with these options (tune=force or clear), then one
    invoke on seeded inputs, after which the kernel cache writes its files."""
    import pathlib

    path = pathlib.Path(model)
    options = dict(options)
    options.setdefault("log_level", "silent")
    info = verify.verify_file(path)
    resources.check_fits(path, info, "tune", interpreters=1, delegate_options=options)
    source = model_source(path)
    isolate.phase("delegate:create")
    delegate = load(options)
    isolate.phase("delegate")
    t0 = time.perf_counter()
    it = apply_delegate(source, delegate, allocate=True)
    seconds = time.perf_counter() - t0
    ptr = delegate._get_native_delegate_pointer()
    interpreters.set_inputs(it, random_inputs(it.get_input_details(), 0))
    it.invoke()
    report = {"model": str(path), "seconds": seconds, "partitions": _capi.delegate_partitions(ptr),
              "tuning": _capi.delegate_tuning(ptr), "device": _capi.delegate_device(ptr)}
    del it
    return report


def isolated_tune(path, options):
    return as_cli_errors(path, lambda: tune_model(path, options))


def format_tune(report: dict, cleared: bool) -> str:
    """One block per model: per partition the candidates with their times,
    the one chosen, and why the others were not timed."""
    lines = [f"{display(report['model'])}: {len(report['partitions'])} partition(s), {report['seconds']:.1f} s"]
    if cleared:
        lines.append("  the remembered policies forgotten (tune=clear)")
        return "\n".join(lines)
    tuned = {r["partition"] for r in report["tuning"]}
    for i, p in enumerate(report["partitions"]):
        if i not in tuned:
            lines.append(f"  partition {i}: not tuned (nothing to time, or a budget of 0)")
            continue
        rows = [r for r in report["tuning"] if r["partition"] == i]
        lines.append(f"  partition {i}: {len(p['nodes'])} nodes, runs {p['execution']} ({p['launches']} launch(es))")
        for r in rows:
            t = f"{r['us'] / 1e3:9.3f} ms" if r["us"] is not None else "        -   "
            mark = "chosen " if r["chosen"] else "       "
            lines.append(f"    {mark}{r['candidate']:<30} {t}  {r['why']}".rstrip())
        measured = [k for k, v in p["policy"].items() if v["source"] == "measured"]
        if measured:
            lines.append(f"    remembered in {display(report.get('remembered_in', '?'))}: " +
                         ", ".join(f"{k}={p['policy'][k]['value']}" for k in measured))
    return "\n".join(lines)


def cmd_tune(args, out, *, parse_opts, cache_dir_of, verified, run_isolated, need_delegate):
    """Every model in turn (a tqdm bar over them); the tables, or with
    --json the reports. Exit 0 when every model was tuned."""
    from tqdm import tqdm

    from . import cache_options, default_cache_dir, errors

    opts = parse_opts(args.opt)
    if args.budget < 0:
        raise errors.CliError("usage", f"--budget must be >= 0, got {args.budget:g}")
    opts.update({"tune": "clear" if args.clear else "force", "tune_budget": f"{args.budget:g}"})
    cache_dir = cache_dir_of(args, opts)
    need_delegate(opts)
    rows, codes = [], []
    bar = tqdm(args.model, unit="model", disable=bool(out.json_mode) or args.no_progress, leave=False)
    for name in bar:
        bar.set_postfix_str(str(name)[-40:])
        try:
            path = verified(name, "tune", None)
            model_opts = dict(opts, **cache_options(cache_dir, path)) if cache_dir else opts
            report = run_isolated("tune", path, dict(path=str(path), options=model_opts))
            report["model"] = display(path)
            # Where the library keeps it: the kernel cache's directory, else its default (policy_store.c).
            report["remembered_in"] = cache_dir or default_cache_dir()
            rows.append(report)
            codes.append(errors.EXIT_OK)
            if not out.json_mode:
                bar.write(format_tune(report, args.clear))
        except errors.CliError as e:
            if e.kind in errors.RUN_KINDS or len(args.model) == 1:
                raise
            out.error(e)
            rows.append(e.row(display(name)))
            codes.append(e.code)
    return errors.worst(codes), rows
