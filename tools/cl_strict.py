#!/usr/bin/env python3
"""The strict-compiler gate: every OpenCL program the library can build,
through clang's OpenCL C 1.2 front end with -pedantic-errors -Werror.

PoCL, Intel's runtime and Oclgrind accept extensions of OpenCL C that
NVIDIA's compiler (and Mali's, Adreno's) reject: a variadic macro in
common.cl stopped every kernel on the first real GPU. So a kernel counts as
portable only once a strict compiler accepts it. Each program is compiled
as the library builds it (kernel_abi.h + common.cl + the file, with the
device's options and the variant's defines; delegate_c/cl/cl_device.c) for a
SPIR target, at -O0 with the IR kept, and must:
  - compile with no diagnostic at all under -cl-std=CL1.2 -pedantic-errors
    -Werror, with only NVIDIA's OpenCL C extensions enabled (no cl_khr_fp16)
    or, for HALF_MATH programs (built only where the device has
    cl_khr_fp16), with those plus cl_khr_fp16;
  - leave no helper function undefined at -O0 (a C99 `inline` without
    `static` emits no definition: a compiler that does not inline cannot
    link the kernel). Declarations left in the IR must be OpenCL builtins
    (mangled, _Z...) or LLVM intrinsics.

The programs (programs() below): every kernel file under each device's
options (-DGD_POCL=1 on PoCL, -DGD_NVIDIA=1 on NVIDIA, none elsewhere) and
each storage (FP32, FP16, and an FP16 partition's node kept on float:
mixed); every kernel alone (each GD_KSEL
bit) under each storage; and once, under one (device, storage) pair in
turn, every variant define the selectors set (select_*.c): the GPU set's
one-pixel row kernels, HALF_MATH, and every work-group size the selectors
choose or variant_fit_group / SUSTAINED_SPEED tuning can shrink them to
(powers of two up to the selector's largest).
tests/test_cl_strict.py checks that this list covers every define the
kernel files test and every program the library built on real models.

Usage: tools/cl_strict.py [--kernels DIR] [--files a.cl,b.cl] [--clang PATH] [--jobs N] [--list]
Exit status: 0 when every program is accepted, 1 when one is not, 2 when no
usable clang is found.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import functools
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import gen_vm  # noqa: E402

KERNELS = pathlib.Path(__file__).resolve().parent.parent / "opencl_kernels"
# The VM program's opcode words, and the one where the float copies start (kernel_abi.h).
_OPS_WORDS = gen_vm._abi_value(KERNELS, "VM_OPS_WORDS")
_COPY_WORD = gen_vm._abi_value(KERNELS, "VM_FLOAT_COPY") // gen_vm._abi_value(KERNELS, "VM_OPS_BITS")

# The OpenCL C extensions of NVIDIA's driver 580 (H200,
# ../shared/reference/gpu-h200-2026-11-26.md) that clang knows; the rest of
# its list (cl_nv_*, external memory, semaphores, ...) adds nothing to the
# language. No cl_khr_fp16.
NVIDIA_EXTENSIONS = ("cl_khr_fp64", "cl_khr_byte_addressable_store", "cl_khr_3d_image_writes",
                     "cl_khr_global_int32_base_atomics", "cl_khr_global_int32_extended_atomics",
                     "cl_khr_local_int32_base_atomics", "cl_khr_local_int32_extended_atomics",
                     "cl_khr_int64_base_atomics", "cl_khr_int64_extended_atomics")
FP16_EXTENSIONS = NVIDIA_EXTENSIONS + ("cl_khr_fp16",)

# The device options (cl_device.c compose_build_options, less -cl-std) and
# the storage defines (FP16_STORAGE from the device, FP32_STORAGE per node:
# dispatch.c storage_defines).
DEVICES = {"other": "", "pocl": "-DGD_POCL=1"}
# NVIDIA's path (-DGD_NVIDIA=1: PTX inline assembly, grid_sync.cl; common.cl's
# GD_NOINLINE), compiled for clang's NVPTX target: SPIR has no PTX
# register constraints. Same language rules, same extensions.
NVIDIA_DEVICE = "-DGD_NVIDIA=1"
NVPTX = "nvptx64-nvidia-nvcl"
STORAGES = {"fp32": "", "fp16": "-DFP16_STORAGE=1", "mixed": "-DFP16_STORAGE=1 -DFP32_STORAGE=1"}


def _pow2_upto(n: int) -> list[int]:
    return [1 << i for i in range(n.bit_length()) if 1 << i <= n]


def _groups(x_name: str, max_x: int, y_name: str, max_y: int, max_items: int = 256) -> list[str]:
    """Every power-of-two (x, y) group up to the largest the selector starts
    from, of at most max_items work-items: variant_fit_group halves the
    wider side until the device's limit fits, and tuning halves it further."""
    return [f"-D{x_name}={x} -D{y_name}={y}" for x in _pow2_upto(max_x) for y in _pow2_upto(max_y)
            if x * y <= max_items]


