"""python -m tflite_gpu / tflite-gpu: check, explain, bench, models, devices, ops.

Every command takes --help and --json (bench: --json PATH, or --json - for
stdout). Exit codes, the same for every command:
  0  success (check: every output within tolerance)
  1  check: an output is outside the tolerance (the delegate is wrong)
  2  bad usage: unknown command, argument or delegate option
  3  the delegate cannot run here: no OpenCL library, platform or usable
     device (or libgpu_delegate.so itself is missing)
  4  model problem: no such file or model name, download failed, or
     neither the CPU interpreter nor the delegate can run the model
A model only the delegate can run (MediaPipe custom ops) is checked FP32
against FP16 storage instead of against the CPU.
"""
from __future__ import annotations

import argparse
import json
import pathlib
import sys

from . import _capi, __version__, cache_options

EXIT_OK, EXIT_CHECK_FAILED, EXIT_USAGE, EXIT_NO_OPENCL, EXIT_MODEL = 0, 1, 2, 3, 4


class CliError(Exception):
    """A message for stderr and the exit code that goes with it."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code


def _opencl_error():
    """The reason no OpenCL device can be used, or None when one can."""
    try:
        _capi.devices()
    except RuntimeError as e:
        return str(e)
    return None


def _delegate_error(e: Exception) -> CliError:
    """load_delegate's ValueError: a bad option (2) or no OpenCL (3)."""
    reason = _opencl_error()
    if reason is not None:
        return CliError(EXIT_NO_OPENCL, f"no OpenCL device: {reason}")
    return CliError(EXIT_USAGE, str(e))


def _parse_opts(pairs):
    opts = {}
    for p in pairs or []:
        if "=" not in p:
            raise CliError(EXIT_USAGE, f"--opt expects key=value, got {p!r}")
        k, v = p.split("=", 1)
        opts[k] = v
    return opts


def _resolve_model(name: str) -> pathlib.Path:
    """A path, or the name of a MediaPipe corpus model (fetched on demand)."""
    p = pathlib.Path(name)
    if p.exists():
        return p
    from . import models

    stem = p.name[:-7] if p.name.endswith(".tflite") else p.name
    if stem in models.MODELS:
        try:
            return models.model_path(stem)
        except (OSError, RuntimeError) as e:
            raise CliError(EXIT_MODEL, f"{name}: {e}") from e
    raise CliError(EXIT_MODEL, f"{name}: no such file, and not a MediaPipe model name "
                               f"({', '.join(sorted(models.MODELS))})")


def cmd_check(args) -> int:
    from .check import check_model, format_result

    opts = _parse_opts(args.opt)
    results, failed = [], False
    for name in args.model:
        path = _resolve_model(name)
        try:
            model_opts = dict(opts, **cache_options(args.cache_dir, path)) if args.cache_dir else opts
            r = check_model(path, model_opts, seed=args.seed, rtol_l2=args.tolerance)
        except ValueError as e:  # the delegate refused its options or found no device
            raise _delegate_error(e) from e
        except RuntimeError as e:  # the interpreter could not run the model
            raise CliError(EXIT_MODEL, f"{name}: {e}") from e
        results.append(r)
        failed |= not r.passed
        if not args.json:
            print(format_result(r))
    if args.json:
        print(json.dumps([r.to_dict() for r in results], indent=2))
    return 1 if failed else 0


def cmd_models(args) -> int:
    from . import models

    names = args.names or None
    try:
        paths = models.fetch_models(names, progress=not args.json and not args.no_progress)
    except KeyError as e:
        raise CliError(EXIT_USAGE, f"{e.args[0]} (known: {', '.join(sorted(models.MODELS))})") from e
    except (OSError, RuntimeError) as e:
        raise CliError(EXIT_MODEL, str(e)) from e
    if args.json:
        print(json.dumps({k: str(v) for k, v in paths.items()}, indent=2))
    else:
        for k, v in sorted(paths.items()):
            print(f"{k}\t{v}")
    return 0


def devices_info() -> list:
    """The library's devices with the capabilities its selectors use."""
    return _capi.devices()


def _mib(n):
    return "?" if n is None else f"{n / 2**20:.0f} MiB"


