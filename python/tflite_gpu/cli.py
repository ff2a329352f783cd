"""python -m tflite_gpu / tflite-gpu: check, explain, tune, bench, models, devices,
ops (tune's work in cli_tune.py, bench's in cli_bench.py; the last three, which need
no model, in cli_info.py; the notes said before a long build in cli_notes.py).

Every command takes --help and --json (bench: --json PATH, or --json - for
stdout). With --json, stdout carries exactly one strict JSON document, the
result or {"error": {"exit_code", "kind", "message"}}. Exit codes, the same
for every command (errors.py; the README's table):
  0  success (check: every output within tolerance, or nothing delegated)
  1  check: an output is outside the tolerance (the delegate is wrong)
  2  bad usage: unknown command, argument, option value or delegate
     option; an unknown name for `models`; an output path that cannot be
     written; --png without matplotlib
  3  the delegate cannot run here: no OpenCL library, platform or usable
     device (or libgpu_delegate.so itself is missing)
  4  model problem: no such file or model name, not a TFLite model,
     malformed, too large for the memory, download failed, the CPU
     interpreter crashed on it, or neither the CPU interpreter nor the
     delegate can run it
  5  a failure of tflite-gpu: the delegate crashed on the model, the
     device's OpenCL compiler rejected one of its kernels (kind
     "kernel-build": tflite-gpu on that device and driver, not the model),
     or an unexpected internal error
A model only the delegate can run (MediaPipe custom ops) is checked FP32
against FP16 storage instead of against the CPU.

Several models (check A B, bench A B): every model is a row of its own and
a model that fails does not stop the others. `check --json` prints a list
with one row per model given, in order: its result, or {"model": PATH,
"error": {"exit_code", "kind", "message"}}; `bench` keeps every model's row
in the report, with a row-level "error" of the same shape when it failed
(bench.model_error). The exit code is then the worst of the models' codes:
the largest (5 > 4 > 1 > 0; errors.worst). Errors of the whole run (bad
usage or delegate option, no OpenCL, no library: errors.RUN_KINDS) still
end it with the single {"error": ...}. With a single model nothing changes:
check prints a list of one result, and a model that cannot be found, read
or checked (bench: found or read) is the single {"error": ...}, so existing
callers of `check MODEL --json` keep the document they know.
"""
from __future__ import annotations

import argparse
import contextlib
import math
import os
import pathlib
import sys

from . import __version__, cache_options, default_cache_dir, errors, isolate, resources, verify
from ._library import LibraryNotFound
from ._output import SafeStream, display, dumps
from .cli_bench import add_parser as add_bench_parser
from .cli_bench import cmd_bench as _cmd_bench
from .cli_info import cmd_devices, cmd_models, cmd_ops
from .cli_inputs import add_input_arguments, one_model_inputs, user_inputs
from .cli_notes import slow_build_note
from .cli_tune import DEFAULT_BUDGET
from .cli_tune import cmd_tune as _cmd_tune
from .errors import EXIT_CHECK_FAILED, EXIT_MODEL, EXIT_NO_OPENCL, EXIT_OK, EXIT_USAGE, CliError  # noqa: F401

EXIT_BUG = errors.EXIT_BUG


class _Parser(argparse.ArgumentParser):
    """argparse, with its errors raised as CliError (so --json reports them too)."""

    def error(self, message):
        e = CliError("usage", f"{message} (see {self.prog} --help)")
        e.prog = self.prog
        raise e


def _int_at_least(low: int):
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be >= {low}, got {value}")
        return value
    parse.__name__ = f"integer >= {low}"
    return parse