# Variant defines per file, beside "" (the file's own defaults). Each knob
# varies alone, the others at their defaults. Sources: select_elementwise.c
# (the GPU set's one-pixel row kernels; HALF_MATH with FP16 storage on a
# cl_khr_fp16 device), select_conv_gpu.c (conv 16 x 4 or 64 x 1, fused
# depthwise + 1x1 up to 16 x 16, depthwise 8 x 8, 1x1 + depthwise 64),
# select_reduce.c (WG 64 or 256); each group may shrink (variant_fit_group).
VARIANTS = {
    "elementwise.cl": ["-DROW_PIXELS=1", "-DROW_PIXELS=1 -DHALF_MATH=1"],
    "layout.cl": ["-DLAYOUT_PIXELS=1"],
    "resize.cl": ["-DRESIZE_PIXELS=1"],
    # conv: 16 x 4 or 64 x 1, and a fused depthwise + 1x1 up to 16 x 16
    # (fuse_dw_conv.h DW_1X1_MAX_ROWS).
    # each conv group also storing its output as BHWC float32 (output_direct.c)
    "conv_gpu.cl": _groups("CONVG_LX", 64, "CONVG_LY", 16) + ["-DEPI_UN=1"]
    + ["-DCONVG_DST_BHWC=1"] + [g + " -DCONVG_DST_BHWC=1" for g in _groups("CONVG_LX", 64, "CONVG_LY", 16)],
    # depthwise 8 x 8, and pw_depthwise_gpu's group, shrunk from 64
    "depthwise_gpu.cl": _groups("DWG_LX", 8, "DWG_LY", 8) + [f"-DPWDW_WG={w}" for w in _pow2_upto(32)],
    # the unary epilogue steps and chains (common.cl's epilogue_step and
    # epilogue_chain, ops_conv.c dispatch_conv): the same code in every conv
    # file and the VM program; conv.cl's and the GPU set's conv programs,
    # and the VM program, are built so for the MediaPipe models
    # (selfie_segmentation's gate is an EPI_BINARY step)
    "conv.cl": ["-DEPI_UN=1"],
    "fc_gpu.cl": [f"-DWG={w}" for w in _pow2_upto(256)],
    "reduce_gpu.cl": [f"-DWG={w}" for w in _pow2_upto(256)],
    "grid_sync.cl": ["-DGS_LITMUS_READ_EARLY=1"],  # tools/cl_grid_barrier.py's test hook
    # besides every opcode and float copy (VM_BASE), one opcode: the
    # library's opcode masks only drop cases; one opcode and its float copy
    # (an FP16 program running fp16_guard's float nodes); and every opcode
    # with the epilogue steps (-DEPI_UN=1, above), some of the unary and
    # binary ops (the others' cases give NaN; conv.cl's build has them all)
    "vm_program.cl": ["-DGD_VM_PROGRAM=1 -DVM_OPS_0=0x1 -DVM_OPS_1=0x0 -DVM_OPS_2=0x0",
                      "-DGD_VM_PROGRAM=1 -DVM_OPS_0=0x1 -DVM_OPS_1=0x0 -DVM_OPS_2=0x0 " + " ".join(
                          f"-DVM_OPS_{w}=0x{int(w == _COPY_WORD):x}" for w in range(3, _OPS_WORDS)),
                      "-DGD_VM_PROGRAM=1 -DEPI_UN=1 -DGD_UN_OPS=0x18 -DGD_BIN_OPS=0x103"],
}
# Defines the kernel files test that are not variant knobs: set by the
# device (GD_POCL, FP16_STORAGE), per node (FP32_STORAGE), by the kernel
# selection (GD_KSEL) or the VM program's math ops (GD_UN_OPS, GD_BIN_OPS:
# one variant above), or derived inside the sources.
# GD_INLINE_RARE and GD_VLOAD (NVIDIA's A/Bs of common.cl's GD_NOINLINE and
# aligned LOAD4) give the code every other device compiles; GD_CHECK_ALIGN
# is a test hook (tests/test_aligned_access.py builds it on PoCL).
BASE_DEFINES = {"GD_POCL", "GD_NVIDIA", "GD_INLINE_RARE", "GD_VLOAD", "GD_CHECK_ALIGN", "FP16_STORAGE",
                "FP32_STORAGE", "HALF_MATH", "GD_KSEL", "GD_UN_OPS", "GD_BIN_OPS"}

