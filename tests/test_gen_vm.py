"""tools/gen_vm.py's parts that the OpenCL compilers only check as a whole:
the file-scope names the float copies rename (top_level_names), the
program's float-copy section (every file once more, renamed NAME__f), and
the group bodies' shapes (GROUP_KERNEL, common.cl)."""
from __future__ import annotations

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import gen_vm  # noqa: E402

SNIPPET = """
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
typedef float storage_t;
enum { A_CODE = 1, B_CODE };
__constant float k_table[3] = {1.0f, 2.0f, 3.0f};
static inline float helper(float x) { if (x > 0) { return x; } return -x; }
__attribute__((noinline)) static float4 out_of_line(float4 v, int op);
__attribute__((noinline)) static float4 out_of_line(float4 v, int op) { switch (op) { default: return v; } }
void body_body(int gid, __global float* p) { for (int i = 0; i < 2; ++i) { p[gid] += helper(k_table[i]); } }
typedef struct { int a; float b; } pair_t;
"""


def test_top_level_names_finds_what_a_file_defines_and_nothing_inside():
    assert gen_vm.top_level_names(SNIPPET) == {"storage_t", "A_CODE", "B_CODE", "k_table", "helper", "out_of_line",
                                               "body_body", "pair_t"}


def test_every_body_has_a_float_copy_in_the_program():
    kernels = ROOT / "opencl_kernels"
    source = gen_vm.vm_program_source(kernels)
    table = gen_vm.vm_table(kernels)
    groups = gen_vm.vm_groups(kernels)
    copy = gen_vm._abi_value(kernels, "VM_FLOAT_COPY")
    for (opcode, _, kernel, _), (lx, _, _) in zip(table, groups):
        body = f"{kernel}_gbody" if lx else f"{kernel}_body"  # GROUP_KERNEL or OUTLINED_KERNEL
        assert f"case {opcode}: {body}(" in source
        assert f"case {copy + opcode}: {body}{gen_vm.FLOAT_SUFFIX}(" in source
    # The copies are on float storage, their casts the renamed storage type.
    assert f"storage_t{gen_vm.FLOAT_SUFFIX}*" in source


def test_every_group_kernel_is_a_group_body_of_its_shape():
    """Each GROUP_KERNEL (common.cl) of the body files has an opcode whose
    group shape and __local float4s are the kernel's (the library checks a
    dispatch's local size against them, vm.c group_fits; vm_run's __local
    argument is the most its phases take)."""
    kernels = ROOT / "opencl_kernels"
    # conv_gpu.cl's CONVG_KERNEL: a kernel of its own form, a GROUP_KERNEL in the VM
    declared = {m for f in gen_vm.body_files(kernels)
                for m in re.findall(r"^(?:GROUP_KERNEL|CONVG_KERNEL)\((\w+),", f.read_text(), re.M)}
    found = {k: g for (_, _, k, _), g in zip(gen_vm.vm_table(kernels), gen_vm.vm_groups(kernels)) if g[0]}
    assert set(found) == declared and len(declared) >= 15, (found, declared)
    for conv in ("conv2d_1x1_gpu", "conv2d_gpu", "dw_conv2d_1x1_gpu", "conv2d_1x1_up2_gpu"):
        assert found[conv] == (16, 4, 384)  # CONVG_LX x CONVG_LY; KT x (64 pixels + 4 lanes x 4 x 2 slices)
    assert found["fully_connected_gpu"] == (64, 1, 64)
    assert found["softmax_gpu"] == (64, 1, 16)         # WG floats
    assert found["fc_pair_gpu"] == (64, 1, 512)        # two rows of FCP_MAX_SLICES
    assert found["depthwise_gpu"] == (8, 8, 1)         # DWG_LX x DWG_LY, no __local memory
    assert found["pw_depthwise_gpu"] == (64, 1, 1088)  # PWDW_LOCAL + PWDW_WG


def test_a_group_kernel_size_must_be_a_constant():
    assert gen_vm._constant("(64 + 3) / 4") == 16
    try:
        gen_vm._constant("WG")
    except SystemExit as e:
        assert "not a constant" in str(e)
    else:
        raise AssertionError("a name passed as a size")


def test_a_file_none_of_whose_opcodes_the_program_runs_is_skipped_whole():
    """Each body file (and its float copy) stands under a guard of its
    opcodes' VM_OPS bits, so the front end does not even parse a file the
    partition does not run. Preprocessed with opcode 0 only (and the float
    copy of the last opcode): the text of those two files and of no other."""
    kernels = ROOT / "opencl_kernels"
    table = gen_vm.vm_table(kernels)
    copy = gen_vm._abi_value(kernels, "VM_FLOAT_COPY")
    bits = gen_vm._abi_value(kernels, "VM_OPS_BITS")
    words = gen_vm._abi_value(kernels, "VM_OPS_WORDS")
    last = len(table) - 1
    masks = {w: 0 for w in range(words)}
    masks[0] |= 1
    masks[(copy + last) // bits] |= 1 << ((copy + last) % bits)
    source = gen_vm.vm_program_source(kernels)
    defines = [f"-DVM_OPS_{w}=0x{m:x}" for w, m in masks.items()] + ["-DGD_VM_PROGRAM=1"]
    out = gen_vm._expanded(kernels, source, defines=defines)
    first_file, last_file = table[0][1], table[last][1]
    # what of each file the preprocessor passes through: its bodies' definitions
    for file in (f.name for f in gen_vm.body_files(kernels)):
        names = {k for _, f, k, _ in table if f == file}
        present = {n for n in names if re.search(rf"\b{n}_g?body\b", out)}
        present_copy = {n for n in names if re.search(rf"\b{n}_g?body{gen_vm.FLOAT_SUFFIX}\b", out)}
        assert bool(present) == (file == first_file), (file, sorted(present))
        assert bool(present_copy) == (file == last_file), (file, sorted(present_copy))
    assert first_file != last_file