def _tolerance(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got {text}")
    return value


def _parse_opts(pairs):
    opts = {}
    for p in pairs or []:
        if "=" not in p:
            raise CliError("usage", f"--opt expects key=value, got {p!r}")
        k, v = p.split("=", 1)
        opts[k] = v
    return opts


def _resolve_model(name: str) -> pathlib.Path:
    """A path, or the bare name of a MediaPipe corpus model (fetched on demand)."""
    p = pathlib.Path(name)
    if p.exists() or p.is_symlink():
        return p
    from . import models

    stem = p.name[:-7] if p.name.endswith(".tflite") else p.name
    if stem in models.MODELS and str(p.parent) == ".":
        try:
            return models.model_path(stem)
        except (OSError, RuntimeError) as e:
            raise CliError("model", f"{name}: the MediaPipe model could not be fetched: {errors.reason(e)}") from e
    text = str(name)
    if text.endswith(".tflite") or os.sep in text or "/" in text:  # meant as a file: the names would be noise
        raise CliError("model", f"{display(name)}: no such file")
    raise CliError("model", f"{display(name)}: no such file, and not a MediaPipe model name "
                            f"({', '.join(sorted(models.MODELS))})")


def _verified(name: str, command: str, opts: dict | None, interpreters: int = 1, io_copies: int = 0):
    """The model's path, verified and checked to fit in memory (ModelError -> exit 4)."""
    path = _resolve_model(name)
    try:
        info = verify.verify_file(path)
        resources.check_fits(path, info, command, interpreters=interpreters, io_copies=io_copies,
                             delegate_options=opts)
    except verify.ModelError as e:
        raise CliError("model", str(e)) from e
    return path


def _need_opencl(hint: str = ""):
    reason = errors.opencl_error()
    if reason is not None:
        raise CliError("no-opencl", f"no OpenCL device: {reason}{hint}")


def _need_delegate(opts: dict):
    """Fails fast, before any model runs, when the delegate refuses these
    options (2) or finds no OpenCL device (3)."""
    from . import load_delegate

    _need_opencl()
    try:
        load_delegate(**{"log_level": "silent", **opts})
    except ValueError as e:
        raise errors.delegate_error(e) from e


def _note_slow_build(opts: dict, out) -> None:
    """Says once, before the run, when these options will compile for long on this device (cli_notes)."""
    note = slow_build_note(opts)
    if note:
        out.note(note)


def _run_isolated(job: str, path, args: dict):
    try:
        return isolate.run(job, args)
    except isolate.Crashed as e:
        raise e.cli_error(display(path)) from None
    except isolate.JobError as e:
        raise CliError(e.kind, str(e)) from None


# --------------------------------------------------------------------------
# Commands: each returns (exit code, the --json document or None)


def _cache_dir(args, opts):
    """--cache-dir, else the per-user default (made on first use), unless
    --no-cache or the options name a cache themselves; None: no cache."""
    if args.no_cache or "serialization_dir" in opts or "model_token" in opts:
        return None
    if args.cache_dir:
        try:  # made as the default one is (mode 0700: the delegate refuses a directory others can write to)
            os.makedirs(args.cache_dir, mode=0o700, exist_ok=True)
        except OSError as e:
            raise errors.CliError("usage", f"--cache-dir {args.cache_dir}: cannot make it: {e.strerror}") from e
        return args.cache_dir
    try:
        return default_cache_dir(create=True)
    except OSError:
        return None  # an unwritable home: run without the cache


def _check_one(name, args, opts, cache_dir):
    """One model of `check`: its CheckResult, or the CliError of why it
    could not be checked (errors of the whole run, errors.RUN_KINDS, are
    raised instead)."""
    from .check import CheckResult

    path = None
    try:
        path = _resolve_model(name)
        # The machine's memory here; the device's, bad options and OpenCL in the child (it creates the
        # delegate first).
        _verified(path, "check", None, io_copies=3)
        entries = user_inputs(args, path)
        model_opts = dict(opts, **cache_options(cache_dir, path)) if cache_dir else opts
        return path, CheckResult.from_dict(_run_isolated("check", path, dict(
            path=str(path), options=model_opts, seed=args.seed, rtol_l2=args.tolerance, invokes=args.invokes,
            bisect=args.bisect, user_inputs=entries)))
    except CliError as e:
        if e.kind in errors.RUN_KINDS:
            raise
        return path, e


def _shown(name, path) -> str:
    """A model's "model" in the rows: its path as the results show it, else the name as given."""
    return display(path if path is not None else name)


def cmd_check(args, out):
    """Every model in turn: its result, or its error (a row of its own, the
    others still run); the exit code is the worst of the models' codes
    (errors.worst). An error of the whole run (usage, no OpenCL) ends it.
    With a single model its error is the top-level error, as it always was."""
    from .check_text import format_result

    one_model_inputs(args)
    opts = _parse_opts(args.opt)
    cache_dir = _cache_dir(args, opts)
    _note_slow_build(opts, out)
    rows, codes, summary = [], [], []
    for name in args.model:
        path, r = _check_one(name, args, opts, cache_dir)
        if isinstance(r, CliError):
            if len(args.model) == 1:
                raise r
            shown = _shown(name, path)
            out.error(r)  # stderr, as the error of a single model always was
            rows.append(r.row(shown))
            codes.append(r.code)
            summary.append((f"ERROR ({r.kind}, exit {r.code})", shown))
            continue
        rows.append(r.to_dict())
        codes.append(EXIT_OK if r.passed else EXIT_CHECK_FAILED)
        summary.append((r.verdict, display(r.model)))
        out.text(format_result(r))
    if len(rows) > 1:
        width = max(len(v) for v, _ in summary)
        out.text("\n".join([f"summary: {len(rows)} models"] + [f"  {v:<{width}}  {m}" for v, m in summary]))
    return errors.worst(codes), rows


def cmd_explain(args, out):
    from .explain import format_explain

    opts = _parse_opts(args.opt)
    path = _verified(args.model, "explain", None)
    _note_slow_build(opts, out)
    report = _run_isolated("explain", path, dict(path=str(path), options=opts))
    report["model"] = display(path)
    report["show_passes"] = bool(args.passes)
    report["show_phases"] = bool(args.phases)
    out.text(format_explain(report))
    report.pop("show_passes")
    report.pop("show_phases")
    return EXIT_OK, report


def cmd_tune(args, out):
    _note_slow_build(_parse_opts(args.opt), out)
    return _cmd_tune(args, out, parse_opts=_parse_opts, cache_dir_of=_cache_dir, verified=_verified,
                     run_isolated=_run_isolated, need_delegate=_need_delegate)


def cmd_bench(args, out):
    return _cmd_bench(args, out, parse_opts=_parse_opts, resolve_model=_resolve_model, need_opencl=_need_opencl,
                      need_delegate=_need_delegate, slow_build_note=_note_slow_build)


# --------------------------------------------------------------------------
# Output


class _Out:
    """Where a command's output goes: text to stdout unless --json; notes
    and errors to stderr; the --json document at the end, exactly once."""

    def __init__(self, command: str, json_mode: str | None):
        self.command, self.json_mode = command, json_mode  # None, "stdout" or a file path
        self.late_error = None

    def text(self, s: str):
        if self.json_mode != "stdout" and s:
            print(s, flush=True)

    def note(self, s: str):
        print(s, file=sys.stderr, flush=True)

    def error(self, e: CliError):
        """The error of one model of a run that goes on (check A B): one line on stderr."""
        print(f"tflite-gpu {self.command}: {e.message}", file=sys.stderr, flush=True)

    def error_after_report(self, e: CliError):
        self.late_error = e


def _json_mode(argv) -> str | None:
    """From the raw arguments (they may not parse): "stdout", a path (bench
    --json PATH) or None."""
    argv = list(argv)
    command = next((a for a in argv if not a.startswith("-")), None)
    for i, a in enumerate(argv):
        if a == "--json" or a.startswith("--json="):
            if command != "bench":
                return "stdout"
            value = a[7:] if a.startswith("--json=") else (argv[i + 1] if i + 1 < len(argv) else "-")
            return "stdout" if value == "-" else value
    return None


@contextlib.contextmanager
def _stdout_reserved(json_mode):
    """With --json on stdout, anything else written to stdout while the
    command runs (by a library, in Python or in C) goes to stderr; the
    document is printed after this block."""
    if json_mode != "stdout":
        yield
        return
    document = sys.stdout
    saved_fd = None
    try:
        document.flush()
        saved_fd = os.dup(1)
        os.dup2(2, 1)
    except (OSError, ValueError):
        saved_fd = None
    sys.stdout = sys.stderr
    try:
        yield
    finally:
        sys.stdout = document
        if saved_fd is not None:
            with contextlib.suppress(OSError, ValueError):
                sys.stderr.flush()
            os.dup2(saved_fd, 1)
            os.close(saved_fd)


def _build_parser() -> argparse.ArgumentParser:
    ap = _Parser(
        prog="tflite-gpu", description="OpenCL GPU delegate for TensorFlow Lite",
        epilog="exit codes: 0 ok; 1 check failed (outputs outside tolerance); 2 bad usage, option or output path; "
               "3 no OpenCL device (or no library); 4 model problem (missing, not a valid model, too large, "
               "not runnable, or it crashed the CPU interpreter); 5 a failure of tflite-gpu (the delegate crashed, "
               "or the device's compiler rejected its kernels: kernel-build). With --json, errors are printed "
               "as {\"error\": {\"exit_code\", \"kind\", \"message\"}}; with several models, each model "
               "is a row (check --json: a list, one row per model, a failed one {\"model\", \"error\"}) and "
               "the exit code is the worst (largest) of theirs.")
    ap.add_argument("--version", action="version", version=f"tflite-gpu {__version__}")
    sub = ap.add_subparsers(dest="command", required=True)

    p = sub.add_parser("check", help="compare a model's outputs on the delegate with the CPU interpreter")
    p.add_argument("model", nargs="+", help="a .tflite path or a MediaPipe model name")
    p.add_argument("--opt", action="append", metavar="KEY=VALUE", help="delegate option (repeatable)")
    p.add_argument("--seed", type=_int_at_least(0), default=0,
                   help="seed of the first invoke's random inputs (the next ones: seed + 1, ...)")
    p.add_argument("--invokes", type=_int_at_least(1), default=3,
                   help="invokes on different inputs, each against the CPU, then the first input again (default 3)")
    p.add_argument("--bisect", action="store_true",
                   help="when an output differs: the first node (in execution order) whose output differs, and "
                        "the launch that computed it")
    p.add_argument("--tolerance", type=_tolerance, default=None,
                   help="relative L2 bound (default 1e-4, FP16 1e-2)")
    p.add_argument("--cache-dir", metavar="DIR",
                   help="kernel cache directory (serialization_dir; model_token from the model's bytes); "
                        "default $TFLITE_GPU_CACHE_DIR or $XDG_CACHE_HOME/tflite_gpu/kernels")
    p.add_argument("--no-cache", action="store_true", help="compile every program (no kernel cache)")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    add_input_arguments(p)
    p.set_defaults(fn=cmd_check)

    p = sub.add_parser("models", help="download the MediaPipe model corpus (sha256-checked) and list it")
    p.add_argument("names", nargs="*", help="models to fetch (default: all 14)")
    p.add_argument("--json", action="store_true", help="print {name: path} as JSON (no progress bars)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.set_defaults(fn=cmd_models)

    p = sub.add_parser("explain", help="per node: op, version, GPU or CPU and why; then the partitions")
    p.add_argument("model", help="a .tflite path or a MediaPipe model name")
    p.add_argument("--opt", action="append", metavar="KEY=VALUE", help="delegate option (repeatable)")
    p.add_argument("--json", action="store_true", help="print the nodes and partitions as JSON")
    p.add_argument("--passes", action="store_true",
                   help="also list the fusion passes in the order they run, with what each did on this model")
    p.add_argument("--phases", action="store_true",
                   help="also list the VM phases (execution=stepped|persistent): kernel, work-items, the grid's "
                        "groups each gives work to, and TFLite node")
    p.set_defaults(fn=cmd_explain)

    p = sub.add_parser("tune", help="time each partition's candidate policies on this device and remember the "
                                    "fastest (what load_delegate then runs)")
    p.add_argument("model", nargs="+", help="a .tflite path or a MediaPipe model name")
    p.add_argument("--budget", type=float, default=DEFAULT_BUDGET,
                   help=f"seconds one partition's tuning may take (default {DEFAULT_BUDGET:g}; 0 times nothing)")
    p.add_argument("--clear", action="store_true", help="forget the remembered policies instead (time nothing)")
    p.add_argument("--opt", action="append", metavar="KEY=VALUE", help="delegate option (repeatable)")
    p.add_argument("--cache-dir", metavar="DIR",
                   help="where the choice and the chosen programs are kept (default $TFLITE_GPU_CACHE_DIR or "
                        "$XDG_CACHE_HOME/tflite_gpu/kernels, where load_delegate with default options looks)")
    p.add_argument("--no-cache", action="store_true",
                   help="no kernel cache (the choice is still remembered, in the default directory)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true", help="print the reports as JSON")
    p.set_defaults(fn=cmd_tune)

    p = sub.add_parser("devices", help="list OpenCL devices: platform, version, memory, fp16, extensions")
    p.add_argument("--json", action="store_true", help="print the device list as JSON")
    p.set_defaults(fn=cmd_devices)

    p = sub.add_parser("ops", help="list the ops the delegate runs (from the library's op table)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--json", action="store_true", help="print the table as JSON")
    g.add_argument("--markdown", action="store_true", help="print the README's markdown table")
    p.set_defaults(fn=cmd_ops)

    add_bench_parser(sub, _int_at_least, cmd_bench)
    return ap


def _emit_json(document, json_mode) -> None:
    text = dumps(document)
    if json_mode == "stdout":
        print(text, flush=True)
    elif json_mode:
        try:
            pathlib.Path(json_mode).write_text(text + "\n")
        except OSError:  # the path itself was the problem: the document goes to stdout instead
            print(text, flush=True)


def _run(argv, json_mode):
    """(exit code, --json document or None) of one command line."""
    command = "tflite-gpu"
    try:
        args = _build_parser().parse_args(argv)
        command = f"tflite-gpu {args.command}"
        out = _Out(args.command, json_mode)
        code, document = args.fn(args, out)
        if out.late_error is not None:
            print(f"{command}: {out.late_error.message}", file=sys.stderr)
        return code, document
    except CliError as e:
        error = e
        command = getattr(e, "prog", command)
    except LibraryNotFound as e:
        error = CliError("no-library", str(e))
    except Exception as e:  # noqa: BLE001 - never a traceback: a bug, said as such
        if os.environ.get("TFLITE_GPU_DEBUG"):
            import traceback
            traceback.print_exc()
        error = CliError("internal", f"internal error ({type(e).__name__}: {errors.reason(e)}); this is a bug in "
                                     "tflite-gpu, please report it (TFLITE_GPU_DEBUG=1 shows the traceback)")
    print(f"{command}: {error.message}", file=sys.stderr, flush=True)
    return error.code, error.to_dict()


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    json_mode = _json_mode(argv)
    real_out, real_err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = SafeStream(real_out), SafeStream(real_err)
    try:
        with _stdout_reserved(json_mode):
            code, document = _run(argv, json_mode)
        if json_mode and document is not None:
            _emit_json(document, json_mode)
        return code
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        sys.stdout, sys.stderr = real_out, real_err


if __name__ == "__main__":
    sys.exit(main())
