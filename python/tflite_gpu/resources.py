"""Will a model fit? Its memory needs against the machine's and the OpenCL
device's memory, checked before anything is allocated, so that a model with
huge tensors is refused with the numbers instead of ending in MemoryError
or the kernel's OOM killer.

The need of one interpreter is a lower bound: the largest set of runtime
tensors (not constants, which stay in the mapped file) that one operator
needs at once, its inputs and outputs. A command adds what it keeps beside
the interpreters (check: the inputs and two sets of outputs as arrays)."""
from __future__ import annotations

import dataclasses
import pathlib

from ._output import display
from .verify import ModelError, ModelInfo

GIB = 2 ** 30


@dataclasses.dataclass(frozen=True)
class Need:
    bytes: int  # one interpreter's lower bound
    where: str  # what needs it: "operator 3 (CONV_2D)" or "the inputs of subgraph 0"
    tensors: tuple  # the verify.Tensor objects live at once
    io_bytes: int  # the main subgraph's inputs plus outputs


def _size(n: int) -> str:
    return f"{n / GIB:.2f} GiB" if n >= GIB // 10 else f"{n / 2**20:.1f} MiB"


def model_need(info: ModelInfo) -> Need:
    best = Need(0, "nothing", (), 0)
    for s, g in enumerate(info.subgraphs):
        groups = [(f"the inputs of subgraph {s}", g.inputs), (f"the outputs of subgraph {s}", g.outputs)]
        groups += [(f"subgraph {s} operator {op.index} ({op.op})", op.inputs + op.outputs) for op in g.operators]
        for where, ids in groups:
            live = tuple(g.tensors[t] for t in sorted(set(ids)) if t >= 0 and not g.tensors[t].data_bytes)
            total = sum(t.nbytes for t in live)
            if total > best.bytes:
                best = Need(total, where, live, 0)
    g = info.subgraphs[0]
    io = sum(g.tensors[t].nbytes for t in set(g.inputs) | set(g.outputs))
    return dataclasses.replace(best, io_bytes=io)


def machine_available() -> tuple:
    """(bytes this process can still allocate, where that number comes from):
    MemAvailable, or the cgroup's limit less its usage when that is lower."""
    best, source = None, "unknown"
    try:
        for line in pathlib.Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                best, source = int(line.split()[1]) * 1024, "MemAvailable in /proc/meminfo"
    except (OSError, ValueError, IndexError):
        pass
    v1 = "/sys/fs/cgroup/memory/memory."
    for limit, usage in (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                         (v1 + "limit_in_bytes", v1 + "usage_in_bytes")):
        try:
            text = pathlib.Path(limit).read_text().strip()
            if text == "max":
                continue
            left = int(text) - int(pathlib.Path(usage).read_text().strip())
        except (OSError, ValueError):
            continue
        if left > 0 and (best is None or left < best):
            best, source = left, f"the cgroup's memory limit ({limit})"
    return best, source


def device_memory(options: dict | None = None):
    """(global memory bytes, device name) of the OpenCL device the delegate
    would pick with these options, or None when that cannot be told."""
    from . import _capi

    try:
        devs = _capi.devices()
    except (RuntimeError, OSError, ValueError):
        return None
    if not devs:
        return None
    want = str((options or {}).get("device", (options or {}).get("gpu_device", ""))).strip()
    if want.isdigit():
        dev = next((d for d in devs if d["index"] == int(want)), None)
    elif want:
        dev = next((d for d in devs if want.lower() in d["name"].lower()), None)
    else:
        dev = next((d for d in devs if d["type"] == "GPU"), devs[0])
    return (dev["global_mem_bytes"], dev["name"]) if dev else None


def check_fits(path, info: ModelInfo, command: str, interpreters: int = 1, io_copies: int = 0,
               delegate_options: dict | None = None) -> Need:
    """Raises ModelError, with the numbers, when `command` would need more
    memory than the machine has available, or the delegate more than its
    device's global memory (delegate_options: None when no delegate runs)."""
    need = model_need(info)
    if not need.bytes:
        return need
    host = interpreters * need.bytes + io_copies * need.io_bytes
    what = " and ".join(f"{t.describe()} ({_size(t.nbytes)})" for t in need.tensors[:3])
    more = f" and {len(need.tensors) - 3} more" if len(need.tensors) > 3 else ""
    head = (f"{display(path)}: too large to run here: {need.where} needs {what}{more} in memory at once, "
            f"{_size(need.bytes)}")
    available, source = machine_available()
    if available is not None and host > available:
        extra = f"; `{command}` needs about {_size(host)} in all" if host != need.bytes else ""
        raise ModelError(f"{head}{extra}, but this machine has {_size(available)} available ({source})")
    if delegate_options is not None:
        dev = device_memory(delegate_options)
        if dev is not None and need.bytes > dev[0]:
            raise ModelError(f"{head}, but the OpenCL device '{dev[1]}' has {_size(dev[0])} of global memory")
    return need
