#!/usr/bin/env python3
"""What one kernel launch costs on an OpenCL device, without the delegate:
the floor under tflite-gpu's host time per launch (issue 28; on an H100 the
delegate spends 25-35 µs of host time per launch against 10-24 µs of
kernel time, docs/benchmarks/gpu-h100-2026-11-26.md).

A trivial kernel (one add per work-item) over 64 work-items (one group)
and over 64 x 2 x compute units (two groups per unit), each measured as:

- queued:  N launches back to back on an in-order queue, one clFinish;
           enqueue µs (host time in clEnqueueNDRangeKernel) and wall µs
           per launch (enqueue + finish, over N): the delegate's pattern;
- flushed: the same with clFlush after each launch;
- synced:  clFinish after every launch: a launch's round trip.

Arguments are set once, as the delegate does. Writes OUT/launch.json and
OUT/launch.md; prints the table. Uses the ICD loader in
$TFLITE_GPU_OPENCL_LIBRARY (tools/gpu_run.sh sets it) or libOpenCL.so.1,
and the first GPU device (else the first device). Exit 0, 1 when OpenCL
fails (the message says which call), 2 bad usage.

    python tools/cl_launch_cost.py [--out DIR] [--launches 500] [--device N]
"""
from __future__ import annotations

import argparse
import ctypes as C
import json
import os
import pathlib
import statistics
import sys
import time

SOURCE = b"__kernel void bump(__global float* a, int n) { int i = get_global_id(0); if (i < n) a[i] += 1.0f; }"
CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_GPU = 0xFFFFFFFF, 1 << 2
CL_DEVICE_TYPE, CL_DEVICE_NAME, CL_DEVICE_MAX_COMPUTE_UNITS, CL_PLATFORM_NAME = 0x1000, 0x102B, 0x1002, 0x0902
CL_MEM_READ_WRITE = 1


class ClError(RuntimeError):
    pass


def _lib():
    return C.CDLL(os.environ.get("TFLITE_GPU_OPENCL_LIBRARY") or "libOpenCL.so.1")


def _check(rc, what):
    if rc != 0:
        raise ClError(f"{what} returned {rc}")


def _info(fn, obj, param):
    buf = C.create_string_buffer(1024)
    _check(fn(obj, param, 1024, buf, None), "clGet*Info")
    return buf


