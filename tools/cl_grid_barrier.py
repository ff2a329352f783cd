#!/usr/bin/env python3
"""The grid barrier of a persistent kernel, measured before anything
depends on it (issue 36, item 1): opencl_kernels/grid_sync.cl on one
OpenCL device, without the delegate.

For each grid of G work-groups (1, then powers of two and the compute
units, up to 2 x compute units), one group size:

- barrier: one launch of N barriers with nothing between them, against one
  launch of none; the device time (event START to END) and the host's wall
  time per barrier, and whether every group passed every barrier (a grid
  larger than what the device keeps resident hits the spin's bound: the
  abort flag ends the launch; it never hangs);
- launches: N empty launches of the same kernel queued back to back, one
  clFinish (host wall per launch), and once more with an event per launch:
  medians of QUEUED->SUBMIT (host and driver), SUBMIT->START (waiting for
  the device), START->END (the kernel) and END->next START (the gap between
  dependent kernels);
- litmus: message passing between groups through addresses other groups
  read (and may have cached) before they were rewritten; every value read
  after the barrier must be the current phase's. With -DGD_NVIDIA=1 (PTX
  membar.gl, the GPU's timer) on NVIDIA, and also without it there, to show
  whether the fence is needed.

Writes OUT/barrier.json and OUT/barrier.md; prints the table. Uses the ICD
loader in $TFLITE_GPU_OPENCL_LIBRARY (tools/gpu_run.sh sets it) or
libOpenCL.so.1, and the first GPU device (else the first device).
Test hook: TFLITE_GPU_TEST_LITMUS_READ_EARLY=1 builds the litmus kernel to
read before the barrier (-DGS_LITMUS_READ_EARLY=1), so that it must find
stale values: tests/test_cl_grid_barrier.py shows the test can fail.
Exit 0; 1 when OpenCL fails (the message says which call); 2 bad usage;
3 when a litmus test read a stale value with the fence the delegate would
use (the persistent kernel's plan must change).

    python tools/cl_grid_barrier.py [--out DIR] [--phases 1000] [--local-size 128] [--device N]
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

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from cl_launch_cost import ClError, Device, _check, _lib  # noqa: E402

KERNELS = pathlib.Path(__file__).resolve().parent.parent / "opencl_kernels"
CL_QUEUE_PROFILING_ENABLE = 1 << 1
CL_PROFILING = {"queued": 0x1280, "submit": 0x1281, "start": 0x1282, "end": 0x1283}
CL_MEM_READ_WRITE = 1
CL_DEVICE_VERSION, CL_DRIVER_VERSION = 0x102F, 0x102D
SYNC_WORDS = 2  # kernel_abi.h GS_WORDS


def source() -> bytes:
    """The program as the library builds one: kernel_abi.h + common.cl + the file."""
    return "".join((KERNELS / f).read_text() for f in ("kernel_abi.h", "common.cl", "grid_sync.cl")).encode()


def groups_to_try(cu: int) -> list[int]:
    """1, powers of two, the compute units and twice them, up to 2 x compute units."""
    out = {1, cu, 2 * cu}
    g = 2
    while g <= 2 * cu:
        out.add(g)
        g *= 2
    return sorted(out)


class Probe:
    """A profiling queue and grid_sync.cl's two kernels, built with `options`."""

    def __init__(self, dev: Device, options: str):
        self.dev, cl = dev, dev.cl
        self.cl = cl
        err = C.c_int()
        self.queue = C.c_void_p(cl.clCreateCommandQueue(dev.ctx, dev.dev, C.c_ulong(CL_QUEUE_PROFILING_ENABLE),
                                                        C.byref(err)))
        _check(err.value, "clCreateCommandQueue(profiling)")
        src = C.c_char_p(source())
        prog = C.c_void_p(cl.clCreateProgramWithSource(dev.ctx, 1, C.byref(src), None, C.byref(err)))
        _check(err.value, "clCreateProgramWithSource")
        rc = cl.clBuildProgram(prog, 1, C.byref(dev.dev), options.encode(), None, None)
        if rc != 0:
            raise ClError(f"clBuildProgram({options}) returned {rc}: {self._build_log(prog)}")
        self.empty = C.c_void_p(cl.clCreateKernel(prog, b"gs_empty_phases", C.byref(err)))
        _check(err.value, "clCreateKernel(gs_empty_phases)")
        self.litmus_k = C.c_void_p(cl.clCreateKernel(prog, b"gs_litmus", C.byref(err)))
        _check(err.value, "clCreateKernel(gs_litmus)")
        self.sync = self._buffer(4 * SYNC_WORDS)

    def _build_log(self, prog) -> str:
        buf = C.create_string_buffer(8192)
        self.cl.clGetProgramBuildInfo(prog, self.dev.dev, 0x1183, 8192, buf, None)  # CL_PROGRAM_BUILD_LOG
        return buf.value.decode(errors="replace").strip()[:2000]

    def _buffer(self, nbytes: int):
        err = C.c_int()
        buf = C.c_void_p(self.cl.clCreateBuffer(self.dev.ctx, CL_MEM_READ_WRITE, nbytes, None, C.byref(err)))
        _check(err.value, "clCreateBuffer")
        return buf

    def _arg(self, kernel, i, value):
        if isinstance(value, C.c_void_p):
            _check(self.cl.clSetKernelArg(kernel, i, C.sizeof(C.c_void_p), C.byref(value)), "clSetKernelArg")
        else:
            _check(self.cl.clSetKernelArg(kernel, i, C.sizeof(value), C.byref(value)), "clSetKernelArg")

    def _write_zeros(self, buf, words):
        zeros = (C.c_int * words)()
        _check(self.cl.clEnqueueWriteBuffer(self.queue, buf, 1, 0, 4 * words, zeros, 0, None, None),
               "clEnqueueWriteBuffer")

    def _read(self, buf, words):
        out = (C.c_int * words)()
        _check(self.cl.clEnqueueReadBuffer(self.queue, buf, 1, 0, 4 * words, out, 0, None, None),
               "clEnqueueReadBuffer")
        return list(out)

    def _launch(self, kernel, groups, local, event=None):
        g, l = (C.c_size_t * 1)(groups * local), (C.c_size_t * 1)(local)
        _check(self.cl.clEnqueueNDRangeKernel(self.queue, kernel, 1, None, g, l, 0, None, event),
               "clEnqueueNDRangeKernel")

    def _times(self, event) -> dict:
        out = {}
        for name, param in CL_PROFILING.items():
            v = C.c_ulong()
            _check(self.cl.clGetEventProfilingInfo(event, param, C.sizeof(v), C.byref(v), None),
                   "clGetEventProfilingInfo")
            out[name] = v.value
        self.cl.clReleaseEvent(event)
        return out

    def phases(self, groups, local, phases, limit):
        """One launch of `phases` barriers: (device µs, host wall µs, passed, arrivals)."""
        self._write_zeros(self.sync, SYNC_WORDS)
        self._arg(self.empty, 0, self.sync)
        self._arg(self.empty, 1, C.c_int(phases))
        self._arg(self.empty, 2, C.c_ulong(limit))
        ev = C.c_void_p()
        t0 = time.perf_counter()
        self._launch(self.empty, groups, local, C.byref(ev))
        _check(self.cl.clFinish(self.queue), "clFinish")
        wall = (time.perf_counter() - t0) * 1e6
        t = self._times(ev)
        count, abort = self._read(self.sync, SYNC_WORDS)
        return (t["end"] - t["start"]) / 1e3, wall, abort == 0 and count == phases * groups, count

    def launches(self, groups, local, n):
        """n empty launches: (host wall µs per launch without events, medians of the event intervals)."""
        self._write_zeros(self.sync, SYNC_WORDS)
        self._arg(self.empty, 0, self.sync)
        self._arg(self.empty, 1, C.c_int(0))
        self._arg(self.empty, 2, C.c_ulong(0))
        t0 = time.perf_counter()
        for _ in range(n):
            self._launch(self.empty, groups, local)
        _check(self.cl.clFinish(self.queue), "clFinish")
        wall = (time.perf_counter() - t0) * 1e6 / n
        events = [C.c_void_p() for _ in range(n)]
        for ev in events:
            self._launch(self.empty, groups, local, C.byref(ev))
        _check(self.cl.clFinish(self.queue), "clFinish")
        ts = [self._times(ev) for ev in events]
        med = lambda xs: statistics.median(xs) / 1e3 if xs else None  # noqa: E731
        return wall, {"queued_to_submit_us": med([t["submit"] - t["queued"] for t in ts]),
                      "submit_to_start_us": med([t["start"] - t["submit"] for t in ts]),
                      "start_to_end_us": med([t["end"] - t["start"] for t in ts]),
                      "gap_us": med([b["start"] - a["end"] for a, b in zip(ts, ts[1:])])}

    def litmus(self, groups, local, phases, words, limit):
        """(stale values, values checked, passed every barrier)."""
        data, errors = self._buffer(4 * groups * words), self._buffer(8)
        try:
            self._write_zeros(self.sync, SYNC_WORDS)
            self._write_zeros(errors, 2)
            for i, v in enumerate((self.sync, data, errors, C.c_int(phases), C.c_int(words), C.c_ulong(limit))):
                self._arg(self.litmus_k, i, v)
            self._launch(self.litmus_k, groups, local)
            _check(self.cl.clFinish(self.queue), "clFinish")
            bad, seen = self._read(errors, 2)
            count, abort = self._read(self.sync, SYNC_WORDS)
            return bad, seen, abort == 0 and count == 2 * phases * groups
        finally:
            self.cl.clReleaseMemObject(data)
            self.cl.clReleaseMemObject(errors)


