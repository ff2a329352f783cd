"""Outputs stored by the convs that make them (output_direct.c, conv_gpu.cl
CONVG_DST_BHWC): with the GPU kernel set, a float32 output, or a part of
an assembled one, that a CONV_2D writes and no node reads is stored by the
conv as the runtime's BHWC float32 at its offset, and its conversion
launch goes. The models are tests/test_output_assembly.py's heads; every
case runs with the pass on and off (TFLITE_GPU_BHWC_OUTPUT=0) against the
CPU interpreter (tests/fusion_hooks.py's tolerance; FP16 storage loses a
rounding, the output's), and the launches saved are the parts stored so.
test_output_assembly.py's two-invoke test runs the GPU set too."""
import numpy as np
import pytest

from fusion_hooks import launches_saved
from test_output_assembly import CASES, _heads

# Parts (or whole outputs) a conv stores, per case: (FP32, FP16).
SAVED = {
    "two_resolutions": (2, 2),
    "nested": (3, 3),
    "head_also_output": (1, 1),     # the head that is an output itself keeps both conversions
    "reshape_also_output": (1, 1),  # a part a remap writes stays converted
    "head_read_twice": (1, 1),      # a head a RELU also reads stays converted
    "not_contiguous": (0, 0),       # the old path: the output is the concatenation's
    "not_contiguous_batch": (0, 0),
    "single_direct": (1, 2),        # FP32 reads the one-pixel part back as it is anyway
}


@pytest.mark.parametrize("fp16", [False, True], ids=["fp32", "fp16"])
@pytest.mark.parametrize("c", [3, 17])
@pytest.mark.parametrize("case", CASES)
def test_outputs_stored_by_their_convs(monkeypatch, case, c, fp16):
    rng = np.random.default_rng(1000 * CASES.index(case) + c)
    model, inputs, _ = _heads(case, c, rng)
    saved = launches_saved(monkeypatch, "TFLITE_GPU_BHWC_OUTPUT", model, inputs, fp16=fp16, kernel_set="gpu")
    assert saved == SAVED[case][fp16], saved


def test_cpu_set_keeps_its_conversions(monkeypatch):
    rng = np.random.default_rng(3)
    model, inputs, _ = _heads("two_resolutions", 5, rng)
    assert launches_saved(monkeypatch, "TFLITE_GPU_BHWC_OUTPUT", model, inputs, kernel_set="cpu") == 0