SELECTED = re.compile(r"^#if GD_SELECTED\((\w+), (\d+)\)\s*$", re.M)


@dataclasses.dataclass(frozen=True)
class Program:
    file: str
    defines: str  # as passed to the compiler, device and storage options included
    extensions: tuple
    std: str = "CL1.2"
    target: str = "spir64"

    def label(self) -> str:
        opts = " ".join(x for x in ("" if self.std == "CL1.2" else f"-cl-std={self.std}",
                                    "" if self.target == "spir64" else f"--target={self.target}", self.defines) if x)
        return f"{self.file} [{opts}]" if opts else self.file


def kernel_bits(source: str) -> list[int]:
    """The GD_KSEL bits of a file's GD_SELECTED blocks (tools/embed_kernels.py)."""
    return [int(m.group(2)) for m in SELECTED.finditer(source)]


VM_PROGRAM = "vm_program.cl"  # generated (tools/gen_vm.py): every CPU-set file, the VM's dispatch and kernel
VM_BASE = "-DGD_VM_PROGRAM=1"  # as the library builds it (vm.c): the bodies without their kernels


@functools.lru_cache(maxsize=None)  # the VM program's source takes gen_vm 0.7 s; a gate run reads it per program
def source_of(kernels: pathlib.Path, name: str) -> str:
    if name == VM_PROGRAM:
        return gen_vm.vm_program_source(kernels)
    return (kernels / name).read_text()


def programs(kernels: pathlib.Path = KERNELS, files: list[str] | None = None) -> list[Program]:
    """Per file: the whole file under every device and storage; each kernel
    alone (GD_KSEL) under every storage, the devices in turn; each variant
    (VARIANTS) once, the (device, storage) pairs in turn. A kernel's
    selection and a variant's group sizes do not interact with the device's
    defines (a variant's not with the storage's either): the whole cross
    product is 2-9 times the compiles for nothing the turns miss. covered()
    below is the rule the coverage test applies."""
    names = files or sorted(p.name for p in kernels.glob("*.cl") if p.name != "common.cl") + [VM_PROGRAM]
    out = []
    for name in names:
        text = source_of(kernels, name)
        bits = kernel_bits(text) if name != VM_PROGRAM else []
        selections = [VM_BASE if name == VM_PROGRAM else ""] + [f"-DGD_KSEL={hex(1 << b)}" for b in bits]
        # common.cl tests GD_NVIDIA (GD_NOINLINE): every file has NVIDIA's path
        devices = list(DEVICES.values()) + [NVIDIA_DEVICE]
        pairs = [(d, s) for d in devices for s in STORAGES.values()]

        def add(device, storage, extra):
            exts = FP16_EXTENSIONS if "HALF_MATH" in extra else NVIDIA_EXTENSIONS
            out.append(Program(name, " ".join(x for x in (device, storage, extra) if x), exts,
                               target=NVPTX if device == NVIDIA_DEVICE else "spir64"))
        for device, storage in pairs:
            add(device, storage, selections[0])
        # each kernel alone (an unused helper is a -Werror warning) under each
        # storage, and the devices in turn
        turn = 0
        for extra in selections[1:]:
            for storage in STORAGES.values():
                add(devices[turn % len(devices)], storage, extra)
                turn += 1
        for extra in VARIANTS.get(name, []):
            # the selector sets HALF_MATH with FP16 storage only (common.cl drops it otherwise)
            fits = [p for p in pairs if "HALF_MATH" not in extra or p[1] == STORAGES["fp16"]]
            add(*fits[turn % len(fits)], extra)
            turn += 1
        # An OpenCL C 1.1 device gets -cl-std=CL1.1 (cl_device.c), which has
        # no `static` (common.cl's GD_INLINE): each file once per storage.
        out += [Program(name, " ".join(x for x in (storage, selections[0]) if x), NVIDIA_EXTENSIONS, "CL1.1")
                for storage in STORAGES.values()]
    return out


# The device and storage defines of a program's options (DEVICES,
# NVIDIA_DEVICE, STORAGES); the rest are its selection and variant.
_PAIR_WORDS = {w for v in (*DEVICES.values(), NVIDIA_DEVICE, *STORAGES.values()) for w in v.split()}


def _split(words) -> tuple[frozenset, frozenset]:
    pair = frozenset(w for w in words if w in _PAIR_WORDS)
    return pair, frozenset(words) - pair


# The VM program's masks of opcodes and math ops, which only drop switch
# cases (its variants above compile every body, and masked math).
VM_MASKS = ("-DVM_OPS_", "-DGD_UN_OPS=", "-DGD_BIN_OPS=")