class Device:
    """One device with a context, an in-order queue and the bump kernel."""

    def __init__(self, cl, index=None):
        self.cl = cl
        cl.clCreateContext.restype = C.c_void_p
        cl.clCreateCommandQueue.restype = C.c_void_p
        cl.clCreateProgramWithSource.restype = C.c_void_p
        cl.clCreateKernel.restype = C.c_void_p
        cl.clCreateBuffer.restype = C.c_void_p
        n = C.c_uint()
        _check(cl.clGetPlatformIDs(0, None, C.byref(n)), "clGetPlatformIDs")
        plats = (C.c_void_p * n.value)()
        _check(cl.clGetPlatformIDs(n.value, plats, None), "clGetPlatformIDs")
        devices = []  # (is_gpu, platform, device), in platform order
        for p in plats:
            m = C.c_uint()
            if cl.clGetDeviceIDs(C.c_void_p(p), CL_DEVICE_TYPE_ALL, 0, None, C.byref(m)) != 0 or not m.value:
                continue
            ids = (C.c_void_p * m.value)()
            _check(cl.clGetDeviceIDs(C.c_void_p(p), CL_DEVICE_TYPE_ALL, m.value, ids, None), "clGetDeviceIDs")
            for d in ids:
                kind = C.c_ulong()
                _check(cl.clGetDeviceInfo(C.c_void_p(d), CL_DEVICE_TYPE, C.sizeof(kind), C.byref(kind), None),
                       "clGetDeviceInfo")
                devices.append((bool(kind.value & CL_DEVICE_TYPE_GPU), p, d))
        if not devices:
            raise ClError("no OpenCL device")
        if index is None:
            gpus = [d for d in devices if d[0]]
            chosen = (gpus or devices)[0]
        elif 0 <= index < len(devices):
            chosen = devices[index]
        else:
            raise ClError(f"device {index} of {len(devices)}")
        _, plat, dev = chosen
        self.dev = C.c_void_p(dev)
        self.name = _info(cl.clGetDeviceInfo, self.dev, CL_DEVICE_NAME).value.decode(errors="replace")
        self.platform = _info(cl.clGetPlatformInfo, C.c_void_p(plat), CL_PLATFORM_NAME).value.decode(errors="replace")
        cu = C.c_uint()
        _check(cl.clGetDeviceInfo(self.dev, CL_DEVICE_MAX_COMPUTE_UNITS, C.sizeof(cu), C.byref(cu), None),
               "clGetDeviceInfo")
        self.compute_units = cu.value
        err = C.c_int()
        self.ctx = C.c_void_p(cl.clCreateContext(None, 1, C.byref(self.dev), None, None, C.byref(err)))
        _check(err.value, "clCreateContext")
        self.queue = C.c_void_p(cl.clCreateCommandQueue(self.ctx, self.dev, 0, C.byref(err)))
        _check(err.value, "clCreateCommandQueue")
        src = C.c_char_p(SOURCE)
        prog = C.c_void_p(cl.clCreateProgramWithSource(self.ctx, 1, C.byref(src), None, C.byref(err)))
        _check(err.value, "clCreateProgramWithSource")
        _check(cl.clBuildProgram(prog, 1, C.byref(self.dev), b"", None, None), "clBuildProgram")
        self.kernel = C.c_void_p(cl.clCreateKernel(prog, b"bump", C.byref(err)))
        _check(err.value, "clCreateKernel")

    def bind(self, items):
        """A buffer of `items` floats, and the kernel's arguments, set once."""
        err = C.c_int()
        buf = C.c_void_p(self.cl.clCreateBuffer(self.ctx, CL_MEM_READ_WRITE, 4 * items, None, C.byref(err)))
        _check(err.value, "clCreateBuffer")
        _check(self.cl.clSetKernelArg(self.kernel, 0, C.sizeof(C.c_void_p), C.byref(buf)), "clSetKernelArg")
        n = C.c_int(items)
        _check(self.cl.clSetKernelArg(self.kernel, 1, C.sizeof(n), C.byref(n)), "clSetKernelArg")
        return buf

    def run(self, items, launches, mode):
        """(enqueue µs, wall µs) per launch; mode: queued, flushed or synced."""
        cl, q = self.cl, self.queue
        gsize, lsize = (C.c_size_t * 1)(items), (C.c_size_t * 1)(64)
        enqueue = 0.0
        t0 = time.perf_counter()
        for _ in range(launches):
            a = time.perf_counter()
            _check(cl.clEnqueueNDRangeKernel(q, self.kernel, 1, None, gsize, lsize, 0, None, None),
                   "clEnqueueNDRangeKernel")
            enqueue += time.perf_counter() - a
            if mode == "flushed":
                _check(cl.clFlush(q), "clFlush")
            elif mode == "synced":
                _check(cl.clFinish(q), "clFinish")
        _check(cl.clFinish(q), "clFinish")
        wall = time.perf_counter() - t0
        return enqueue * 1e6 / launches, wall * 1e6 / launches


def measure(dev, launches, repeats=5):
    rows = []
    for groups in (1, 2 * max(dev.compute_units, 1)):
        items = 64 * groups
        dev.bind(items)
        dev.run(items, 20, "queued")  # warm-up: first launches compile on some drivers
        for mode in ("queued", "flushed", "synced"):
            n = launches if mode != "synced" else max(launches // 5, 10)
            runs = [dev.run(items, n, mode) for _ in range(repeats)]
            rows.append({"work_groups": groups, "work_items": items, "mode": mode, "launches": n,
                         "enqueue_us": statistics.median(r[0] for r in runs),
                         "wall_us": statistics.median(r[1] for r in runs)})
    return rows


def markdown(doc):
    out = [f"# Launch cost: {doc['device']} ({doc['platform']}, {doc['compute_units']} compute units)", "",
           "A trivial kernel, arguments set once; median of 5 runs; µs per launch.", "",
           "| work-groups | mode | launches | enqueue µs | wall µs |", "|---:|---|---:|---:|---:|"]
    for r in doc["rows"]:
        out.append(f"| {r['work_groups']} | {r['mode']} | {r['launches']} | {r['enqueue_us']:.2f} | "
                   f"{r['wall_us']:.2f} |")
    return "\n".join(out) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=None, help="directory for launch.json and launch.md")
    ap.add_argument("--launches", type=int, default=500, help="launches per queued / flushed run (default 500)")
    ap.add_argument("--device", type=int, default=None, help="device index over all platforms (default: first GPU)")
    args = ap.parse_args(argv)
    if args.launches < 10:
        ap.error("--launches must be at least 10")
    try:
        dev = Device(_lib(), args.device)
        doc = {"device": dev.name, "platform": dev.platform, "compute_units": dev.compute_units,
               "rows": measure(dev, args.launches)}
    except (OSError, ClError) as e:
        print(f"cl_launch_cost: {e}", file=sys.stderr)
        return 1
    text = markdown(doc)
    if args.out:
        out = pathlib.Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "launch.json").write_text(json.dumps(doc, indent=1) + "\n")
        (out / "launch.md").write_text(text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
