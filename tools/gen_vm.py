"""The VM program (issue 36): one OpenCL program that runs a partition's
dispatch list as data, from the kernels' own bodies.

Every kernel written as an OUTLINED_KERNEL (common.cl; the CPU set's) has a
body function taking its work-item's id; the VM calls those bodies for
virtual work-items. Every GROUP_KERNEL (common.cl; the GPU set's fc_gpu.cl,
reduce_gpu.cl, depthwise_gpu.cl and conv_gpu.cl) has a body taking its work-group's id,
its work-item's local id and its __local memory; the VM calls those for
virtual work-groups, a physical group of the same size running them in
turn. So a kernel and its VM opcode run the same code. This module finds
them (the C preprocessor expands the kernel files, whose kernels are often
defined by macros, and the signatures are read from the expansion) and
writes:

- vm_program_source(): the program's file, "vm_program.cl": every body
  file (each file's own macros undefined after it, so that they cannot
  clash), vm_call and vm_gcall (switches from opcode to body, each argument
  unpacked from the op list's words), grid_sync.cl and vm/vm_run.cl;
  built with -DGD_VM_PROGRAM=1 (the bodies without their kernels,
  common.cl) and -DVM_OPS_<w>=<mask> per word of VM_OPS_BITS opcodes (kernel_abi.h): the
  opcodes a partition runs, so that only their bodies are compiled (the
  library, vm.c; no VM_OPS_0: every opcode; a word left out: none of its);
- in the same program, the bodies' float copies (opcode + VM_FLOAT_COPY):
  common.cl and the kernel files once more, with -DFP32_STORAGE=1 and every
  name they define at file scope renamed NAME__f, so that an FP16 program
  runs the nodes mixed_storage.c keeps on float (fp16_guard) in the same
  launch. Compiled only when a word of them is set (words 3..);
- vm_table() and vm_groups(): per opcode, the kernel's file, name and
  argument kinds, and a group body's shape and __local memory, for the
  library (kernels_embedded.c: embedded_vm_opcode, embedded_vm_group) to
  encode a dispatch as an op.

Argument kinds, one letter each, and the words an op stores for them:
p a buffer the body may write and c one it only reads (`const`; the library
lets phases that touch no buffer another writes share a barrier interval,
vm.c) (2: the space, 0 activations and staging buffers, 1 the other
buffers, and the byte offset in it), i int or uint (1), f float (1), 2 int2
(2), 4 int4 (4), d float2 (2), q float4 (4). A kernel taking anything else has no opcode (its dispatches run
as kernels). Used by tools/embed_kernels.py and tools/cl_strict.py.
"""
from __future__ import annotations

import os
import pathlib
import re
import shlex
import shutil
import subprocess

# Files whose kernels are not bodies the VM can call: the barrier probe,
# the VM itself.
NOT_BODIES = re.compile(r"(^grid_sync|^common|^vm_program)\.cl$")
KINDS = {"int": "i", "uint": "i", "float": "f", "int2": "2", "int4": "4", "float2": "d", "float4": "q"}
WORDS = {"p": 2, "c": 2, "i": 1, "f": 1, "2": 2, "4": 4, "d": 2, "q": 4}

_OUTLINED = re.compile(r"__kernel\s+void\s+(\w+)\s*\(([^)]*)\)\s*\{\s*(\w+)_body\s*\(\s*get_global_id\s*\(\s*0\s*\)")
# A GROUP_KERNEL (common.cl) as the preprocessor writes it: group shape,
# kernel, parameters, __local float4s (an arithmetic expression), body.
_GROUP = re.compile(r"__kernel\s+__attribute__\s*\(\(\s*reqd_work_group_size\s*\(([^,]+),([^,]+),[^)]+\)\s*\)\)\s*"
                    r"void\s+(\w+)\s*\(([^)]*)\)\s*\{\s*__local\s+float4\s+lmem\s*\[([^\]]+)\]\s*;\s*(\w+)_gbody\s*\(")
