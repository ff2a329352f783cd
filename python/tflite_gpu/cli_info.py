"""The commands that need no model: `models` (fetch and list the MediaPipe
corpus), `devices` (the OpenCL devices and what the selectors see of them)
and `ops` (the library's op table). cli.py parses the arguments and prints
each command's result; each returns (exit code, the --json document)."""
from __future__ import annotations

from . import _capi, errors
from .errors import EXIT_OK, CliError


def cmd_models(args, out):
    from . import models

    try:
        paths = models.fetch_models(args.names or None, progress=not args.json and not args.no_progress)
    except KeyError as e:
        raise CliError("usage", f"unknown model name {e.args[0]} (known: {', '.join(sorted(models.MODELS))})") from e
    except (OSError, RuntimeError) as e:
        raise CliError("model", f"the MediaPipe models could not be fetched: {errors.reason(e)}") from e
    out.text("\n".join(f"{k}\t{v}" for k, v in sorted(paths.items())))
    return EXIT_OK, {k: str(v) for k, v in paths.items()}


def devices_info() -> list:
    """The library's devices with the capabilities its selectors use."""
    return _capi.devices()


def _mib(n):
    return "?" if n is None else f"{n / 2**20:.0f} MiB"


def cmd_devices(args, out):
    try:
        devs = devices_info()
    except (RuntimeError, OSError) as e:
        raise CliError("no-opencl", f"no OpenCL device: {errors.reason(e)}") from e
    if not devs:
        raise CliError("no-opencl", "no OpenCL device: the OpenCL platforms expose no device")
    lines = []
    for d in devs:
        fp16 = "yes (cl_khr_fp16)" if d["fp16"] else "no: FP16 mode stores half, computes in float"
        lines.append(f"[{d['index']}] {d['name']} ({d['type']}, vendor {d['vendor_id']}: {d['vendor']})")
        lines.append(f"    platform     {d['platform']}")
        lines.append(f"    version      {d['version']}; driver {d['driver']}")
        lines.append(f"    memory       {d['global_mem_bytes'] / 2**30:.1f} GiB global, largest buffer "
                     f"{_mib(d.get('max_alloc_bytes'))}, local {d['local_mem_bytes'] / 1024:.0f} KiB"
                     + ("" if d["local_mem_dedicated"] else " (in global memory)"))
        lines.append(f"    compute      {d['compute_units']} units, work-groups up to {d['max_work_group_size']} "
                     f"({' x '.join(map(str, d['max_work_item_sizes']))}), preferred float vector "
                     f"{d['preferred_vector_float']}")
        lines.append(f"    fp16         {fp16}")
        lines.append(f"    features     subgroups {'yes' if d['subgroups'] else 'no'}, "
                     f"images {'yes' if d['images'] else 'no'}, command buffers {'yes' if d['command_buffer'] else 'no'}")
        lines.append(f"    kernel set   {d['kernel_set_auto']} (what kernel_set=auto picks here)")
        lines.append(f"    extensions   {' '.join(d['extensions']) or '(none reported)'}")
    out.text("\n".join(lines))
    return EXIT_OK, devs


def ops_markdown() -> str:
    """The README's op table, generated from the C library's op table."""
    rows = ["| op | versions | constraints |", "|---|---|---|"]
    for o in _capi.ops():
        rows.append(f"| {o['op']} | {o['versions']} | {o['constraints']} |")
    return "\n".join(rows)


def format_ops(table: list) -> str:
    """The op table as plain text: a header, then one row per op, columns
    as wide as their widest cell."""
    rows = [("op", "versions", "constraints")] + [(o["op"], f"v{o['versions']}", o["constraints"]) for o in table]
    w0, w1 = (max(len(r[k]) for r in rows) for k in (0, 1))
    return "\n".join(f"{a:<{w0}}  {b:<{w1}}  {c}".rstrip() for a, b, c in rows)


def cmd_ops(args, out):
    table = sorted(_capi.ops(), key=lambda o: o["op"])  # a stable order, whatever the library's table holds
    if args.markdown:
        out.text(ops_markdown())
    else:
        out.text(format_ops(table))
    return EXIT_OK, table
