"""cffi (ABI mode) binding of libgpu_delegate.so's C API: option defaults,
version, device list, the op and option tables, and per-delegate stats."""
from __future__ import annotations

import functools

import cffi
import numpy as np

from . import _headers
from ._library import library_path

# Declared once, in the public headers: this reads their cffi regions.
_CDEF = _headers.cdef("gpu_delegate.h") + _headers.cdef("gpu_delegate_introspection.h")

ffi = cffi.FFI()
ffi.cdef(_CDEF)


@functools.lru_cache(maxsize=None)
def lib():
    return ffi.dlopen(library_path())


def version() -> str:
    return ffi.string(lib().TfLiteGpuDelegateVersion()).decode()


def default_options() -> dict:
    o = lib().TfLiteGpuDelegateOptionsV2Default()
    return {
        "is_precision_loss_allowed": o.is_precision_loss_allowed,
        "inference_preference": o.inference_preference,
        "inference_priority1": o.inference_priority1,
        "inference_priority2": o.inference_priority2,
        "inference_priority3": o.inference_priority3,
        "experimental_flags": o.experimental_flags,
        "max_delegated_partitions": o.max_delegated_partitions,
        "serialization_dir": None if o.serialization_dir == ffi.NULL else ffi.string(o.serialization_dir).decode(),
        "model_token": None if o.model_token == ffi.NULL else ffi.string(o.model_token).decode(),
    }


def _table(fn) -> list[list[str]]:
    size = fn(ffi.NULL, 0) + 1
    buf = ffi.new("char[]", size)
    fn(buf, size)
    return [line.split("\t") for line in ffi.string(buf).decode().splitlines() if line]


def ops() -> list[dict]:
    """The C library's op table: the one source of truth for what is delegated."""
    return [
        {"op": r[0], "code": int(r[1]), "versions": r[2], "constraints": r[3]}
        for r in _table(lib().tflite_gpu_describe_ops)
    ]


def fusion_passes() -> list[dict]:
    """The C library's table of fusion passes, in the order they run: name,
    kernel sets, the test hook that switches each off (None: none), the
    policy field that does (None: none), what it matches."""
    rows = []
    for r in _table(lib().tflite_gpu_describe_passes):
        field = r[2][len("policy "):] if r[2].startswith("policy ") else None
        rows.append({"name": r[0], "kernel_sets": r[1].split(","), "hook": None if field else r[2] or None,
                     "policy_field": field, "matches": r[3]})
    return rows


def policy_fields() -> list[dict]:
    """The policy's fields (select/policy.h): name, range, value names
    (None: a number), scope ("partition" or "device"), help."""
    return [{"name": r[0], "min": int(r[1]), "max": int(r[2]), "values": r[3].split("|") if r[3] else None,
             "scope": r[4], "help": r[5]}
            for r in _table(lib().tflite_gpu_describe_policy) if r[0] != "rule"]


def policy_rules() -> dict:
    """The rule table: {row name: {field: value text}} (select/policy_rules.c)."""
    return {r[1]: dict(kv.split("=", 1) for kv in r[2].split(","))
            for r in _table(lib().tflite_gpu_describe_policy) if r[0] == "rule"}


def env_vars() -> list[dict]:
    """Every environment variable the library reads: name, kind ("user",
    "override" or "test"), what it does (util/env_hooks.c)."""
    return [{"name": r[0], "kind": r[1], "what": r[2]} for r in _table(lib().tflite_gpu_describe_env)]


def parse_policy(text: str) -> dict:
    """"field=value:source,..." (a partition's policy as the library reports
    it) as {field: {"value": text, "source": rule|measured|option|override}}."""
    out = {}
    for item in filter(None, text.split(",")):
        name, _, rest = item.partition("=")
        value, _, source = rest.rpartition(":")
        out[name] = {"value": value, "source": source}
    return out


