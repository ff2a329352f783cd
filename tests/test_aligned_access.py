"""LOAD4 / STORE4 (common.cl): one aligned float4 access on NVIDIA, vload4
elsewhere, and a checked build (-DGD_CHECK_ALIGN=1,
TFLITE_GPU_TEST_CHECK_ALIGN=1) that reports a misaligned address instead of
touching it. The portability matrix builds Intel's runtime so
(tools/matrix.py), and a report fails its piece; here the check itself,
on this machine's device through pyopencl, FP32 and FP16 storage, and which
access each device's options select."""
from __future__ import annotations

import os
import pathlib
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import gen_vm  # noqa: E402

os.environ.setdefault("PYOPENCL_NO_CACHE", "1")
cl = pytest.importorskip("pyopencl")
from cl_source import KERNELS, device_options  # noqa: E402

COPY = """
__kernel void copy4(__global const storage_t* src, __global storage_t* dst, int from, int to, int n) {
  int i = get_global_id(0);
  if (i < n) STORE4(LOAD4(src + from, i), dst + to, i);
}
"""
FP = [pytest.param(False, id="fp32"), pytest.param(True, id="fp16")]


@pytest.fixture(scope="module")
def ctx():
    try:
        return cl.create_some_context(interactive=False)
    except cl.Error as e:  # pragma: no cover - no OpenCL device
        pytest.skip(f"no OpenCL device: {e}")


def run_copy(ctx, fp16, shift=0, to=0, n=17):
    """copy4 over n float4s, reading from element `shift` on and writing
    from element `to` on, checked build; the destination starts as -7."""
    dtype = np.float16 if fp16 else np.float32
    rng = np.random.default_rng(5 + shift + 2 * to)
    src = rng.standard_normal(4 * n + 4).astype(dtype)
    dst = np.full_like(src, -7)
    queue = cl.CommandQueue(ctx)
    source = "".join((KERNELS / f).read_text() for f in ("kernel_abi.h", "common.cl")) + COPY
    prog = cl.Program(ctx, source).build(options=device_options(ctx, fp16) + " -DGD_CHECK_ALIGN=1")
    mf = cl.mem_flags
    a = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=src)
    b = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=dst)
    prog.copy4(queue, (32,), None, a, b, np.int32(shift), np.int32(to), np.int32(n))
    cl.enqueue_copy(queue, dst, b)
    queue.finish()
    return src, dst


@pytest.mark.parametrize("fp16", FP)
def test_an_aligned_float4_access_copies_exactly(ctx, fp16, capfd):
    src, dst = run_copy(ctx, fp16, shift=0)
    np.testing.assert_array_equal(dst[:68], src[:68])
    assert (dst[68:] == -7).all()
    assert "misaligned" not in capfd.readouterr().out


@pytest.mark.parametrize("fp16", FP)
def test_a_misaligned_load_is_reported_and_reads_a_poison(ctx, fp16, capfd):
    """Reading one element off: each of the 17 loads is reported with its
    line and reads 1e30 (inf in half), which the aligned store writes."""
    _, dst = run_copy(ctx, fp16, shift=1)
    out = capfd.readouterr().out
    assert out.count("tflite-gpu: misaligned LOAD4 at line ") == 17, out[-500:]
    assert "STORE4" not in out
    assert (dst[:68].astype(np.float32) >= 1e30).all() and (dst[68:] == -7).all()


@pytest.mark.parametrize("fp16", FP)
def test_a_misaligned_store_is_reported_and_not_made(ctx, fp16, capfd):
    """Writing one element off: each of the 17 stores is reported, and the
    destination is untouched."""
    _, dst = run_copy(ctx, fp16, to=1)
    out = capfd.readouterr().out
    assert out.count("tflite-gpu: misaligned STORE4 at line ") == 17, out[-500:]
    assert (dst == -7).all()


@pytest.mark.parametrize("defines, load", [
    (["-DGD_NVIDIA=1"], "gd_aload4((i), (p))"),
    (["-DGD_NVIDIA=1", "-DFP16_STORAGE=1"], "vloada_half4((i), (p))"),
    (["-DGD_NVIDIA=1", "-DGD_VLOAD=1"], "vload4((i), (p))"),
    (["-DGD_POCL=1"], "vload4((i), (p))"),
    ([], "vload4((i), (p))"),
    (["-DFP16_STORAGE=1"], "vload_half4((i), (p))"),
])
def test_each_device_s_options_select_its_access(defines, load):
    """NVIDIA's options take the aligned access (policy vload4=1's
    -DGD_VLOAD=1 keeps vload4 there); every other device keeps vload4 /
    vload_half4, whose element alignment is all a CPU needs."""
    out = gen_vm._expanded(KERNELS, "float4 probe(__global const storage_t* p, int i) { return LOAD4(p, i); }\n",
                           defines=defines)
    assert f"return {load};" in " ".join(out.split()), out[-300:]


def test_the_vm_program_with_float_copies_builds_checked(ctx):
    """An FP16 VM program running a float island (fp16_guard) holds
    common.cl twice, the second copy's names renamed NAME__f
    (tools/gen_vm.py): the check's helpers too, or the checked build (the
    matrix's Intel pieces) fails on a redefinition. Opcode 0 and the float
    copy of opcode 1."""
    copy = gen_vm._abi_value(KERNELS, "VM_FLOAT_COPY")
    bits = gen_vm._abi_value(KERNELS, "VM_OPS_BITS")
    words = gen_vm._abi_value(KERNELS, "VM_OPS_WORDS")
    masks = {w: 0 for w in range(words)}
    masks[0] |= 1
    masks[(copy + 1) // bits] |= 1 << ((copy + 1) % bits)
    source = "".join((KERNELS / f).read_text() for f in ("kernel_abi.h", "common.cl")) + gen_vm.vm_program_source(KERNELS)
    options = (device_options(ctx, True) + " -DGD_CHECK_ALIGN=1 -DGD_VM_PROGRAM=1 "
               + " ".join(f"-DVM_OPS_{w}=0x{m:x}" for w, m in masks.items()))
    prog = cl.Program(ctx, source).build(options=options)
    assert "vm_run" in prog.kernel_names
