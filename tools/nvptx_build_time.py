#!/usr/bin/env python3
"""How long NVIDIA's OpenCL compiler would take on the programs a model
builds, measured without an NVIDIA GPU (cold start, issue 36 item 9).

NVIDIA's driver compiles OpenCL C to PTX and PTX to machine code with
ptxas; with CUDA_CACHE_DISABLE=1, or from a cached binary (which is PTX),
ptxas runs on every start. On an H200 the VM program's cold first result
was 3.0 s of which 2.6 s remained when the PTX came from the cache
(docs/benchmarks/gpu-h200-2026-11-27.md): ptxas is the cost. This tool
stands in for the driver's chain with clang's NVPTX back end and NVIDIA's
own ptxas (the PyPI wheel nvidia-cuda-nvcc-cu12 ships it; it runs without
a GPU):

  the programs: a model run on the local OpenCL device with
  TFLITE_GPU_BUILD_LOG=1 lists each program it compiles (file, options);
  TFLITE_GPU_COMPUTE_UNITS=132 sizes the VM's splits as on an H100/H200;
  per program: kernel_abi.h + common.cl + the file (vm_program.cl from
  tools/gen_vm.py), with the device's options turned into NVIDIA's
  (-DGD_POCL=1 -> -DGD_NVIDIA=1), clang -target nvptx64-nvidia-nvcl,
  linked with libclc's nvptx64 builtins, llc -> PTX, ptxas -arch=sm_90.
  LLVM's inliner runs with a threshold of 100000 (--inline-threshold):
  NVIDIA's compiler inlines more than clang's defaults. On the H200
  hand_recrop's GPU-set programs took longer to build than
  face_detection_short_range's (13.3 s against 8.4 s cold), which this
  proxy reproduces only with inlining that aggressive; with clang's
  defaults it left a conv's store helper out of line in one and not in
  the other, and its times ran the other way.

It prints per program the front end's seconds (clang..llc), ptxas's
seconds, the PTX's lines and the registers of each kernel, and the sums.
Absolute times are this machine's, not the GPU host's; use it for A/B:
--baseline DIR compiles each program from another tree's opencl_kernels
too, interleaved, and prints both (--define adds a define to every
program).

Needs: clang-15, llvm-15 (llvm-link, opt, llc), libclc-15 (Debian), and
ptxas (--ptxas, $PTXAS, or pip install nvidia-cuda-nvcc-cu12 into the
venv this runs from).

Usage: tools/nvptx_build_time.py MODEL [--opt KEY=VALUE ...] [--define=-DNAME=V ...]
                                 [--baseline OTHER_TREE/opencl_kernels] [--ptxas PATH]
"""
from __future__ import annotations

import argparse
import os
import pathlib
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
KERNELS = ROOT / "opencl_kernels"
sys.path.insert(0, str(ROOT / "tools"))
import gen_vm  # noqa: E402

LLVM = "15"
LIBCLC = pathlib.Path(f"/usr/lib/clc/nvptx64--nvidiacl.bc")
BUILD_LINE = re.compile(r"^tflite-gpu build (\S+) \[([^\]]*)\]: ([\d.]+) s$", re.M)
REGISTERS = re.compile(r"Compiling entry function '(\w+)'.*?\n.*?Used (\d+) registers", re.S)


def find_ptxas(given: str | None) -> str:
    for cand in (given, os.environ.get("PTXAS"),
                 str(pathlib.Path(sysconfig.get_paths()["purelib"]) / "nvidia/cuda_nvcc/bin/ptxas"),
                 shutil.which("ptxas")):
        if cand and os.access(cand, os.X_OK):
            return cand
    raise SystemExit("nvptx_build_time.py: no ptxas (pip install nvidia-cuda-nvcc-cu12, or --ptxas PATH)")


