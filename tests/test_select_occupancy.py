"""Occupancy-aware selection (select_conv_gpu.c, issue 28): a GPU-set conv or
depthwise launch with fewer work-groups than twice the device's compute
units runs in smaller groups (powers of two within the default, 16 work-
items or more). tests/c/test_select_occupancy.c replays the selectors on
synthetic devices over the real models' shapes and asserts the counts; this
file runs the groups the rule picks on those shapes through the whole
library on whatever OpenCL device the tests use (PoCL, Intel's runtime,
Oclgrind) and checks the outputs against the CPU interpreter.

A CPU device has no occupancy target (its units run whole groups), so the
test hook TFLITE_GPU_COMPUTE_UNITS=N stands for a device of N units there;
TFLITE_GPU_BUILD_LOG=1 names the programs built, so each case also checks
the group it ran (the defines) and, without the hook, that nothing changed.
"""

import re
import sys

import pytest

from conftest import assert_close, run_cpu, run_delegate
from op_cases.conv import _conv_case

# (conv case on a real model's shape, compute units, the group's defines).
# Shapes from face_detection_short_range (FD) and pose_landmark_full (PL),
# as tests/c/test_select_occupancy.c lists them; 132 units as an H200.
CASES = [
    # FD 1x1 at 8x8, 88 -> 96 channels: 3 groups of 16 x 4, 12 of 8 x 2.
    (_conv_case(1, 8, 8, 88, 96, 1, 1, 1, "VALID", 1, "RELU"), 132, "-DCONVG_LX=8 -DCONVG_LY=2"),
    # FD 1x1 at 32x32, 32 -> 36: 32 groups of 16 x 4, 128 of 4 x 4.
    (_conv_case(1, 32, 32, 32, 36, 1, 1, 1, "VALID", 1, "NONE"), 132, "-DCONVG_LX=4 -DCONVG_LY=4"),
    # FD's classifier head, 16x16, 88 -> 2: one group of 64 x 1, 4 of 16 x 1.
    (_conv_case(1, 16, 16, 88, 2, 1, 1, 1, "SAME", 1, "NONE"), 132, "-DCONVG_LX=16 -DCONVG_LY=1"),
    # PL 1x1 at 256x256, 8 -> 8: 256 groups of 64 x 1, 512 of 32 x 1.
    (_conv_case(1, 256, 256, 8, 8, 1, 1, 1, "VALID", 1, "RELU"), 132, "-DCONVG_LX=32 -DCONVG_LY=1"),
    # PL's first conv, 3x3 stride 2 VALID (conv2d_gpu, a 3-channel source):
    # 256 groups of 16 x 4, 512 of 8 x 4.
    (_conv_case(1, 258, 258, 3, 24, 3, 3, 2, "VALID", 1, "NONE"), 132, "-DCONVG_LX=8 -DCONVG_LY=4"),
    # PL's 2x2 VALID heads at 1x1 output (conv2d_gpu): 7 groups, 25 of 16 x 1.
    (_conv_case(1, 2, 2, 288, 195, 2, 2, 1, "VALID", 1, "NONE"), 132, "-DCONVG_LX=16 -DCONVG_LY=1"),
    # FD depthwise 3x3 at 64x64x24: 192 groups of 8 x 8, 384 of 8 x 4.
    (_conv_case(1, 64, 64, 24, 0, 3, 3, 1, "SAME", 1, "RELU", depthwise=True), 132, "-DDWG_LX=8 -DDWG_LY=4"),
    # FD depthwise 3x3 at 8x8x96: 24 groups, 96 of 8 x 2.
    (_conv_case(1, 8, 8, 96, 0, 3, 3, 1, "SAME", 1, "NONE", depthwise=True), 132, "-DDWG_LX=8 -DDWG_LY=2"),
    # FD depthwise 3x3 stride 2, 16x16x88 -> 8x8x88: 22 groups, 88 of 8 x 2.
    (_conv_case(1, 16, 16, 88, 0, 3, 3, 2, "SAME", 1, "NONE", depthwise=True), 132, "-DDWG_LX=8 -DDWG_LY=2"),
    # Op-test shapes. A 5x5 depthwise at 7x9, batch 2 (5 x 7 work-items
    # per slice): 4 groups of 8 x 8, 16 of 8 x 2 (4 x 4 as many, x wider).
    (_conv_case(2, 7, 9, 5, 0, 5, 5, 1, "SAME", 1, "RELU6", depthwise=True), 132, "-DDWG_LX=8 -DDWG_LY=2"),
    # 1x1 at 7x9, batch 2, 40 -> 33 (a partial last block), 16 units: 4
    # groups of 16 x 4, 16 of 4 x 4 (the most any group of 16 gives).
    (_conv_case(2, 7, 9, 40, 33, 1, 1, 1, "VALID", 1, "RELU"), 16, "-DCONVG_LX=4 -DCONVG_LY=4"),
]

_BUILD = re.compile(r"tflite-gpu build (?:conv|depthwise)_gpu\.cl \[([^]]*)\]")


def _group_defines(options):
    return " ".join(w for w in options.split() if w.startswith(("-DCONVG_L", "-DDWG_L")))


def _run(case, capfd):
    model, reference, inputs = case.make()
    expected = run_cpu(reference, inputs)
    capfd.readouterr()
    actual, report = run_delegate(model, inputs, kernel_set="gpu")
    err = capfd.readouterr().err
    built = {_group_defines(m) for m in _BUILD.findall(err)}
    # The rest of stderr (Oclgrind's reports under tools/matrix.py, which
    # scans the log of a pytest -s run) goes where it would have gone.
    rest = "".join(line for line in err.splitlines(keepends=True) if not _BUILD.search(line))
    if rest:
        with capfd.disabled():
            sys.stderr.write(rest)
    assert report.cpu_nodes == 0, f"{report.cpu_nodes} node(s) left on the CPU"
    for got, want in zip(actual, expected):
        # FP32 on both sides; the group changes only the summation order.
        assert_close(got, want, rtol_l2=1e-4, atol=1e-4 * max(1.0, float(abs(want).max())))
    return built


@pytest.mark.parametrize("case,units,defines", [pytest.param(*c, id=f"{c[0].id}-cu{c[1]}") for c in CASES])
def test_smaller_groups_match_cpu(case, units, defines, monkeypatch, capfd):
    monkeypatch.setenv("TFLITE_GPU_COMPUTE_UNITS", str(units))
    monkeypatch.setenv("TFLITE_GPU_BUILD_LOG", "1")
    built = _run(case, capfd)
    assert built == {defines}, f"built conv_gpu.cl / depthwise_gpu.cl with groups {built}, want {defines!r}"


@pytest.mark.parametrize("case", [pytest.param(CASES[0][0], id=CASES[0][0].id),
                                  pytest.param(CASES[6][0], id=CASES[6][0].id)])
def test_no_hook_no_change_on_a_cpu(case, monkeypatch, capfd):
    """Without the hook a CPU device (PoCL, Intel's runtime: no target) or
    Oclgrind (one unit: these launches have 2 groups or more) keeps the
    default groups, 16 x 4 and 8 x 8, which kernel_abi.h sets: no define."""
    monkeypatch.delenv("TFLITE_GPU_COMPUTE_UNITS", raising=False)
    monkeypatch.setenv("TFLITE_GPU_BUILD_LOG", "1")
    assert _run(case, capfd) == {""}
