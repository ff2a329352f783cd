"""python -m tflite_gpu / tflite-gpu: check, models, devices, ops.

Exit codes: 0 success (check: every output within tolerance), 1 a check
failed, 2 bad usage or the command could not run (no OpenCL, bad option,
a model the CPU cannot run).
"""
from __future__ import annotations

import argparse
import json
import pathlib
import sys

from . import _capi, __version__


def _parse_opts(pairs):
    opts = {}
    for p in pairs or []:
        if "=" not in p:
            raise SystemExit(f"--opt expects key=value, got {p!r}")
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
        return models.model_path(stem)
    raise SystemExit(f"{name}: no such file, and not a MediaPipe model name ({', '.join(sorted(models.MODELS))})")


def cmd_check(args) -> int:
    from .check import check_model, format_result

    opts = _parse_opts(args.opt)
    results, failed = [], False
    for name in args.model:
        try:
            r = check_model(_resolve_model(name), opts, seed=args.seed, rtol_l2=args.tolerance)
        except (RuntimeError, ValueError) as e:
            print(f"{name}: {e}", file=sys.stderr)
            return 2
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
    paths = models.fetch_models(names, progress=not args.json)
    if args.json:
        print(json.dumps({k: str(v) for k, v in paths.items()}, indent=2))
    else:
        for k, v in sorted(paths.items()):
            print(f"{k}\t{v}")
    return 0


def cmd_devices(args) -> int:
    try:
        devs = _capi.devices()
    except RuntimeError as e:
        print(f"no OpenCL device: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(devs, indent=2))
        return 0
    for d in devs:
        print(f"[{d['index']}] {d['name']} ({d['type']}) on {d['platform']}: {d['version']}, driver {d['driver']}, "
              f"{d['global_mem_bytes'] / 2**30:.1f} GiB, fp16 {'yes' if d['fp16'] else 'no (storage via vload_half)'}")
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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="tflite-gpu", description="OpenCL GPU delegate for TensorFlow Lite")
    ap.add_argument("--version", action="version", version=f"tflite-gpu {__version__}")
    sub = ap.add_subparsers(dest="command", required=True)

    p = sub.add_parser("check", help="compare a model's outputs on the delegate with the CPU interpreter")
    p.add_argument("model", nargs="+", help="a .tflite path or a MediaPipe model name")
    p.add_argument("--opt", action="append", metavar="KEY=VALUE", help="delegate option (repeatable)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    p.add_argument("--tolerance", type=float, default=None, help="relative L2 bound (default 1e-4, FP16 1e-2)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_check)

    p = sub.add_parser("models", help="download the MediaPipe model corpus (sha256-checked) and list it")
    p.add_argument("names", nargs="*", help="models to fetch (default: all 14)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_models)

    p = sub.add_parser("devices", help="list OpenCL devices")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_devices)

    p = sub.add_parser("ops", help="list the ops the delegate runs (from the library's op table)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--json", action="store_true")
    g.add_argument("--markdown", action="store_true")
    p.set_defaults(fn=cmd_ops)

    args = ap.parse_args(argv)
    return args.fn(args)


if __name__ == "__main__":
    sys.exit(main())
