"""A 1x1 DEPTHWISE_CONV_2D (a per-channel x * s + t) whose output only a
CONV_2D without padding taps reads is folded into that conv's weights and
bias (fold_affine.c), in both kernel sets: hand_recrop's channel scales.
Every case runs folded and not (TFLITE_GPU_FOLD_AFFINE=0) against the CPU
interpreter on seeded random data: folded, the results match and exactly
the depthwise's launch goes; where the conv would read padding (the shift
t must not reach padded taps) or the pattern does not hold, nothing
changes.

Tolerance: FP32 1e-4 of the output's scale (the products x * s * w taken
in another order, sums of at most 3 * 3 * 17 terms); FP16 storage 1e-2
(half rounding of stored activations; the folded weights stay float)."""
import numpy as np
import pytest

from fusion_hooks import launches_saved
from tflite_gpu.model_builder import ModelBuilder


def _model(h, w, c, cout, k, stride, padding, dw_act="NONE", dw_k=1, dw_output=False, seed=0):
    """x -> DEPTHWISE (dw_k x dw_k, multiplier 1) -> CONV_2D (k x k) -> output."""
    rng = np.random.default_rng(seed)
    mb = ModelBuilder()
    x = mb.add_input([1, h, w, c])

    def const(shape):
        return mb.add_tensor(shape, data=rng.standard_normal(shape).astype(np.float32))

    d = mb.add_tensor([1, h, w, c])
    mb.add_op("DEPTHWISE_CONV_2D", [x, const([1, dw_k, dw_k, c]), const([c])], [d],
              dict(padding="SAME", stride_w=1, stride_h=1, depth_multiplier=1, fused_activation=dw_act))
    if padding == "SAME":
        oh, ow = -(-h // stride), -(-w // stride)
    else:
        oh, ow = (h - k) // stride + 1, (w - k) // stride + 1
    y = mb.add_tensor([1, oh, ow, cout])
    mb.add_op("CONV_2D", [d, const([cout, k, k, c]), const([cout])], [y],
              dict(padding=padding, stride_w=stride, stride_h=stride, fused_activation="RELU"))
    mb.mark_output(y)
    if dw_output:
        mb.mark_output(d)
    return mb.build(), [rng.standard_normal([1, h, w, c]).astype(np.float32)]


@pytest.mark.parametrize("kernel_set", ["cpu", "gpu"])
@pytest.mark.parametrize("fp16", [False, True], ids=["fp32", "fp16"])
@pytest.mark.parametrize("h,w,c,cout,k,stride,padding", [
    (9, 11, 3, 5, 2, 2, "VALID"),    # hand_recrop's 2x2 stride 2; odd sizes drop the last row and column
    (8, 6, 1, 17, 2, 2, "SAME"),     # SAME on even sizes pads nothing
    (7, 9, 5, 3, 3, 1, "VALID"),
    (6, 10, 17, 8, 1, 1, "VALID"),   # a 1x1 (the GPU set would otherwise fuse the pair)
])
def test_affine_folds_into_the_conv(monkeypatch, h, w, c, cout, k, stride, padding, fp16, kernel_set):
    model, inputs = _model(h, w, c, cout, k, stride, padding, seed=h * w + c)
    # Folded, the conv reads the model's input, which the GPU set then keeps
    # BHWC (one more launch saved, tests/test_bhwc_input.py): held off here.
    saved = launches_saved(monkeypatch, "TFLITE_GPU_FOLD_AFFINE", model, inputs, fp16=fp16, kernel_set=kernel_set,
                           keep_off=["TFLITE_GPU_BHWC_INPUT"])
    # Not folded, the GPU set still runs a depthwise and the 1x1 after it in
    # one launch (fuse_dw_conv.c); folded, that launch has no depthwise work.
    assert saved == (0 if kernel_set == "gpu" and k == 1 else 1), saved


@pytest.mark.parametrize("case", ["same_pads_odd", "dw_relu", "dw_3x3", "dw_is_an_output"])
def test_affines_that_cannot_fold_stay(monkeypatch, case):
    """SAME on an odd size reads a padded tap, where t must not appear;
    an activation makes the map non-affine; a 3x3 is no per-channel map."""
    model, inputs = _model(9, 7, 5, 3, 2, 2, "SAME" if case == "same_pads_odd" else "VALID",
                           dw_act="RELU" if case == "dw_relu" else "NONE", dw_k=3 if case == "dw_3x3" else 1,
                           dw_output=case == "dw_is_an_output", seed=3)
    saved = launches_saved(monkeypatch, "TFLITE_GPU_FOLD_AFFINE", model, inputs, kernel_set="cpu",
                           keep_off=["TFLITE_GPU_BHWC_INPUT"])
    assert saved == 0, saved