def measure(dev: Device, phases: int, local: int, launches: int, litmus_phases: int, words: int,
            repeats: int = 3) -> dict:
    nvidia = "nvidia" in dev.platform.lower()
    # One wait's bound: 200 ms of the GPU's timer on NVIDIA; elsewhere spin iterations
    # (about 0.1-0.5 s on a CPU device).
    hook = " -DGS_LITMUS_READ_EARLY=1" if os.environ.get("TFLITE_GPU_TEST_LITMUS_READ_EARLY") == "1" else ""
    variants = [("nvidia fence", "-cl-std=CL1.2 -DGD_NVIDIA=1" + hook, 200_000_000)] if nvidia else []
    variants.append(("mem_fence", "-cl-std=CL1.2" + hook, 50_000_000))
    probes, build_errors = {}, {}
    for name, opts, limit in variants:
        try:
            probes[name] = (Probe(dev, opts), limit)
        except ClError as e:  # e.g. the driver refuses the PTX: the next variant still measures
            build_errors[name] = str(e)
    if not probes:
        raise ClError("; ".join(f"{k}: {v}" for k, v in build_errors.items()))
    main_name = next(iter(probes))
    probe, limit = probes[main_name]
    rows = []
    for g in groups_to_try(dev.compute_units):
        probe.phases(g, local, 0, limit)  # warm-up: the first launch at a size may compile
        zero = [probe.phases(g, local, 0, limit) for _ in range(repeats)]
        runs = []
        for _ in range(repeats):
            runs.append(probe.phases(g, local, phases, limit))
            if not runs[-1][2]:
                break  # a grid that times out once is not resident: one bounded wait is enough
        passed = all(r[2] for r in runs)
        row = {"work_groups": g, "local_size": local, "phases": phases, "passed": passed,
               "passed_runs": sum(r[2] for r in runs), "runs": len(runs),
               "arrivals": runs[-1][3], "expected_arrivals": phases * g}
        if passed:
            dz, wz = statistics.median(r[0] for r in zero), statistics.median(r[1] for r in zero)
            row["barrier_device_us"] = max(statistics.median(r[0] for r in runs) - dz, 0.0) / phases
            row["barrier_wall_us"] = max(statistics.median(r[1] for r in runs) - wz, 0.0) / phases
        wall, parts = probe.launches(g, local, launches)
        row["launch_wall_us"] = wall
        row.update(parts)
        rows.append(row)
    lit = []
    for name, (p, lim) in probes.items():
        for g in sorted({min(2, dev.compute_units * 2), dev.compute_units, 2 * dev.compute_units}):
            bad, seen, ok = p.litmus(g, local, litmus_phases, words, lim)
            lit.append({"variant": name, "work_groups": g, "phases": litmus_phases, "words_per_group": words,
                        "stale": bad, "checked": seen, "all_barriers_passed": ok})
    return {"device": dev.name, "platform": dev.platform, "compute_units": dev.compute_units,
            "device_version": _text(dev, CL_DEVICE_VERSION), "driver_version": _text(dev, CL_DRIVER_VERSION),
            "variant": main_name, "build_errors": build_errors, "rows": rows, "litmus": lit}


