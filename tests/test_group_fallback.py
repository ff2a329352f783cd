"""GPU-set kernels whose work-group the device cannot run.

The GPU set's conv, depthwise and reduction kernels have a fixed work-group
size (a build define, with reqd_work_group_size). A device may run a given
kernel only in smaller groups than the selector chose (CL_KERNEL_WORK_GROUP_SIZE
is below the device limit when a kernel needs many registers or much local
memory); the executor then rebuilds the same kernel with smaller groups
(target.c, variant_fit_group). PoCL never needs that, so
TFLITE_GPU_MAX_GROUP lowers the limit the executor sees: without the
rebuild these partitions fail to build and stay on the CPU, so full
delegation and agreement with the CPU interpreter both test it.
"""

import pytest

from conftest import assert_close, run_cpu, run_delegate
from op_cases import all_cases

# Cases that take the GPU set's fixed-group kernels: 1x1 and KxK convs of
# more than two output blocks (16 x 4 groups), depthwise (8 x 8), and long
# reductions (64 or 256 work-items per output: FC over 1152 inputs, a MEAN
# over a 7x7 window, a SUM over 63 values).
CASE_IDS = (
    "conv-1x1x1x5-k1x1-s1-VALID-d1-RELU_N1_TO_1-o17-nobias",
    "conv-1x5x5x3-k1x1-s1-SAME-d2-RELU-o8",
    "dw-1x7x9x1-k1x1-s1-SAME-d1-NONE-o1",
    "dw-2x13x11x8-k1x1-s1-VALID-d2-RELU6-o8",
    "fc-1x1152-k1152-o63-NONE",
    "mean-1x7x7x1152-axes1_2-keep1",
    "sum-2x7x9x5-axes1_2-keep1",
)
# Plus the first four 3x3 conv cases with 17 output channels (five blocks of 4).
_KXK = [c for c in all_cases() if c.id.startswith("conv-") and "-k3x3-" in c.id and c.id.endswith("-o17")][:4]
CASES = [c for c in all_cases() if c.id in CASE_IDS] + _KXK


def test_cases_exist():
    ids = {c.id for c in CASES}
    assert set(CASE_IDS) <= ids, sorted(set(CASE_IDS) - ids)


@pytest.mark.parametrize("max_group", [1, 8, 32])
@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_smaller_groups_match_cpu(case, max_group, monkeypatch):
    monkeypatch.setenv("TFLITE_GPU_MAX_GROUP", str(max_group))
    model, reference, inputs = case.make()
    expected = run_cpu(reference, inputs)
    actual, report = run_delegate(model, inputs, kernel_set="gpu")
    assert report.cpu_nodes == 0, f"{report.cpu_nodes} node(s) left on the CPU"
    for got, want in zip(actual, expected):
        # FP32 on both sides; smaller groups change only the summation order.
        assert_close(got, want, rtol_l2=1e-4, atol=1e-4 * max(1.0, float(abs(want).max())))
