"""Single-op models: the delegate against the stock CPU interpreter.

The models come from the op_cases package (one module per op family);
each case feeds both sides the same seeded normal inputs.  A case that the delegate leaves on the CPU would compare the
CPU with itself, so full delegation is asserted too (except for the few
cases marked must_delegate=False).
"""

import numpy as np
import pytest

from conftest import assert_close, run_cpu, run_delegate
from op_cases import absorbed_dequantize_cases, all_cases, math_cases

# Both sides compute in FP32, so results differ only by summation order (and
# fused multiply-adds); that stays near 1e-6 relative L2 for these tiny
# tensors, and 1e-4 leaves headroom without letting a wrong index through.
RTOL_L2 = 1e-4
# Max-abs tolerance, scaled by the output's magnitude for the same reason.
ATOL_SCALE = 1e-4


def _runnable(case):
    # A fused-TANH node stays on the CPU, and the CPU cannot run a conv
    # without bias: such a model runs nowhere, so it is not a case.
    return not ("-TANH" in case.id and "nobias" in case.id)


def _params(cases):
    return [pytest.param(case, id=case.id) for case in cases if _runnable(case)]


def _assert_outputs_close(actual, expected):
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected):
        assert got.shape == want.shape
        atol = ATOL_SCALE * max(1.0, float(np.abs(want).max()))
        assert_close(got, want, rtol_l2=RTOL_L2, atol=atol)


@pytest.mark.parametrize("case", _params(all_cases()))
def test_op_matches_cpu(case):
    model, reference, inputs = case.make()
    expected = run_cpu(reference, inputs)
    actual, report = run_delegate(model, inputs)
    if "-TANH" in case.id and not case.id.startswith("concat"):
        # TFLite's CPU kernels ignore a fused TANH; the delegate keeps such
        # a node on the CPU so the results stay identical.
        assert report.cpu_nodes >= 1
    elif case.must_delegate:
        assert report.cpu_nodes == 0, f"{report.cpu_nodes} node(s) left on the CPU"
    _assert_outputs_close(actual, expected)


@pytest.mark.parametrize("case", _params(absorbed_dequantize_cases()))
def test_fp16_dequantize_is_absorbed(case):
    """MediaPipe stores weights as fp16 constants behind DEQUANTIZE; the
    delegate must take those nodes into the same partition as the conv."""
    model, reference, inputs = case.make()
    expected = run_cpu(reference, inputs)
    actual, report = run_delegate(model, inputs)
    assert report.cpu_nodes == 0
    assert report.partitions == 1
    _assert_outputs_close(actual, expected)


# FP16 storage (is_precision_loss_allowed=1) stores every activation as half
# and computes in float. Rounding the inputs to half first, on both sides,
# leaves only the delegate's own roundings (each ~5e-4 relative, a few per
# output), so 1e-2 is the bound, as for the models in FP16.
FP16_RTOL_L2 = 1e-2


@pytest.mark.parametrize("case", _params(math_cases()))
def test_math_op_matches_cpu_fp16(case):
    model, reference, inputs = case.make()
    inputs = [x.astype(np.float16).astype(np.float32) for x in inputs]
    expected = run_cpu(reference, inputs)
    largest = max(float(np.abs(e).max()) for e in expected)
    if 0 < largest < 100 * float(np.finfo(np.float16).tiny):
        # Half spaces its subnormals 6e-8 apart: 1% of such outputs is below it.
        pytest.skip(f"outputs at most {largest:.2g}: too near half's subnormal range for a 1e-2 bound")
    actual, report = run_delegate(model, inputs, is_precision_loss_allowed="1")
    assert report.cpu_nodes == 0, f"{report.cpu_nodes} node(s) left on the CPU"
    for got, want in zip(actual, expected):
        assert_close(got, want, rtol_l2=FP16_RTOL_L2, atol=FP16_RTOL_L2 * max(1.0, float(np.abs(want).max())))