_ARITH = re.compile(r"[\d\s()+*/-]+$")
_DEFINE = re.compile(r"^\s*#\s*define\s+(\w+)", re.M)


_TOKEN = re.compile(r"\w+|\S")
_NAME = re.compile(r"[A-Za-z_]\w*$")
FLOAT_SUFFIX = "__f"


def _declared(stmt: list):
    """The name a file-scope declaration's tokens declare (a function, a
    typedef, a program-scope variable), or None."""
    toks, i = [], 0
    while i < len(stmt):  # drop __attribute__((...))
        if stmt[i] == "__attribute__":
            depth, i = 0, i + 1
            while i < len(stmt):
                depth += (stmt[i] == "(") - (stmt[i] == ")")
                i += 1
                if depth == 0:
                    break
            continue
        toks.append(stmt[i])
        i += 1
    if "(" in toks:
        k = toks.index("(")
        return toks[k - 1] if k and _NAME.match(toks[k - 1]) else None
    cut = next((k for k, t in enumerate(toks) if t in ("=", "[")), len(toks))
    names = [t for t in toks[:cut] if _NAME.match(t) and t not in ("struct", "union", "enum")]
    return names[-1] if names else None


def top_level_names(text: str) -> set:
    """Every name preprocessed OpenCL C `text` defines at file scope:
    functions, typedefs, program-scope variables and enum constants."""
    code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))  # pragmas
    toks = _TOKEN.findall(code)
    names, depth, stmt = set(), 0, []
    for i, t in enumerate(toks):
        if t == "{":
            if depth == 0:
                if "enum" in stmt:
                    j, inner = i + 1, 0
                    while toks[j] != "}" or inner:
                        inner += (toks[j] in "({") - (toks[j] in ")}")
                        if inner == 0 and _NAME.match(toks[j]) and toks[j + 1] in ("=", ",", "}"):
                            names.add(toks[j])
                        j += 1
                if "(" in stmt:  # a function's body: its declaration ends here
                    names.add(_declared(stmt))
                    stmt = []
                else:
                    stmt.append("{}")
            depth += 1
        elif t == "}":
            depth -= 1
        elif depth == 0 and t == ";":
            names.add(_declared(stmt))
            stmt = []
        elif depth == 0:
            stmt.append(t)
    return names - {None}


def body_files(kernels: pathlib.Path) -> list:
    return sorted(p for p in kernels.glob("*.cl") if not NOT_BODIES.search(p.name))


def _preprocessor() -> list:
    """A C preprocessor command: $CPP, else cpp, else $CC/cc/gcc/clang -E."""
    if os.environ.get("CPP"):
        return shlex.split(os.environ["CPP"])
    if shutil.which("cpp"):
        return ["cpp"]
    for cc in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if cc and shutil.which(shlex.split(cc)[0]):
            return [*shlex.split(cc), "-E"]
    raise SystemExit("gen_vm.py: no C preprocessor (cpp, cc -E) to read the kernels' signatures")


def _expanded(kernels: pathlib.Path, text: str, head=("kernel_abi.h", "common.cl"), defines=()) -> str:
    """`text` preprocessed after the files of `head` (what comes out of them left out)."""
    marker = "int gd_vm_marker_line;"
    text = "".join((kernels / n).read_text() for n in head) + marker + "\n" + text
    out = subprocess.run([*_preprocessor(), "-P", "-undef", "-nostdinc", "-x", "c", "-D__OPENCL_C_VERSION__=120",
                          *defines, "-"], input=text, capture_output=True, text=True, check=True).stdout
    return out.split(marker, 1)[1]


def _param(text: str):
    """(kind, C type for a cast or None) of one parameter, or None when the VM cannot pass it."""
    words = text.replace("*", " * ").split()
    if "*" in words:
        if "__global" not in words and "global" not in words:
            return None  # __local or __constant: not a buffer of the VM's spaces
        decl = " ".join(w for w in words[:-1] if w not in ("restrict", "__restrict"))
        return ("c" if "const" in words[:words.index("*")] else "p"), decl.replace(" *", "*")
    kind = KINDS.get(words[-2]) if len(words) >= 2 else None
    return (kind, None) if kind else None