def cmd_devices(args) -> int:
    try:
        devs = devices_info()
    except RuntimeError as e:
        raise CliError(EXIT_NO_OPENCL, f"no OpenCL device: {e}") from e
    if args.json:
        print(json.dumps(devs, indent=2))
        return 0
    for d in devs:
        fp16 = "yes (cl_khr_fp16)" if d["fp16"] else "no: FP16 mode stores half, computes in float"
        print(f"[{d['index']}] {d['name']} ({d['type']}, vendor {d['vendor_id']}: {d['vendor']})")
        print(f"    platform     {d['platform']}")
        print(f"    version      {d['version']}; driver {d['driver']}")
        print(f"    memory       {d['global_mem_bytes'] / 2**30:.1f} GiB global, largest buffer "
              f"{_mib(d.get('max_alloc_bytes'))}, local "
              + f"{d['local_mem_bytes'] / 1024:.0f} KiB" + ("" if d["local_mem_dedicated"] else " (in global memory)"))
        print(f"    compute      {d['compute_units']} units, work-groups up to {d['max_work_group_size']} "
              f"({' x '.join(map(str, d['max_work_item_sizes']))}), preferred float vector "
              f"{d['preferred_vector_float']}")
        print(f"    fp16         {fp16}")
        print(f"    features     subgroups {'yes' if d['subgroups'] else 'no'}, images {'yes' if d['images'] else 'no'}, "
              f"command buffers {'yes' if d['command_buffer'] else 'no'}")
        print(f"    kernel set   {d['kernel_set_auto']} (what kernel_set=auto picks here)")
        print(f"    extensions   {' '.join(d['extensions']) or '(none reported)'}")
    return 0


def ops_markdown() -> str:
    """The README's op table, generated from the C library's op table."""
    rows = ["| op | versions | constraints |", "|---|---|---|"]
    for o in _capi.ops():
        rows.append(f"| {o['op']} | {o['versions']} | {o['constraints']} |")
    return "\n".join(rows)


def cmd_ops(args) -> int:
    if args.json:
        print(json.dumps(_capi.ops(), indent=2))
    elif args.markdown:
        print(ops_markdown())
    else:
        for o in _capi.ops():
            print(f"{o['op']:<22} v{o['versions']:<5} {o['constraints']}")
    return 0


def cmd_explain(args) -> int:
    from . import load_delegate, runtime

    opts = _parse_opts(args.opt)
    opts.setdefault("log_level", "silent")
    path = _resolve_model(args.model)
    try:
        delegate = load_delegate(**opts)
    except ValueError as e:
        raise _delegate_error(e) from e
    # Delegation happens while the interpreter is built; the report holds
    # the decision for every node and the partitions that were built.
    try:
        it = runtime().Interpreter(model_path=str(path), experimental_delegates=[delegate])
    except (RuntimeError, ValueError) as e:
        raise CliError(EXIT_MODEL, f"{args.model}: {e}") from e
    ptr = delegate._get_native_delegate_pointer()
    nodes, parts = _capi.delegate_nodes(ptr), _capi.delegate_partitions(ptr)
    del it
    if args.json:
        print(json.dumps({"model": str(path), "nodes": nodes, "partitions": parts}, indent=2))
        return 0
    for n in nodes:
        print(f"{n['node']:>5}  {n['op']:<34} v{n['version']:<2} {n['where'].upper():<4} {n['reason']}")
    gpu = sum(n["where"] == "gpu" for n in nodes)
    print(f"\n{gpu} of {len(nodes)} nodes on the GPU in {len(parts)} partition(s)")
    for i, p in enumerate(parts):
        nodes_text = ",".join(map(str, p["nodes"][:12])) + (",..." if len(p["nodes"]) > 12 else "")
        print(f"  partition {i}: {len(p['nodes'])} nodes ({nodes_text}), {p['dispatches']} kernel launches per invoke")
    return 0


