"""A float32 input that only CONV_2D nodes read, as their source, stays in
the runtime's BHWC layout with the GPU kernel set (fuse.c keep_inputs_bhwc):
the convolutions read its staging buffer through conv2d_bhwc_gpu and the
input's conversion launch goes. Every case runs with it on and off
(TFLITE_GPU_BHWC_INPUT=0) against the CPU interpreter on seeded random
data: where the input qualifies, the results match and exactly one launch
goes; where another op reads it too, nothing changes.

Tolerance: FP32 1e-4 of the output's scale (reordered float sums of at most
5 * 5 * 17 terms); FP16 storage 1e-2 relative L2 and of the scale (half
rounding of the stored outputs: the input itself is read as float32)."""
import numpy as np
import pytest

from fusion_hooks import launches_saved
from tflite_gpu.model_builder import ModelBuilder


def _conv_op(mb, rng, x, shape, cout, k, stride, dil=1, padding="SAME", act="NONE"):
    """CONV_2D of x (BHWC `shape`) with seeded weights; returns its output."""
    b, h, w, cin = shape
    wt = mb.add_tensor([cout, k, k, cin], data=rng.standard_normal([cout, k, k, cin]).astype(np.float32))
    bias = mb.add_tensor([cout], data=rng.standard_normal([cout]).astype(np.float32))
    ek = (k - 1) * dil + 1
    oh, ow = ((-(-h // stride), -(-w // stride)) if padding == "SAME"
              else ((h - ek) // stride + 1, (w - ek) // stride + 1))
    y = mb.add_tensor([b, oh, ow, cout])
    mb.add_op("CONV_2D", [x, wt, bias], [y], dict(padding=padding, stride_w=stride, stride_h=stride,
                                                  dilation_w=dil, dilation_h=dil, fused_activation=act))
    return y


def _model(b, h, w, cin, cout, k, stride, dil, padding, second=None, seed=0):
    """x -> CONV_2D -> output; `second`: what else reads x ("conv": a second
    convolution, another output; "add": an ADD of x and itself; "residual":
    the conv's own residual ADD, fused into it; "depthwise")."""
    rng = np.random.default_rng(seed)
    mb = ModelBuilder()
    shape = [b, h, w, cin]
    x = mb.add_input(shape)
    y = _conv_op(mb, rng, x, shape, cout, k, stride, dil, padding, act="RELU")
    mb.mark_output(y)
    if second == "conv":
        mb.mark_output(_conv_op(mb, rng, x, shape, 5, 3, 1))
    elif second == "add":
        z = mb.add_tensor([b, h, w, cin])
        mb.add_op("ADD", [x, x], [z])
        mb.mark_output(z)
    elif second == "depthwise":
        wt = mb.add_tensor([1, 3, 3, cin], data=rng.standard_normal([1, 3, 3, cin]).astype(np.float32))
        bias = mb.add_tensor([cin], data=rng.standard_normal([cin]).astype(np.float32))
        z = mb.add_tensor([b, h, w, cin])
        mb.add_op("DEPTHWISE_CONV_2D", [x, wt, bias], [z], dict(padding="SAME", stride_w=1, stride_h=1,
                                                                depth_multiplier=1))
        mb.mark_output(z)
    elif second == "residual":
        r = _conv_op(mb, rng, x, shape, cin, 3, 1)
        z = mb.add_tensor([b, h, w, cin])
        mb.add_op("ADD", [r, x], [z])
        mb.mark_output(z)
    inputs = [rng.standard_normal([b, h, w, cin]).astype(np.float32)]
    return mb.build(), inputs


@pytest.mark.parametrize("fp16", [False, True], ids=["fp32", "fp16"])
@pytest.mark.parametrize("b,h,w,cin,cout,k,stride,dil,padding", [
    (1, 17, 15, 3, 8, 3, 2, 1, "SAME"),     # a first layer: 3 channels, stride 2, odd sizes
    (2, 9, 11, 1, 5, 5, 2, 1, "SAME"),      # 1 channel, 5x5, a batch of 2
    (1, 10, 7, 5, 17, 3, 1, 2, "SAME"),     # 5 channels (a 1-lane tail), dilation 2
    (1, 13, 9, 17, 3, 3, 2, 1, "VALID"),    # 17 channels
    (1, 6, 6, 8, 5, 1, 1, 1, "VALID"),      # a 1x1 on C = 8 (otherwise conv2d_1x1_gpu)
])
def test_input_read_by_convs_stays_bhwc(monkeypatch, b, h, w, cin, cout, k, stride, dil, padding, fp16):
    model, inputs = _model(b, h, w, cin, cout, k, stride, dil, padding, seed=h * w + cin)
    saved = launches_saved(monkeypatch, "TFLITE_GPU_BHWC_INPUT", model, inputs, fp16=fp16, kernel_set="gpu")
    assert saved == 1, saved


def test_two_convs_share_the_bhwc_input(monkeypatch):
    model, inputs = _model(1, 11, 9, 3, 6, 3, 2, 1, "SAME", second="conv", seed=3)
    saved = launches_saved(monkeypatch, "TFLITE_GPU_BHWC_INPUT", model, inputs, kernel_set="gpu")
    assert saved == 1, saved


@pytest.mark.parametrize("second", ["add", "depthwise", "residual", "cpu_set"])
def test_input_with_other_readers_is_converted(monkeypatch, second):
    model, inputs = _model(1, 9, 7, 5, 6, 3, 1, 1, "SAME", second=None if second == "cpu_set" else second, seed=5)
    saved = launches_saved(monkeypatch, "TFLITE_GPU_BHWC_INPUT", model, inputs,
                           kernel_set="cpu" if second == "cpu_set" else "gpu")
    assert saved == 0, saved