def _constant(text: str) -> int:
    """A preprocessed integer constant expression of a GROUP_KERNEL (C's / on ints)."""
    if not _ARITH.match(text):
        raise SystemExit(f"gen_vm.py: a GROUP_KERNEL's size is not a constant: {text!r}")
    return int(eval(text.replace("/", "//"), {"__builtins__": {}}))  # digits and + - * / ( ) only


def bodies(kernels: pathlib.Path) -> list:
    """[(file, kernel, body function, [(kind, cast)], group)], in a fixed
    order; group: None for a body per work-item (OUTLINED_KERNEL), else
    (LX, LY, __local float4s) of a GROUP_KERNEL's body."""
    out = []
    for f in body_files(kernels):
        # GD_VM_SCAN: a kernel written twice (conv_gpu.cl's CONVG_KERNEL)
        # shows its GROUP_KERNEL form here.
        text = _expanded(kernels, f.read_text(), defines=("-DGD_VM_SCAN=1",))
        found = [(m.start(), m.group(1), m.group(2), m.group(3) + "_body", None) for m in _OUTLINED.finditer(text)]
        found += [(m.start(), m.group(3), m.group(4), m.group(6) + "_gbody",
                   (_constant(m.group(1)), _constant(m.group(2)), _constant(m.group(5)))) for m in _GROUP.finditer(text)]
        for _, name, params, body, group in sorted(found):
            parsed = [_param(p) for p in params.split(",")]
            if all(parsed):
                out.append((f.name, name, body, parsed, group))
    return out


def _call(body: str, params: list, renamed=frozenset(), first=("v",)) -> str:
    """The call of a body from vm_call (first: the arguments before the
    kernel's); renamed: the names of the float copy (body and casts get
    FLOAT_SUFFIX)."""
    def name(text):
        return re.sub(r"\w+", lambda m: m.group(0) + FLOAT_SUFFIX if m.group(0) in renamed else m.group(0), text)
    args, w = list(first), 0
    for kind, cast in params:
        if kind in "pc":
            args.append(f"({name(cast)})(vm_space(a[{w}], VM_SPACES) + a[{w + 1}])")
        elif kind == "i":
            args.append(f"a[{w}]")
        elif kind == "f":
            args.append(f"as_float(a[{w}])")
        elif kind == "2":
            args.append(f"(int2)(a[{w}], a[{w + 1}])")
        elif kind == "4":
            args.append(f"(int4)(a[{w}], a[{w + 1}], a[{w + 2}], a[{w + 3}])")
        elif kind == "d":
            args.append(f"as_float2((int2)(a[{w}], a[{w + 1}]))")
        else:
            args.append(f"as_float4((int4)(a[{w}], a[{w + 1}], a[{w + 2}], a[{w + 3}]))")
        w += WORDS[kind]
    return f"{name(body)}({', '.join(args)})"


def _abi_value(kernels: pathlib.Path, name: str) -> int:
    return int(re.search(rf"{name} = (\d+)", (kernels / "kernel_abi.h").read_text()).group(1))


def _file_guards(kernels: pathlib.Path, table: list, base: int) -> dict:
    """Per body file, the preprocessor condition that one of its opcodes
    (from opcode `base` on: 0, or VM_FLOAT_COPY for the float copies) is in
    the program's VM_OPS masks. A file with none is skipped whole: the
    front end neither parses nor compiles it (each file compiles alone as
    its own program, so no other file needs its definitions)."""
    bits = _abi_value(kernels, "VM_OPS_BITS")
    words: dict = {}
    for i, (file, *_rest) in enumerate(table):
        w, b = divmod(base + i, bits)
        words.setdefault(file, {}).setdefault(w, 0)
        words[file][w] |= 1 << b
    return {f.name: " || ".join(f"(VM_OPS_{w} & 0x{m:x})" for w, m in sorted(words.get(f.name, {}).items())) or "0"
            for f in body_files(kernels)}