def cmd_bench(args) -> int:
    from . import bench

    configs = [c.strip() for c in args.configs.split(",") if c.strip()]
    paths = [_resolve_model(m) for m in args.model]
    to_stdout = args.json == "-"
    try:
        report = bench.run_bench(paths, configs=configs, warmup=args.warmup, iterations=args.iterations,
                                 threads=args.threads, extra_options=_parse_opts(args.opt),
                                 first_result=not args.no_first_result, warm_first_result=not args.no_warm,
                                 profile=args.profile, top=args.top, seed=args.seed, progress=not args.no_progress,
                                 cache_dir=args.cache_dir)
    except ValueError as e:
        raise CliError(EXIT_USAGE, f"bench: {e}") from e
    except RuntimeError as e:
        raise CliError(EXIT_MODEL, f"bench: {e}") from e
    json_path = None if to_stdout else args.json
    try:
        written = bench.write_outputs(report, json_path, args.markdown, args.png)
    except ImportError as e:
        print(f"bench: cannot write the chart ({e}); pip install matplotlib", file=sys.stderr)
        written = bench.write_outputs(report, json_path, args.markdown, None)
    if to_stdout:
        print(json.dumps(report, indent=2))
    else:
        print(bench.to_markdown(report))
    for p in written:
        print(f"wrote {p}", file=sys.stderr)
    ran = any(c.get("median_ms") for m in report["models"] for c in m["configs"].values())
    if ran:
        return EXIT_OK
    delegate_only = all(c in ("fp32", "fp16") for c in configs)
    if delegate_only and _opencl_error() is not None:
        raise CliError(EXIT_NO_OPENCL, f"bench: no OpenCL device: {_opencl_error()}")
    raise CliError(EXIT_MODEL, "bench: no configuration could run the model (see the notes above)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        prog="tflite-gpu", description="OpenCL GPU delegate for TensorFlow Lite",
        epilog="exit codes: 0 ok; 1 check failed (outputs outside tolerance); 2 bad usage or option; "
               "3 no OpenCL device (or no library); 4 model missing, not downloadable or not runnable on the CPU")
    ap.add_argument("--version", action="version", version=f"tflite-gpu {__version__}")
    sub = ap.add_subparsers(dest="command", required=True)

    p = sub.add_parser("check", help="compare a model's outputs on the delegate with the CPU interpreter")
    p.add_argument("model", nargs="+", help="a .tflite path or a MediaPipe model name")
    p.add_argument("--opt", action="append", metavar="KEY=VALUE", help="delegate option (repeatable)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    p.add_argument("--tolerance", type=float, default=None, help="relative L2 bound (default 1e-4, FP16 1e-2)")
    p.add_argument("--cache-dir", metavar="DIR",
                   help="kernel cache directory (serialization_dir; model_token from the model's bytes)")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
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
    p.set_defaults(fn=cmd_explain)

    p = sub.add_parser("devices", help="list OpenCL devices: platform, version, memory, fp16, extensions")
    p.add_argument("--json", action="store_true", help="print the device list as JSON")
    p.set_defaults(fn=cmd_devices)

    p = sub.add_parser("ops", help="list the ops the delegate runs (from the library's op table)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--json", action="store_true", help="print the table as JSON")
    g.add_argument("--markdown", action="store_true", help="print the README's markdown table")
    p.set_defaults(fn=cmd_ops)

    p = sub.add_parser("bench", help="benchmark models: CPU XNNPACK, CPU builtin, delegate FP32 and FP16, interleaved")
    p.add_argument("model", nargs="+", help="a .tflite path or a MediaPipe model name")
    p.add_argument("--warmup", type=int, default=3, help="untimed invokes per configuration (default 3)")
    p.add_argument("--iterations", type=int, default=30, help="timed invokes per configuration (default 30)")
    p.add_argument("--configs", default="xnnpack,builtin,fp32,fp16",
                   help="comma-separated subset of xnnpack,builtin,fp32,fp16 (default all)")
    p.add_argument("--threads", type=int, default=None, help="CPU interpreter threads (default: the cores)")
    p.add_argument("--opt", action="append", metavar="KEY=VALUE", help="extra delegate option (repeatable)")
    p.add_argument("--profile", action="store_true", help="list the top kernels by OpenCL event time")
    p.add_argument("--top", type=int, default=10, help="kernels listed per model with --profile (default 10)")
    p.add_argument("--no-first-result", action="store_true", help="skip the time-to-first-result processes")
    p.add_argument("--no-warm", action="store_true", help="skip the warm (PoCL kernel cache) first result")
    p.add_argument("--cache-dir", metavar="DIR",
                   help="also time the first result with the delegate's kernel cache in DIR (written, then loaded)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    p.add_argument("--json", metavar="PATH", help="write the full results as JSON to PATH ('-': stdout, "
                                                  "instead of the markdown report)")
    p.add_argument("--markdown", metavar="PATH", help="write the markdown report")
    p.add_argument("--png", metavar="PATH", help="write a bar chart of latency ratios to XNNPACK (matplotlib)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(fn=cmd_bench)

    args = ap.parse_args(argv)  # bad usage exits with 2 (EXIT_USAGE)
    try:
        return args.fn(args)
    except CliError as e:
        print(f"tflite-gpu {args.command}: {e}", file=sys.stderr)
        return e.code
    except FileNotFoundError as e:  # libgpu_delegate.so itself is missing
        print(f"tflite-gpu {args.command}: {e}", file=sys.stderr)
        return EXIT_NO_OPENCL


if __name__ == "__main__":
    sys.exit(main())