def _text(dev, param) -> str:
    buf = C.create_string_buffer(256)
    dev.cl.clGetDeviceInfo(dev.dev, param, 256, buf, None)
    return buf.value.decode(errors="replace")


def _f(x, fmt="{:.2f}"):
    return "–" if x is None else fmt.format(x)


def markdown(doc: dict) -> str:
    out = [f"# Grid barrier: {doc['device']} ({doc['platform']}, {doc['compute_units']} compute units, "
           f"driver {doc.get('driver_version', '?')})", "",
           f"opencl_kernels/grid_sync.cl, {doc['variant']}; µs. barrier: per phase of one launch of "
           f"{doc['rows'][0]['phases'] if doc['rows'] else '?'} empty phases, less a launch of none (median of "
           "3); launch: an empty launch of the same kernel, queued back to back (host wall), and the "
           "events' QUEUED->SUBMIT, SUBMIT->START, START->END and the gap END->next START (medians).", "",
           "| work-groups | barrier passed | barrier µs (device) | barrier µs (wall) | launch µs (wall) | "
           "queued->submit | submit->start | start->end | gap | launch / barrier |",
           "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in doc["rows"]:
        ok = "yes" if r["passed"] else f"no ({r['passed_runs']} of {r['runs']}: bound hit, not resident)"
        b = r.get("barrier_wall_us")
        ratio = f"{r['launch_wall_us'] / b:.1f}x" if b else "–"
        out.append(f"| {r['work_groups']} | {ok} | {_f(r.get('barrier_device_us'))} | {_f(b)} | "
                   f"{_f(r['launch_wall_us'])} | {_f(r['queued_to_submit_us'])} | {_f(r['submit_to_start_us'])} | "
                   f"{_f(r['start_to_end_us'])} | {_f(r['gap_us'])} | {ratio} |")
    for name, why in (doc.get("build_errors") or {}).items():
        out += ["", f"The {name} variant did not build: {why[:500]}"]
    out += ["", "Litmus (message passing through addresses read before they were rewritten):", "",
            "| fence | work-groups | phases | ints per group | stale values | values checked | barriers passed |",
            "|---|---:|---:|---:|---:|---:|---|"]
    for x in doc["litmus"]:
        out.append(f"| {x['variant']} | {x['work_groups']} | {x['phases']} | {x['words_per_group']} | {x['stale']} | "
                   f"{x['checked']} | {'yes' if x['all_barriers_passed'] else 'no (bound hit)'} |")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=None, help="directory for barrier.json and barrier.md")
    ap.add_argument("--phases", type=int, default=1000, help="barriers in one timed launch (default 1000)")
    ap.add_argument("--local-size", type=int, default=128, help="work-items per group (default 128)")
    ap.add_argument("--launches", type=int, default=500, help="empty launches timed (default 500)")
    ap.add_argument("--litmus-phases", type=int, default=200, help="phases of the litmus test (default 200)")
    ap.add_argument("--words", type=int, default=4096, help="ints each group writes per litmus phase (default 4096)")
    ap.add_argument("--device", type=int, default=None, help="device index over all platforms (default: first GPU)")
    args = ap.parse_args(argv)
    if args.phases < 1 or args.launches < 2 or args.litmus_phases < 1 or args.words < 1 or args.local_size < 1:
        ap.error("--phases, --litmus-phases, --words and --local-size must be at least 1, --launches at least 2")
    try:
        dev = Device(_lib(), args.device)
        doc = measure(dev, args.phases, args.local_size, args.launches, args.litmus_phases, args.words)
    except (OSError, ClError) as e:
        print(f"cl_grid_barrier: {e}", file=sys.stderr)
        return 1
    text = markdown(doc)
    if args.out:
        out = pathlib.Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "barrier.json").write_text(json.dumps(doc, indent=1) + "\n")
        (out / "barrier.md").write_text(text)
    print(text, end="")
    stale = [x for x in doc["litmus"] if x["variant"] == doc["variant"] and x["stale"]]
    if stale:
        print(f"cl_grid_barrier: STALE VALUES with the {doc['variant']} barrier: the persistent kernel's "
              "memory plan must change", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
