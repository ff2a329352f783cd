"""Kernel selection (common.cl's GD_SELECTED, dispatch.c): a program is
built with -DGD_KSEL=<mask> of the kernels its partition launches, so the
compiler skips the file's other kernels.

- Each (name, bit) that tools/embed_kernels.py reads from a file builds
  exactly that kernel, and a file that selects any kernel selects all of
  them (else the library builds the whole file for that file).
- A partition's build log names the masks, a model of two partitions gets
  two programs of conv.cl with their own masks, and both agree with the
  CPU (seeded random inputs, the FP32 tolerance of tests/test_ops.py).
- A partition whose kernels an earlier partition's program already holds
  reuses that program (one build); so does a VM partition whose bodies an
  earlier one's VM program holds (execution=stepped|persistent, vm.c)."""
from __future__ import annotations

import importlib.util
import os
import pathlib
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest

from cl_source import KERNELS, device_options, program_source

ROOT = pathlib.Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("embed_kernels", ROOT / "tools" / "embed_kernels.py")
embed_kernels = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(embed_kernels)

SELECTING = sorted(p.name for p in KERNELS.glob("*.cl") if embed_kernels.selectable_kernels(p))


def test_the_big_files_select():
    assert {"conv.cl", "layout.cl", "elementwise.cl", "fully_connected.cl"} <= set(SELECTING), SELECTING


@pytest.mark.parametrize("name", SELECTING)
def test_each_bit_builds_exactly_its_kernel(name):
    cl = pytest.importorskip("pyopencl")
    os.environ.setdefault("PYOPENCL_NO_CACHE", "1")
    ctx = cl.create_some_context(interactive=False)
    src = program_source(name)

    def kernels(extra=""):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            prog = cl.Program(ctx, src).build(options=device_options(ctx) + extra)
        return {k.function_name for k in prog.all_kernels()}

    pairs = embed_kernels.selectable_kernels(KERNELS / name)
    assert kernels() == {n for n, _ in pairs}, f"{name}: a kernel outside any GD_SELECTED block"
    for kernel, bit in pairs:
        assert kernels(f" -DGD_KSEL=0x{1 << bit:x}") == {kernel}, (name, kernel, bit)


_CHILD = r"""
import sys, numpy as np, tflite_gpu
from tflite_gpu import _capi, interpreters
model = open(sys.argv[1], "rb").read()
x = [np.random.default_rng(3).uniform(-1, 1, [1, 9, 7, 5]).astype(np.float32)]
options = dict(a.split("=", 1) for a in sys.argv[3:])
d = tflite_gpu.load_delegate(log_level="silent", max_delegated_partitions=2, kernel_set=sys.argv[2], **options)
got = interpreters.run(interpreters.make(model, delegate=d), x)
want = interpreters.run(interpreters.make(model, cpu="builtin"), x)
np.testing.assert_allclose(got[0], want[0], rtol=1e-4, atol=1e-4)
print("partitions", _capi.delegate_stats(d._get_native_delegate_pointer())["partitions"])
"""


def _two_partitions(second):
    """1x1 conv (5 -> 17) and a 3x3 depthwise, ROUND (never delegated),
    then `second`: a 3x3 stride-2 conv (17 -> 3), whose partition launches
    other conv.cl kernels than the 1x1's, or the same depthwise again, whose
    kernel the first partition's program holds."""
    from tflite_gpu.model_builder import ModelBuilder
    rng = np.random.default_rng(5)
    mb = ModelBuilder()
    x = mb.add_input([1, 9, 7, 5])

    def const(shape):
        return mb.add_tensor(shape, data=rng.standard_normal(shape).astype(np.float32))

    a = mb.add_tensor([1, 9, 7, 17])
    mb.add_op("CONV_2D", [x, const([17, 1, 1, 5]), const([17])], [a],
              dict(padding="SAME", stride_w=1, stride_h=1, fused_activation="RELU"))
    b = mb.add_tensor([1, 9, 7, 17])
    mb.add_op("DEPTHWISE_CONV_2D", [a, const([1, 3, 3, 17]), const([17])], [b],
              dict(padding="SAME", stride_w=1, stride_h=1, depth_multiplier=1, fused_activation="NONE"))
    c = mb.add_tensor([1, 9, 7, 17])
    mb.add_op("ROUND", [b], [c])
    if second == "conv":
        out = mb.add_tensor([1, 4, 3, 3])
        mb.add_op("CONV_2D", [c, const([3, 3, 3, 17]), const([3])], [out],
                  dict(padding="VALID", stride_w=2, stride_h=2, fused_activation="NONE"))
    else:
        out = mb.add_tensor([1, 9, 7, 17])
        mb.add_op("DEPTHWISE_CONV_2D", [c, const([1, 3, 3, 17]), const([17])], [out],
                  dict(padding="SAME", stride_w=1, stride_h=1, depth_multiplier=1, fused_activation="RELU"))
    mb.mark_output(out)
    return mb.build()


