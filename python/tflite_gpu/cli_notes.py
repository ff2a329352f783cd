"""Notes the CLI says once on stderr before a command starts: a build that
will take long on this device (the GPU kernel set on a CPU OpenCL device)."""
from __future__ import annotations

import os

from . import _capi, resolved


def _policy_field(text: str, name: str) -> str | None:
    """The value of `name` in a policy string ("field=value,..."), else None."""
    for item in filter(None, (text or "").split(",")):
        key, _, value = item.partition("=")
        if key.strip() == name:
            return value.strip()
    return None


def chosen_device(selector: str, devices: list) -> dict | None:
    """The device the library picks for option device=selector (cl_device.c
    pick): an index, else the first whose "platform name" contains it (any
    case); without one the first GPU, else the first device."""
    if not devices:
        return None
    if not selector:
        return next((d for d in devices if d["type"] == "GPU"), devices[0])
    if selector.isdigit():
        return next((d for d in devices if d["index"] == int(selector)), None)
    return next((d for d in devices if selector.lower() in f"{d['platform']} {d['name']}".lower()), None)


def slow_build_note(opts: dict | None) -> str | None:
    """The note for options that build the GPU kernel set on a CPU device
    (PoCL compiles it for tens of seconds: ~45 s for a 63-node model), else
    None. The VM modes build the CPU set whatever kernel_set says; options
    the library refuses are reported elsewhere (None here)."""
    try:
        r = resolved.options(opts or {})
    except ValueError:
        return None
    override = os.environ.get("TFLITE_GPU_POLICY", "")
    kernel_set = _policy_field(override, "kernel_set") or _policy_field(r.get("policy", ""), "kernel_set") \
        or r.get("kernel_set")
    execution = _policy_field(override, "execution") or _policy_field(r.get("policy", ""), "execution") \
        or r.get("execution")
    if kernel_set != "gpu" or execution in ("stepped", "persistent"):
        return None
    try:
        device = chosen_device(r.get("device", ""), _capi.devices())
    except (RuntimeError, OSError):
        return None  # no OpenCL: the command says so itself
    if device is None or device["type"] != "CPU":
        return None
    where = "PoCL" if device.get("vendor_id") == "pocl" else device["name"]
    return (f"note: kernel_set=gpu on a CPU device ({where}) compiles for tens of seconds before the first "
            "result (kernel_set=auto picks the CPU kernel set here)")
