#!/usr/bin/env python3
"""Time to first result of execution=persistent with the kernel cache's
shared VM program (issue 36 item 7), against the CPU interpreter's.

    python tools/bench_vm_cache.py [--repeat N] [--ab-env NAME=VALUE ...] [MODEL ...]   (default: the first 4 MediaPipe models)
    python tools/bench_vm_cache.py --sequence [--library PATH ...] [MODEL ...]   (default: all 14)

Every run is a fresh process with POCL_KERNEL_CACHE=0 and
CUDA_CACHE_DISABLE=1 (no driver cache) timing load_delegate
(or none) + Interpreter + allocate_tensors + set inputs + first invoke. One
cache directory for the whole run: its first model writes the device's VM
file, every later model loads it ("cached VM"). Per model, interleaved: the
CPU interpreter (XNNPACK), the device's kernel set (execution=kernels, no
cache; the CPU set on PoCL: the yardstick for the VM's cold start),
execution=persistent with no cache, with the shared directory, and a second
start (the shared directory and the driver's caches on, the model started
once before: an application's next start). Prints a
Markdown table with the ratios to the CPU's time, then where the kernel
set's and persistent's first result with no cache goes: load_delegate (the
device: on a GPU the driver's context), Interpreter + allocate_tensors +
inputs (the partition prepared, its programs built) and the first invoke
(on PoCL the work-group functions compiled; the VM's self-test). --repeat N: N rounds of
those cells per model, the median of each (the shared directory's file then
exists after the first round). --ab-env NAME=VALUE: two more cells per
model, the kernel set and persistent with no cache in processes with that
variable set, interleaved with the others (an A/B of the build time, such
as TFLITE_GPU_POLICY=inline_rare=1: the rare paths inlined on NVIDIA); repeat
it for more A/Bs (TFLITE_GPU_POLICY=build_threads=8: programs compiled on 8 threads).

--sequence: the models one after another, twice, each a fresh process
starting on one shared directory (per library: an A/B of two builds, the
runs interleaved), as an application that loads several models would. Per
start: the time to first result and whether it compiled the VM program
(TFLITE_GPU_BUILD_LOG=1). The device's VM file holds one program that grows
to the union of the bodies its models ran, so later models compile nothing.
"""
import json
import os
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.append(str(ROOT / "python"))  # the installed package first

from tflite_gpu import models  # noqa: E402

CHILD = r"""
import json, sys, time
import numpy as np
import tflite_gpu
mod = tflite_gpu.runtime()
path, cache = sys.argv[1], sys.argv[2]
t0 = time.perf_counter()
delegates = []
if cache != "cpu":
    opts = dict(execution="kernels" if cache == "kernels" else "persistent", log_level="silent")
    if cache not in ("kernels", "-"):
        opts.update(tflite_gpu.cache_options(cache, path))
    delegates.append(tflite_gpu.load_delegate(**opts))
t1 = time.perf_counter()
it = mod.Interpreter(model_path=path, experimental_delegates=delegates)
it.allocate_tensors()
for d in it.get_input_details():
    it.set_tensor(d["index"], np.zeros(d["shape"], d["dtype"]))
t2 = time.perf_counter()
it.invoke()
t3 = time.perf_counter()
print(json.dumps([t3 - t0, t1 - t0, t2 - t1, t3 - t2]))
"""
# The child's times: the whole first result, then its parts: load_delegate
# (the device: platform, context, queue), Interpreter + allocate_tensors +
# inputs (the partition prepared: its programs built or loaded), the first invoke.
PARTS = ("load_delegate", "Interpreter + inputs", "first invoke")


def first_result(path, cache, library=None, built=None, extra_env=None, parts=None):
    """Seconds to the first result in a fresh process (None: it failed);
    parts, a list: the child's PARTS appended."""
    env = dict(os.environ, POCL_KERNEL_CACHE="0", CUDA_CACHE_DISABLE="1")
    env.update(extra_env or {})
    if library:
        env["TFLITE_GPU_LIBRARY"] = library
    if built is not None:
        env["TFLITE_GPU_BUILD_LOG"] = "1"
    r = subprocess.run([sys.executable, "-c", CHILD, str(path), cache], env=env, capture_output=True, text=True)
    if built is not None:
        built.append(len(re.findall(r"tflite-gpu build vm_program\.cl ", r.stderr)))
    if r.returncode != 0:
        return None
    total, *split = json.loads(r.stdout.strip().splitlines()[-1])
    if parts is not None:
        parts.append(split)
    return total