def programs(model: str, opts: list) -> list:
    """[(file, options)] the model builds here, from TFLITE_GPU_BUILD_LOG."""
    env = dict(os.environ, TFLITE_GPU_BUILD_LOG="1", POCL_KERNEL_CACHE="0")
    env.setdefault("TFLITE_GPU_COMPUTE_UNITS", "132")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "python"), env.get("PYTHONPATH")]))
    cmd = [sys.executable, "-m", "tflite_gpu", "explain", model] + [a for o in opts for a in ("--opt", o)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    found = BUILD_LINE.findall(out.stderr + out.stdout)
    if not found:
        raise SystemExit(f"nvptx_build_time.py: {model} built no program (rc {out.returncode}):\n{out.stderr[-2000:]}")
    seen, result = set(), []
    for file, options, _ in found:
        if (file, options) not in seen:
            seen.add((file, options))
            result.append((file, options))
    return result


def nvidia_options(options: str, extra: list) -> list:
    """The PoCL build's options as NVIDIA's: its device define, no -cl-std
    (given once below)."""
    words = [w for w in options.split() if w != "-DGD_POCL=1" and not w.startswith("-cl-std")]
    return ["-DGD_NVIDIA=1"] + words + list(extra)


def source(kernels: pathlib.Path, file: str) -> str:
    body = gen_vm.vm_program_source(kernels) if file == "vm_program.cl" else (kernels / file).read_text()
    return "\n".join([(kernels / "kernel_abi.h").read_text(), (kernels / "common.cl").read_text(), body])


def compile_one(kernels: pathlib.Path, file: str, defines: list, ptxas: str, work: pathlib.Path,
                inline: int) -> dict:
    src = work / "program.cl"
    src.write_text(source(kernels, file))
    t0 = time.perf_counter()
    steps = [
        [f"clang-{LLVM}", "-x", "cl", "-cl-std=CL1.2", "-target", "nvptx64-nvidia-nvcl", "-Xclang",
         "-finclude-default-header", "-O2", "-mllvm", f"-inline-threshold={inline}", "-emit-llvm", "-c", "-w",
         "-o", str(work / "a.bc")] + defines + [str(src)],
        [f"llvm-link-{LLVM}", "--only-needed", "--suppress-warnings", str(work / "a.bc"), str(LIBCLC),
         "-o", str(work / "b.bc")],
        [f"opt-{LLVM}", "-O2", f"-inline-threshold={inline}", str(work / "b.bc"), "-o", str(work / "c.bc")],
        [f"llc-{LLVM}", "-O2", "-mcpu=sm_80", "-mattr=+ptx75", str(work / "c.bc"), "-o", str(work / "a.ptx")],
    ]
    for cmd in steps:
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode:
            raise SystemExit(f"nvptx_build_time.py: {' '.join(cmd[:1])} failed on {file} {' '.join(defines)}:\n"
                             f"{r.stderr[-3000:]}")
    t1 = time.perf_counter()
    r = subprocess.run([ptxas, "-arch=sm_90", "-v", str(work / "a.ptx"), "-o", str(work / "a.cubin")],
                       capture_output=True, text=True)
    t2 = time.perf_counter()
    if r.returncode:
        raise SystemExit(f"nvptx_build_time.py: ptxas failed on {file}:\n{r.stderr[-3000:]}")
    regs = {k: int(n) for k, n in REGISTERS.findall(r.stderr)}
    lines = (work / "a.ptx").read_text().count("\n")
    return {"front": t1 - t0, "ptxas": t2 - t1, "ptx_lines": lines, "registers": regs}


def ptx_functions(ptx: str) -> list:
    """[(function, PTX lines)] of a PTX file, largest first: each .entry or
    .func from its header to the next one's."""
    starts = [(m.start(), m.group(1)) for m in re.finditer(r"^(?:\.visible\s+|\.weak\s+)?\.(?:entry|func)\s*(?:\([^)]*\)\s*)?(\w+)",
                                                           ptx, re.M)]
    sizes = [(name, ptx.count("\n", at, starts[i + 1][0] if i + 1 < len(starts) else len(ptx)))
             for i, (at, name) in enumerate(starts)]
    return sorted(sizes, key=lambda fn: -fn[1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", help="a model name (tflite-gpu models) or .tflite path")
    ap.add_argument("--opt", action="append", default=[], help="delegate option KEY=VALUE (repeatable)")
    ap.add_argument("--define", action="append", default=[], help="extra define for every program: --define=-DNAME=VALUE")
    ap.add_argument("--baseline", help="another tree's opencl_kernels directory, compiled too (A/B)")
    ap.add_argument("--inline-threshold", type=int, default=100000, help="LLVM's (clang's default: 225)")
    ap.add_argument("--ptxas", help="ptxas to run (default: $PTXAS, the venv's nvidia-cuda-nvcc-cu12, PATH)")
    ap.add_argument("--functions", type=int, default=0, metavar="N",
                    help="also list each program's N largest PTX functions (lines), where its size is")
    args = ap.parse_args(argv)
    for tool in (f"clang-{LLVM}", f"llvm-link-{LLVM}", f"opt-{LLVM}", f"llc-{LLVM}"):
        if not shutil.which(tool):
            raise SystemExit(f"nvptx_build_time.py: no {tool} (apt install clang-{LLVM} llvm-{LLVM})")
    if not LIBCLC.exists():
        raise SystemExit(f"nvptx_build_time.py: no {LIBCLC} (apt install libclc-{LLVM})")
    ptxas = find_ptxas(args.ptxas)
    progs = programs(args.model, args.opt)
    trees = [("", KERNELS)] + ([("baseline ", pathlib.Path(args.baseline))] if args.baseline else [])
    cols = ["front s", "ptxas s", "PTX lines", "registers"]
    head = [f"{name}{c}" for name, _ in reversed(trees) for c in cols]
    print("| program | options | " + " | ".join(head) + " |\n|---|---|" + "---:|" * len(head))
    totals = {name: [0.0, 0.0, 0] for name, _ in trees}
    with tempfile.TemporaryDirectory() as tmp:
        for file, options in progs:
            defines = nvidia_options(options, args.define)
            cells = []
            for name, kernels in reversed(trees):
                r = compile_one(kernels, file, defines, ptxas, pathlib.Path(tmp), args.inline_threshold)
                t = totals[name]
                t[0], t[1], t[2] = t[0] + r["front"], t[1] + r["ptxas"], t[2] + r["ptx_lines"]
                regs = ", ".join(f"{k} {n}" for k, n in sorted(r["registers"].items(), key=lambda kv: -kv[1])[:2])
                cells += [f"{r['front']:.2f}", f"{r['ptxas']:.2f}", str(r["ptx_lines"]), regs]
            print(f"| {file} | {' '.join(defines[1:])} | " + " | ".join(cells) + " |", flush=True)
            if args.functions:
                sizes = ptx_functions((pathlib.Path(tmp) / "a.ptx").read_text())[:args.functions]
                print("|  | largest functions: " + ", ".join(f"{f} {n}" for f, n in sizes) + " |" + " |" * len(cells),
                      flush=True)
    cells = [x for name, _ in reversed(trees) for x in (f"{totals[name][0]:.2f}", f"{totals[name][1]:.2f}",
                                                         str(totals[name][2]), "")]
    print(f"| **{len(progs)} programs** | | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