def covered(listed: list[Program], file: str, words) -> bool:
    """Whether the gate compiles what a program of `file` with these define
    words (no -cl-std, no GD_KSEL mask, no VM_MASKS) would: its device and
    storage pair with the whole file, and its selection and variant under
    some pair."""
    pair, rest = _split(words)
    mine = [_split([w for w in p.defines.split() if not w.startswith(VM_MASKS)])
            for p in listed if p.file == file and p.std == "CL1.2"]
    return any(q == pair for q, _ in mine) and any(r == rest for _, r in mine)


# What a usable clang must compile under the gate's flags: clang 14 loses
# vload_half's declaration with -cl-ext=-all (clang 15, a dependency of
# Debian's PoCL, and later do not).
_PROBE = "__kernel void k(__global const half* p, __global float* q) { vstore4(vload_half4(0, p), 0, q); }\n"


def _flags(extensions, std: str = "CL1.2", target: str = "spir64") -> list[str]:
    return [f"--target={target}", "-x", "cl", f"-cl-std={std}", "-pedantic-errors", "-Werror", "-Xclang",
            "-finclude-default-header", "-Xclang", "-cl-ext=-all," + ",".join("+" + e for e in extensions)]


def find_clang(explicit: str | None = None) -> str | None:
    """The newest clang that compiles OpenCL C under the gate's flags."""
    names = [explicit] if explicit else [f"clang-{v}" for v in range(30, 14, -1)] + ["clang"]
    for name in names:
        path = shutil.which(name)
        if path and subprocess.run([path, *_flags(NVIDIA_EXTENSIONS), "-fsyntax-only", "-"], input=_PROBE,
                                   capture_output=True, text=True).returncode == 0:
            return path
    return None


# Declarations an -O0 module may keep: OpenCL builtins (overloadable, so
# mangled) and LLVM intrinsics.
_DECLARE = re.compile(r"^declare\b.*?@([\w.$]+)\(", re.M)


def undefined_functions(ir: str) -> list[str]:
    return sorted({n for n in _DECLARE.findall(ir) if not n.startswith(("_Z", "llvm."))})


def check(program: Program, clang: str, kernels: pathlib.Path = KERNELS) -> str | None:
    """None when the strict compile accepts the program, else why not."""
    source = "".join(source_of(kernels, f) for f in ("kernel_abi.h", "common.cl", program.file))
    cmd = [clang, *_flags(program.extensions, program.std, program.target), "-O0", "-emit-llvm", "-S", "-o", "-", *program.defines.split(), "-"]
    p = subprocess.run(cmd, input=source, capture_output=True, text=True)
    if p.returncode != 0 or p.stderr.strip():
        lines = [ln for ln in p.stderr.splitlines() if "error" in ln or "warning" in ln] or p.stderr.splitlines()
        return "; ".join(lines[:3]) or f"clang exited {p.returncode}"
    missing = undefined_functions(p.stdout)
    if missing:
        return f"helper(s) left undefined at -O0 (a plain C99 inline?): {', '.join(missing)}"
    return None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernels", type=pathlib.Path, default=KERNELS, help="the kernel directory (default: the repo's)")
    ap.add_argument("--files", help="only these kernel files (comma-separated)")
    ap.add_argument("--clang", help="the clang to use (default: the newest clang-N found)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--list", action="store_true", help="print the programs and exit")
    args = ap.parse_args(argv)
    progs = programs(args.kernels, args.files.split(",") if args.files else None)
    if args.list:
        print("\n".join(p.label() for p in progs))
        return 0
    clang = find_clang(args.clang)
    if not clang:
        print("cl_strict: no clang (15 or later) that compiles OpenCL C 1.2 found (apt-get install clang-15)",
              file=sys.stderr)
        return 2
    t0 = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        results = list(pool.map(lambda p: (p, check(p, clang, args.kernels)), progs))
    failed = [(p, why) for p, why in results if why]
    by_reason: dict[str, list[Program]] = {}
    for p, why in failed:  # one line per distinct reason: one bad macro rejects hundreds of programs
        by_reason.setdefault(re.sub(r"<stdin>:\d+:\d+: ", "", why), []).append(p)
    for why, progs_ in by_reason.items():
        more = f" and {len(progs_) - 1} more program(s)" if len(progs_) > 1 else ""
        print(f"REJECTED {progs_[0].label()}{more}: {why}")
    files = len({p.file for p in progs})
    version = subprocess.run([clang, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    print(f"cl_strict: {len(progs) - len(failed)} of {len(progs)} programs ({files} files) accepted by {version} "
          f"as OpenCL C 1.2 (1.1 for a 1.1 device; -pedantic-errors -Werror, NVIDIA's extensions; -O0: no "
          f"helper undefined) "
          f"in {time.monotonic() - t0:.1f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