def sequence(names, libraries):
    paths = models.fetch_models(names, progress=False)
    caches = []
    for _ in libraries:
        caches.append(tempfile.mkdtemp(prefix="vm-cache-"))
        os.chmod(caches[-1], 0o700)
    heads = "".join(f" | {lib} (s) | VM built" for lib in libraries)
    print(f"| start | model{heads} |")
    print("|---|---" + "|---:|---:" * len(libraries) + "|")
    totals = [[0.0, 0] for _ in libraries]
    for rnd in (1, 2):
        for name in names:
            cells = []
            for i, lib in enumerate(libraries):
                built = []
                t = first_result(paths[name], caches[i], lib if lib != "default" else None, built)
                cells.append("failed | -" if t is None else f"{t:.2f} | {'yes' if built[0] else 'no'}")
                if rnd == 1 and t is not None:
                    totals[i][0] += t
                    totals[i][1] += bool(built[0])
            print(f"| {rnd} | {name} | " + " | ".join(cells) + " |", flush=True)
    for lib, (t, n) in zip(libraries, totals):
        print(f"\n{lib}: first starts {t:.1f} s in all, {n} of {len(names)} built the VM program")


def main():
    args = sys.argv[1:]
    if args[:1] == ["--sequence"]:
        libraries, names = [], []
        it = iter(args[1:])
        for a in it:
            if a == "--library":
                libraries.append(next(it))
            else:
                names.append(a)
        return sequence(names or list(models.MODELS), libraries or ["default"])
    repeat, abs_ = 1, []
    while args[:1] in (["--repeat"], ["--ab-env"]):
        if args[0] == "--repeat":
            repeat = int(args[1])
        else:
            name, sep, value = args[1].partition("=")
            if not sep or not name:
                raise SystemExit(f"bench_vm_cache.py: --ab-env takes NAME=VALUE, not {args[1]!r}")
            abs_.append({name: value})
        args = args[2:]
    names = args or models.MODELS[:4]
    paths = models.fetch_models(names, progress=False)
    cache = tempfile.mkdtemp(prefix="vm-cache-")
    os.chmod(cache, 0o700)
    extra = ""
    for ab in abs_:
        tag = f" ({next(iter(ab))}={next(iter(ab.values()))})"
        extra += f" | kernels{tag} (s) | x CPU | persistent, no cache{tag} (s) | x CPU"
    print("| model | CPU (s) | kernels (s) | x CPU | persistent, no cache (s) | x CPU "
          f"| persistent, shared VM cache (s) | x CPU | persistent, second start (s) | x CPU{extra} |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:" + "|---:|---:|---:|---:" * len(abs_) + "|")
    # The second start: what an application's next start takes, the shared
    # directory and the driver's own caches on (private ones: NVIDIA's
    # compiled-PTX cache, PoCL's), the model started once before it.
    drivers = tempfile.mkdtemp(prefix="driver-caches-")
    second = {"CUDA_CACHE_DISABLE": "0", "CUDA_CACHE_PATH": os.path.join(drivers, "cuda"),
              "POCL_KERNEL_CACHE": "1", "POCL_CACHE_DIR": os.path.join(drivers, "pocl")}
    cells = [("cpu", None), ("kernels", None), ("-", None), (cache, None), (cache, second)]
    cells += [cell for ab in abs_ for cell in (("kernels", ab), ("-", ab))]
    split = {}  # model -> {cell label: [PARTS of each round]}
    labels = {1: "kernels", 2: "persistent, no cache"}
    for i, name in enumerate(names):
        split[name] = {label: [] for label in labels.values()}

        def cell(k, c, e):
            """Cell k's seconds; the second start's after a start that fills the caches."""
            if e is second and first_result(paths[name], c, extra_env=e) is None:
                return None
            return first_result(paths[name], c, extra_env=e, parts=split[name].get(labels.get(k)))

        runs = [[cell(k, c, e) for k, (c, e) in enumerate(cells)] for _ in range(repeat)]
        times = [None if None in col else statistics.median(col) for col in zip(*runs)]
        cpu = times[0]
        note = (" (writes the VM file)" if repeat == 1 else " (writes the VM file in round 1)") if i == 0 else ""
        f = lambda v: "failed" if v is None else f"{v:.2f}"  # noqa: E731
        r = lambda v: "–" if v is None or not cpu else f"{v / cpu:.0f}"  # noqa: E731
        print(f"| {name}{note} | {f(cpu)} | " + " | ".join(f"{f(v)} | {r(v)}" for v in times[1:]) + " |", flush=True)
    print("\nWhere the first result goes with no cache (s, median of the rounds): " + ", ".join(PARTS) + "\n")
    print("| model | " + " | ".join(f"{label}: {part}" for label in labels.values() for part in PARTS) + " |")
    print("|---|" + "---:|" * (len(labels) * len(PARTS)))
    for name, by_label in split.items():
        cells_out = []
        for label in labels.values():
            rounds = by_label[label]
            cells_out += [f"{statistics.median(col):.2f}" for col in zip(*rounds)] if rounds else ["failed"] * len(PARTS)
        print(f"| {name} | " + " | ".join(cells_out) + " |", flush=True)

if __name__ == "__main__":
    main()