def options_schema() -> list[dict]:
    """Every string option load_delegate accepts, with aliases and defaults."""
    return [
        {"key": r[0], "aliases": [a for a in r[1].split(",") if a], "accepted": r[2], "default": r[3], "help": r[4]}
        for r in _table(lib().tflite_gpu_describe_options)
    ]


def devices() -> list[dict]:
    """OpenCL devices as the delegate sees them; RuntimeError without OpenCL."""
    err = ffi.new("char[]", 1024)
    size = lib().tflite_gpu_list_devices(ffi.NULL, 0, err, 1024)
    if size < 0:
        raise RuntimeError(ffi.string(err).decode())
    buf = ffi.new("char[]", size + 1)
    lib().tflite_gpu_list_devices(buf, size + 1, err, 1024)
    out = []
    for line in ffi.string(buf).decode(errors="replace").splitlines():
        i, plat, name, kind, ver, drv, mem, fp16 = line.split("\t")
        dev = {"index": int(i), "platform": plat, "name": name, "type": kind, "version": ver,
               "driver": drv, "global_mem_bytes": int(mem), "fp16": fp16 == "1"}
        dev.update(device_caps(int(i)))
        out.append(dev)
    return out


_CAPS_INTS = {"compute_units", "max_work_group_size", "local_mem_bytes", "global_mem_bytes", "max_alloc_bytes",
              "mem_base_align", "preferred_vector_float", "preferred_vector_half"}
_CAPS_FLAGS = {"fp16", "subgroups", "images", "command_buffer", "local_mem_dedicated"}


def device_caps(index: int) -> dict:
    """The capability struct the library's kernel selectors decide from
    (device_caps.h), read once per device, and the kernel set `auto` picks."""
    err = ffi.new("char[]", 1024)
    size = lib().tflite_gpu_describe_device(index, ffi.NULL, 0, err, 1024)
    if size < 0:
        raise RuntimeError(ffi.string(err).decode(errors="replace"))
    buf = ffi.new("char[]", size + 1)
    lib().tflite_gpu_describe_device(index, buf, size + 1, err, 1024)
    caps = {}
    for line in ffi.string(buf).decode(errors="replace").splitlines():
        key, _, value = line.partition("\t")
        if key in _CAPS_INTS:
            caps[key] = int(value)
        elif key in _CAPS_FLAGS:
            caps[key] = value == "1"
        elif key == "max_work_item_sizes":
            caps[key] = [int(v) for v in value.split(",")]
        elif key == "extensions":
            caps[key] = sorted(value.split())
        else:
            caps[key] = value
    return caps


def delegate_stats(delegate_pointer: int) -> dict:
    """What the last Prepare did: nodes delegated / left on the CPU,
    partitions, kernel launches per invoke, activation memory against its
    lower bound (peak of simultaneously live bytes), compile time so far,
    and the kernel cache's counters so far (partitions that hit or missed,
    files written, files rejected as corrupt or unreadable), and each
    partition's policy ({field: {"value", "source"}}, parse_policy)."""
    r = ffi.new("TfLiteGpuDelegateReport*")
    if lib().tflite_gpu_delegate_report(ffi.cast("void*", delegate_pointer), r) != 0:
        raise ValueError("not a tflite-gpu delegate")
    return {"delegated_nodes": r.delegated_nodes, "cpu_nodes": r.cpu_nodes, "partitions": r.partitions,
            "dispatches": r.dispatches, "arena_bytes": r.arena_bytes, "live_peak_bytes": r.live_peak_bytes,
            "compile_seconds": r.compile_seconds, "cache_hits": r.cache_hits, "cache_misses": r.cache_misses,
            "cache_writes": r.cache_writes, "cache_rejected": r.cache_rejected,
            "policies": [p["policy"] for p in delegate_partitions(delegate_pointer)]}


def delegate_device(delegate_pointer: int) -> dict:
    buf = ffi.new("char[]", 1024)
    lib().tflite_gpu_delegate_device(ffi.cast("void*", delegate_pointer), buf, 1024)
    plat, name, ver, precision, kernel_set, rule = ffi.string(buf).decode(errors="replace").split("\t")
    return {"platform": plat, "name": name, "version": ver, "precision": precision, "kernel_set": kernel_set,
            "policy_rule": rule}