def _conv_masks(second, kernel_set, tmp_path):
    """The GD_KSEL masks of the programs of `second`'s kernel file that the
    two-partition model builds (its outputs checked against the CPU in the
    child): conv.cl or depthwise.cl in the CPU set; conv_gpu.cl or
    depthwise_gpu.cl in the GPU set."""
    path = tmp_path / "two.tflite"
    path.write_bytes(_two_partitions(second))
    # The 1x1 + depthwise pair stays two nodes (fuse_pw_dw.c would make
    # the first partition's a kernel of its own), so that both partitions
    # launch the plain depthwise; the convs read their partition's input
    # converted, so that the GPU set's two launch different kernels
    # (conv2d_1x1_gpu, conv2d_gpu), not conv2d_bhwc_gpu both.
    env = dict(os.environ, TFLITE_GPU_BUILD_LOG="1", TFLITE_GPU_POLICY="fuse_pw_dw=0", TFLITE_GPU_BHWC_INPUT="0")
    p = subprocess.run([sys.executable, "-c", _CHILD, str(path), kernel_set], capture_output=True, text=True, env=env,
                       timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stdout.split() == ["partitions", "2"], p.stdout
    conv_file = ("conv" if second == "conv" else "depthwise") + ("_gpu.cl" if kernel_set == "gpu" else ".cl")
    builds = re.findall(rf"build {re.escape(conv_file)} \[(.*)\]", p.stderr)
    masks = [re.search(r"-DGD_KSEL=0x([0-9a-f]+)$", b) for b in builds]
    assert all(masks), p.stderr
    return conv_file, [m.group(1) for m in masks], p.stderr


@pytest.mark.parametrize("kernel_set", ["cpu", "gpu"])
def test_a_covered_partition_reuses_the_program(kernel_set, tmp_path):
    _, masks, err = _conv_masks("depthwise", kernel_set, tmp_path)
    assert len(masks) == 1, err


@pytest.mark.parametrize("kernel_set", ["cpu", "gpu"])
def test_two_partitions_build_their_own_selections(kernel_set, tmp_path):
    conv_file, masks, err = _conv_masks("conv", kernel_set, tmp_path)
    assert len(masks) == 2 and masks[0] != masks[1], err
    every = sum(1 << b for _, b in embed_kernels.selectable_kernels(KERNELS / conv_file))
    for m in masks:
        assert int(m, 16) & ~every == 0 and int(m, 16) != every, (m, err)


@pytest.mark.parametrize("second, builds", [("depthwise", 1), ("conv", 2)])
def test_a_vm_partition_whose_bodies_the_first_holds_builds_no_program(second, builds, tmp_path):
    """The second partition's depthwise (and its boundary conversions) are
    bodies the first partition's VM program holds: one vm_program.cl build.
    A stride-2 3x3 conv is a body it lacks: a second build."""
    path = tmp_path / "two.tflite"
    path.write_bytes(_two_partitions(second))
    env = dict(os.environ, TFLITE_GPU_BUILD_LOG="1", TFLITE_GPU_POLICY="fuse_pw_dw=0", TFLITE_GPU_BHWC_INPUT="0")
    p = subprocess.run([sys.executable, "-c", _CHILD, str(path), "cpu", "execution=persistent"], capture_output=True,
                       text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stdout.split() == ["partitions", "2"], p.stdout
    assert len(re.findall(r"build vm_program\.cl \[", p.stderr)) == builds, p.stderr