def _files_once_more(kernels: pathlib.Path, table: list) -> tuple:
    """The float copies' source and the names it renames: common.cl and every
    kernel file again, on float storage, each file-scope name NAME__f."""
    files = [kernels / "common.cl", *body_files(kernels)]
    text = "".join(f.read_text() for f in files)
    renamed = set()
    # Bodies alone (GD_VM_PROGRAM, set below: no kernel is renamed, so a
    # kernel's name passed through a macro still pastes NAME_body), with the
    # epilogue steps, on either compiler path and in the alignment check's
    # build (common.cl GD_CHECK_ALIGN, a test hook).
    for device in ("-DGD_POCL=1", "-DGD_NVIDIA=1", "-DGD_CHECK_ALIGN=1"):
        renamed |= top_level_names(_expanded(kernels, text, ("kernel_abi.h",),
                                             ("-DGD_VM_PROGRAM=1", "-DFP32_STORAGE=1", "-DEPI_UN=1", device)))
    common = files[0].read_text()
    parts = ["#ifndef FP32_STORAGE\n#define FP32_STORAGE 1\n#endif\n#ifndef GD_VM_PROGRAM\n#define GD_VM_PROGRAM 1\n#endif\n"]
    parts += [f"#undef {m}\n" for m in sorted(set(_DEFINE.findall(common)))]
    parts += [f"#define {n} {n}{FLOAT_SUFFIX}\n" for n in sorted(renamed)]
    parts.append(f"/* ---- common.cl, float copy ---- */\n{common}\n")
    guards = _file_guards(kernels, table, _abi_value(kernels, "VM_FLOAT_COPY"))
    for f in files[1:]:
        text = f.read_text()
        parts.append(f"/* ---- {f.name}, float copy ---- */\n#if {guards[f.name]}\n{text}\n#endif\n")
        parts += [f"#undef {m}\n" for m in sorted(set(_DEFINE.findall(text)))]
    parts += [f"#undef {n}\n" for n in sorted(renamed)]
    return "".join(parts), frozenset(renamed)