FAILURE_KINDS = {1: "kernel-build", 2: "other"}


def delegate_failure(delegate_pointer: int) -> dict | None:
    """Why the delegate's last Prepare failed, or None: {"kind": "kernel-build"
    (the device's OpenCL compiler rejected a kernel: a failure of tflite-gpu
    on that device, not of the model) or "other", "message": its text (the
    device, driver and the compiler's first errors for a kernel build)}."""
    ptr = ffi.cast("void*", delegate_pointer)
    buf = ffi.new("char[]", 8192)
    kind = lib().tflite_gpu_delegate_failure(ptr, buf, 8192)
    if kind <= 0:
        return None
    return {"kind": FAILURE_KINDS.get(kind, "other"), "message": ffi.string(buf).decode(errors="replace")}


def delegate_profile(delegate_pointer: int) -> list[dict]:
    """Per-kernel OpenCL event times summed over all invokes so far, largest
    first. Empty unless TFLITE_GPU_PROFILE=1 was set when the delegate was
    created (profiling queues are slower)."""
    rows = [r for r in _profile_rows(delegate_pointer) if not r["kernel"].startswith("@")]
    return sorted(rows, key=lambda r: -r["total_ms"])


def delegate_launch_intervals(delegate_pointer: int) -> dict:
    """Where launches spent time besides their kernels, summed like
    delegate_profile: {"queued_to_submit" | "submit_to_start" | "gap":
    {"count", "total_ms"}} (QUEUED->SUBMIT: host and driver; SUBMIT->START:
    waiting for the device; gap: a launch's START after the previous
    launch's END in one invoke). Empty without TFLITE_GPU_PROFILE=1."""
    return {r["kernel"][1:]: {"count": r["calls"], "total_ms": r["total_ms"]}
            for r in _profile_rows(delegate_pointer) if r["kernel"].startswith("@")}


def _profile_rows(delegate_pointer: int) -> list[dict]:
    ptr = ffi.cast("void*", delegate_pointer)
    size = lib().tflite_gpu_delegate_profile(ptr, ffi.NULL, 0) + 1
    buf = ffi.new("char[]", size)
    lib().tflite_gpu_delegate_profile(ptr, buf, size)
    rows = []
    for line in ffi.string(buf).decode().splitlines():
        kernel, calls, ms = line.split("\t")
        rows.append({"kernel": kernel, "calls": int(calls), "total_ms": float(ms)})
    return rows


def _delegate_text(delegate_pointer: int, what: int) -> str:
    ptr = ffi.cast("void*", delegate_pointer)
    size = lib().tflite_gpu_delegate_nodes(ptr, what, ffi.NULL, 0) + 1
    buf = ffi.new("char[]", size)
    lib().tflite_gpu_delegate_nodes(ptr, what, buf, size)
    return ffi.string(buf).decode()


def delegate_nodes(delegate_pointer: int) -> list[dict]:
    """Per node of the last Prepare: op, version, where it runs and why."""
    rows = []
    for line in _delegate_text(delegate_pointer, 0).splitlines():
        node, op, version, where, why = line.split("\t", 4)
        rows.append({"node": int(node), "op": op, "version": int(version), "where": where, "reason": why})
    return rows


def delegate_partitions(delegate_pointer: int) -> list[dict]:
    """The partitions the last Prepare built: their nodes, dispatches, how
    they run ("execution", "launches" per invoke as built, and the grid
    "barriers" of an invoke in persistent mode, 0 otherwise; "declined":
    why one runs its kernels where execution asked for the VM, "" else), and
    the fusion passes that ran on each with the rewrites each made
    ({pass name: count}; a pass switched off or not for this device's
    kernel set is absent), and the "policy" it was built with ({field:
    {"value", "source"}}, parse_policy)."""
    rows = []
    for line in _delegate_text(delegate_pointer, 1).splitlines():
        count, dispatches, nodes, passes, execution, declined, policy = line.split("\t")
        mode, launches, barriers = execution.split(":")
        rows.append({"nodes": [int(n) for n in nodes.split(",") if n], "dispatches": int(dispatches),
                     "passes": {k: int(v) for k, v in (x.split("=") for x in passes.split(",") if x)},
                     "execution": mode, "launches": int(launches), "barriers": int(barriers),
                     "declined": declined, "policy": parse_policy(policy)})
    return rows


