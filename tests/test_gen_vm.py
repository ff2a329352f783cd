"""tools/gen_vm.py's parts that the OpenCL compilers only check as a whole:
the file-scope names the float copies rename (top_level_names), and the
program's float-copy section (every file once more, renamed NAME__f)."""
from __future__ import annotations

import pathlib
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
    copy = gen_vm._abi_value(kernels, "VM_FLOAT_COPY")
    for opcode, _, kernel, _ in table:
        assert f"case {opcode}: {kernel}_body(" in source
        assert f"case {copy + opcode}: {kernel}_body{gen_vm.FLOAT_SUFFIX}(" in source
    # The copies are on float storage, their casts the renamed storage type.
    assert f"storage_t{gen_vm.FLOAT_SUFFIX}*" in source