def vm_program_source(kernels: pathlib.Path) -> str:
    parts = ["/* Generated by tools/gen_vm.py: the VM program (every CPU-set kernel file, their float copies,\n"
             " * vm_call, grid_sync.cl, vm/vm_run.cl). Do not edit. */\n"]
    # The masks' defaults first: the files' guards test them.
    words = _abi_value(kernels, "VM_OPS_WORDS")
    parts.append("#ifndef VM_OPS_0\n#define VM_OPS_ALL 0xffffffff\n#else\n#define VM_OPS_ALL 0\n#endif\n")
    for w in range(words):
        parts.append(f"#ifndef VM_OPS_{w}\n#define VM_OPS_{w} VM_OPS_ALL\n#endif\n")
    table = bodies(kernels)
    guards = _file_guards(kernels, table, 0)
    for f in body_files(kernels):
        text = f.read_text()
        parts.append(f"/* ---- {f.name} ---- */\n#if {guards[f.name]}\n{text}\n#endif\n")
        parts += [f"#undef {m}\n" for m in sorted(set(_DEFINE.findall(text)))]
    # The buffer arguments: m0 activations (boundary staging included), m1
    # the other buffers (kernel_abi.h VM_NUM_SPACES).
    if _abi_value(kernels, "VM_NUM_SPACES") != 2:
        raise SystemExit("gen_vm.py: the VM program is written for VM_NUM_SPACES = 2 (kernel_abi.h)")
    parts.append("#define VM_SPACES_PARAMS __global uchar* m0, __global uchar* m1\n#define VM_SPACES m0, m1\n"
                 "GD_INLINE __global uchar* vm_space(int s, VM_SPACES_PARAMS) { return s ? m1 : m0; }\n")
    words, bits, copy = (_abi_value(kernels, n) for n in ("VM_OPS_WORDS", "VM_OPS_BITS", "VM_FLOAT_COPY"))
    if len(table) > copy or copy % bits or copy + len(table) > bits * words:
        raise SystemExit(f"gen_vm.py: {len(table)} opcodes and their float copies from VM_FLOAT_COPY = {copy} need "
                         f"more than {words} VM_OPS words (kernel_abi.h)")
    copies, renamed = _files_once_more(kernels, table)
    any_copy = " | ".join(f"VM_OPS_{w}" for w in range(copy // bits, words))
    parts.append(f"#if {any_copy}\n{copies}#endif\n")
    # VM_CALL_ATTR: inline on GPUs; on PoCL one out-of-line copy. Inlined into
    # vm_run, whose loop holds the grid barrier, the switch made PoCL's
    # work-group function 2.8x slower to compile at the first launch
    # (hand_recrop's opcodes: 4.7 s -> 1.7 s).
    parts.append("#ifdef GD_POCL\n#define VM_CALL_ATTR GD_NOINLINE\n#else\n#define VM_CALL_ATTR GD_INLINE\n#endif\n")
    parts.append("/* Runs op `opcode` for virtual work-item v, its arguments unpacked from the op's words a\n"
                 " * (an opcode outside the program's VM_OPS masks does nothing: the library never encodes one). */\n"
                 "VM_CALL_ATTR void vm_call(int opcode, int v, __global const int* a, VM_SPACES_PARAMS) {\n"
                 "  switch (opcode) {\n")
    cases = [(base + i, body, params, group, names_of) for base, names_of in ((0, frozenset()), (copy, renamed))
             for i, (_, _, body, params, group) in enumerate(table)]

    def enabled(op):
        w, b = divmod(op, bits)
        return f"((VM_OPS_{w} >> {b}) & 1)"

    for op, body, params, group, names_of in cases:
        if not group:
            parts.append(f"#if {enabled(op)}\n    case {op}: {_call(body, params, names_of)}; return;\n#endif\n")
    parts.append("    default: return;\n  }\n}\n")
    # Group bodies: the op's first two words are the dispatch's groups
    # along x and y (vm.c), virtual group g of n is (x, y, z) of them, and
    # the physical group's work-item l is local id (l % LX, l / LX).
    # Inline: PoCL needs what holds a barrier inlined into the kernel.
    parts.append("/* Runs group op `opcode` for virtual group g of n (vm/vm_run.cl): work-item l of the group,\n"
                 " * lmem its __local memory, the op's words a (two of geometry, then the arguments). */\n"
                 "GD_INLINE void vm_gcall(int opcode, int g, int n, int l, __local float4* lmem, __global const int* a,\n"
                 "                        VM_SPACES_PARAMS) {\n"
                 "  const int3 grp = (int3)(g % a[0], g / a[0] % a[1], g / (a[0] * a[1]));\n"
                 "  const int3 ngrp = (int3)(a[0], a[1], n / (a[0] * a[1]));\n"
                 "  a += 2;\n  switch (opcode) {\n")
    for op, body, params, group, names_of in cases:
        if group:
            first = ("grp", "ngrp", f"(int2)(l % {group[0]}, l / {group[0]})", "lmem")
            parts.append(f"#if {enabled(op)}\n    case {op}: {_call(body, params, names_of, first)}; return;\n#endif\n")
    parts.append("    default: return;\n  }\n}\n")
    for extra in ("grid_sync.cl", "vm/vm_run.cl"):
        parts.append(f"/* ---- {extra} ---- */\n{(kernels / extra).read_text()}\n")
    return "".join(parts)


def vm_table(kernels: pathlib.Path) -> list:
    """[(opcode, file, kernel, kinds)] for the C table."""
    return [(i, f, k, "".join(kind for kind, _ in params)) for i, (f, k, _, params, _) in enumerate(bodies(kernels))]


def vm_groups(kernels: pathlib.Path) -> list:
    """Per opcode, (LX, LY, __local float4s) of a group body, (0, 0, 0) for
    a body per work-item."""
    return [group if group else (0, 0, 0) for *_, group in bodies(kernels)]