def delegate_runs(delegate_pointer: int) -> list[dict]:
    """How each partition's last invoke ran: {"partition", "execution"
    (kernels, stepped or persistent), "launches", "fallback" (why a
    persistent partition now runs stepped; "" when it does not)}."""
    rows = []
    for line in _delegate_text(delegate_pointer, 4).splitlines():
        part, mode, launches, fallback = line.split("\t")
        rows.append({"partition": int(part), "execution": mode, "launches": int(launches), "fallback": fallback})
    return rows


def delegate_phases(delegate_pointer: int) -> list[dict]:
    """The VM phases of every partition built with execution=stepped or
    persistent, in dispatch order: {"partition", "segment" (the launch it is
    part of), "level" (grid barriers separate levels in a persistent
    launch), "kernel" (whose body it runs), "work_items", "groups",
    "group_size" (the grid its launch spreads them over), "node" (its node
    of the fused graph, as in delegate_groups; -1: a boundary conversion),
    "tflite_node" (the TFLite node that fused node started from; -1: none)}."""
    first = {(g["partition"], g["node"]): g["tflite_node"] for g in delegate_groups(delegate_pointer)}
    rows = []
    for line in _delegate_text(delegate_pointer, 5).splitlines():
        part, seg, level, kernel, items, groups, size, node = line.split("\t")
        rows.append({"partition": int(part), "segment": int(seg), "level": int(level), "kernel": kernel,
                     "work_items": int(items), "groups": int(groups), "group_size": int(size), "node": int(node),
                     "tflite_node": first.get((int(part), int(node)), -1)})
    return rows


def delegate_tuning(delegate_pointer: int) -> list[dict]:
    """The tuner's candidates for each partition it timed in the last
    Prepare: {"partition", "candidate", "us" (None: not timed), "chosen",
    "why" (why it was not timed or was refused)}."""
    rows = []
    for line in _delegate_text(delegate_pointer, 7).splitlines():
        part, name, us, chosen, why = line.split("\t")
        rows.append({"partition": int(part), "candidate": name, "us": float(us) if float(us) >= 0 else None,
                     "chosen": chosen == "1", "why": why})
    return rows


def delegate_phase_times(delegate_pointer: int) -> dict:
    """{(partition, phase): {"invokes", "total_ms"}}: each VM phase's time
    (phase: its place among its partition's rows of delegate_phases), summed
    over the profiled persistent invokes that stamped it. Empty unless
    TFLITE_GPU_PROFILE=1 was set when the delegate was created and the
    device has a timer the phases read (NVIDIA). Such invokes put a grid
    barrier before every phase, so the phases ran one at a time."""
    times = {}
    for line in _delegate_text(delegate_pointer, 6).splitlines():
        part, phase, invokes, ms = line.split("\t")
        times[(int(part), int(phase))] = {"invokes": int(invokes), "total_ms": float(ms)}
    return times


def delegate_groups(delegate_pointer: int) -> list[dict]:
    """Every node of every partition's fused graph, in launch order: the
    TFLite nodes its launches compute ("members", its own first), the kernels
    they run, the TFLite tensors it writes (what check --bisect names)."""
    rows = []
    for line in _delegate_text(delegate_pointer, 3).splitlines():
        part, node, tflite_node, members, kernels, tensors = line.split("\t")
        rows.append({"partition": int(part), "node": int(node), "tflite_node": int(tflite_node),
                     "members": [int(m) for m in members.split(",") if m], "kernels": [k for k in kernels.split(",") if k],
                     "tensors": [int(t) for t in tensors.split(",") if t]})
    return rows


def delegate_capture(delegate_pointer: int, on: bool) -> None:
    """Capture on: each invoke also reads back every tensor the delegate's
    partitions materialise (check --bisect); off drops what was captured."""
    if lib().tflite_gpu_delegate_capture(ffi.cast("void*", delegate_pointer), int(bool(on))) != 0:
        raise MemoryError("tflite_gpu_delegate_capture failed")


def delegate_captured(delegate_pointer: int) -> tuple[list[dict], bool]:
    """The tensors captured so far ({"partition", "node", "tensor", "data":
    BHWC float32 array}, in the order they were written) and whether the
    capture is complete."""
    ptr = ffi.cast("void*", delegate_pointer)
    size = lib().tflite_gpu_delegate_captured(ptr, ffi.NULL, 0) + 1
    buf = ffi.new("char[]", size)
    lib().tflite_gpu_delegate_captured(ptr, buf, size)
    rows, complete = [], True
    for i, line in enumerate(ffi.string(buf).decode().splitlines()):
        part, node, tensor, shape, ready = line.split("\t")
        dims = tuple(int(x) for x in shape.split(","))
        if ready != "1":
            complete = False
            continue
        data = np.empty(dims, np.float32)
        rc = lib().tflite_gpu_delegate_captured_data(ptr, i, ffi.cast("float*", data.ctypes.data), data.size)
        if rc < 0:
            complete = False
            continue
        complete &= rc == 0
        rows.append({"partition": int(part), "node": int(node), "tensor": int(tensor), "data": data})
    return rows, complete


def delegate_candidates(delegate_pointer: int) -> list[dict]:
    """partition_policy=measured: every candidate partition of the last
    Prepare with its measured device time (None: it did not build), its
    estimated CPU time, both in microseconds, and where it went."""
    rows = []
    for line in _delegate_text(delegate_pointer, 2).splitlines():
        count, device_us, cpu_us, where, nodes = line.split("\t")
        rows.append({"nodes": [int(n) for n in nodes.split(",") if n],
                     "device_us": float(device_us) if float(device_us) >= 0 else None,
                     "cpu_us": float(cpu_us), "where": where})
    return rows


_COUNTERS = ("live_contexts", "live_queues", "live_buffers", "live_programs", "live_kernels", "live_events",
             "program_builds", "host_allocations", "fault_injection")


def debug_counters() -> dict:
    """Live OpenCL objects (created minus released) per kind, program builds
    and host allocations made by the library's own code (test hooks).
    host_allocations is None when the library does not count them: only
    builds with `make ALLOC_COUNT=1` do (tests/test_alloc_count.py)."""
    out = ffi.new("TfLiteGpuDebugCounters*")
    lib().tflite_gpu_debug_counters(out)
    counters = {name: int(getattr(out, name)) for name in _COUNTERS}
    if counters["host_allocations"] < 0:
        counters["host_allocations"] = None
    return counters


def command_buffer_counters() -> dict:
    """Recorded command buffers alive and replays enqueued since the library
    loaded (the dispatch-list replay, delegate_c/runtime/cmdbuf.c)."""
    live, replays = ffi.new("int64_t*"), ffi.new("int64_t*")
    lib().tflite_gpu_debug_command_buffers(live, replays)
    return {"live": int(live[0]), "replays": int(replays[0])}


def live_cl_objects() -> int:
    c = debug_counters()
    return sum(v for k, v in c.items() if k.startswith("live_"))


def fault_inject(spec: str) -> None:
    """Fail the Nth OpenCL call of a kind ("build=1,alloc=3,enqueue=2,transfer=1");
    only in libraries built with make FAULT_INJECTION=1."""
    if lib().tflite_gpu_fault_inject(spec.encode()) != 0:
        raise ValueError(f"fault spec {spec!r} rejected (malformed, or the library lacks FAULT_INJECTION)")
