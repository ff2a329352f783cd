"""Model outputs that later nodes also read (issue 37, the shape of LiteRT
8599: an ADD whose result is both an output and read by a later op came back
as one of its inputs). Each model runs through the delegate in both kernel
sets, FP32 and FP16, with the fusion passes on and with every switchable one
off, over two invokes on different inputs, against the CPU interpreter.

Tolerance: FP32 1e-4 relative L2 and 1e-4 of the output's scale (the
kernels sum in another order than the CPU's); FP16 storage 1e-2, as check's
FP16 tolerance (half rounding of each stored activation)."""
import numpy as np
import pytest

from conftest import assert_close, run_cpu
from tflite_gpu import _capi, interpreters
import tflite_gpu
from tflite_gpu.model_builder import ModelBuilder


def _w(rng, *shape):
    return (rng.standard_normal(shape) / np.sqrt(np.prod(shape[1:]))).astype(np.float32)


def _add_then_mul(mb, rng):
    """ADD -> output A; A * A -> output B."""
    x = mb.add_input([1, 7, 9, 5])
    c = mb.add_tensor([5], data=rng.standard_normal(5).astype(np.float32))
    a, b = mb.add_tensor([1, 7, 9, 5]), mb.add_tensor([1, 7, 9, 5])
    mb.add_op("ADD", [x, c], [a], dict(fused_activation="NONE"))
    mb.add_op("MUL", [a, a], [b], dict(fused_activation="NONE"))
    mb.mark_output(a)
    mb.mark_output(b)
    return [x]


def _conv_residual_then_conv(mb, rng):
    """1x1 CONV_2D + residual ADD (an epilogue) -> output A; a 3x3 conv of A -> output B."""
    x = mb.add_input([1, 11, 13, 17])
    y, a, b = mb.add_tensor([1, 11, 13, 17]), mb.add_tensor([1, 11, 13, 17]), mb.add_tensor([1, 11, 13, 3])
    mb.add_op("CONV_2D", [x, mb.add_tensor([17, 1, 1, 17], data=_w(rng, 17, 1, 1, 17)),
                          mb.add_tensor([17], data=rng.standard_normal(17).astype(np.float32))], [y],
              dict(padding="VALID", stride_w=1, stride_h=1, fused_activation="NONE"))
    mb.add_op("ADD", [y, x], [a], dict(fused_activation="RELU"))
    mb.add_op("CONV_2D", [a, mb.add_tensor([3, 3, 3, 17], data=_w(rng, 3, 3, 3, 17)),
                          mb.add_tensor([3], data=rng.standard_normal(3).astype(np.float32))], [b],
              dict(padding="SAME", stride_w=1, stride_h=1, fused_activation="NONE"))
    mb.mark_output(a)
    mb.mark_output(b)
    return [x]


def _depthwise_then_1x1(mb, rng):
    """A depthwise -> output D, read by a 1x1 -> output E: a pair the GPU set
    fuses, but D must still be written."""
    x = mb.add_input([1, 10, 9, 5])
    d, e = mb.add_tensor([1, 10, 9, 5]), mb.add_tensor([1, 10, 9, 3])
    mb.add_op("DEPTHWISE_CONV_2D", [x, mb.add_tensor([1, 3, 3, 5], data=_w(rng, 1, 3, 3, 5)),
                                    mb.add_tensor([5], data=rng.standard_normal(5).astype(np.float32))], [d],
              dict(padding="SAME", stride_w=1, stride_h=1, depth_multiplier=1, fused_activation="RELU6"))
    mb.add_op("CONV_2D", [d, mb.add_tensor([3, 1, 1, 5], data=_w(rng, 3, 1, 1, 5)),
                          mb.add_tensor([3], data=rng.standard_normal(3).astype(np.float32))], [e],
              dict(padding="VALID", stride_w=1, stride_h=1, fused_activation="NONE"))
    mb.mark_output(d)
    mb.mark_output(e)
    return [x]


def _output_of_a_conv_read_later(mb, rng):
    """A 1x1 conv's output (a float output the GPU set could store as BHWC
    straight into the runtime's buffer) also read by a LOGISTIC -> output."""
    x = mb.add_input([1, 6, 5, 9])
    a, b = mb.add_tensor([1, 6, 5, 4]), mb.add_tensor([1, 6, 5, 4])
    mb.add_op("CONV_2D", [x, mb.add_tensor([4, 1, 1, 9], data=_w(rng, 4, 1, 1, 9)),
                          mb.add_tensor([4], data=rng.standard_normal(4).astype(np.float32))], [a],
              dict(padding="VALID", stride_w=1, stride_h=1, fused_activation="NONE"))
    mb.add_op("LOGISTIC", [a], [b])
    mb.mark_output(b)
    mb.mark_output(a)
    return [x]


MODELS = [_add_then_mul, _conv_residual_then_conv, _depthwise_then_1x1, _output_of_a_conv_read_later]


@pytest.mark.parametrize("fusion", ["on", "off"])
@pytest.mark.parametrize("fp16", [False, True], ids=["fp32", "fp16"])
@pytest.mark.parametrize("kernel_set", ["cpu", "gpu"])
@pytest.mark.parametrize("build", MODELS, ids=[m.__name__.strip("_") for m in MODELS])
def test_an_output_read_later_is_right(monkeypatch, build, kernel_set, fp16, fusion):
    if fusion == "off":
        for p in _capi.fusion_passes():
            if p["hook"]:
                monkeypatch.setenv(p["hook"], "0")
    rng = np.random.default_rng(17)
    mb = ModelBuilder()
    specs = build(mb, rng)
    model = mb.build()
    d = tflite_gpu.load_delegate(log_level="silent", kernel_set=kernel_set, is_precision_loss_allowed=int(fp16))
    it = interpreters.make(model, delegate=d)
    assert _capi.delegate_stats(d._get_native_delegate_pointer())["cpu_nodes"] == 0
    tol = 1e-2 if fp16 else 1e-4
    for seed in (1, 2):  # a second invoke on other inputs: nothing of the first may remain
        inputs = [np.random.default_rng(seed).uniform(-2, 2, t["shape"]).astype(np.float32)
                  for t in it.get_input_details()]
        got = interpreters.run(it, inputs)
        for g, w in zip(got, run_cpu(model, inputs)):
            assert_close(g, w, rtol_l2=tol, atol=tol * max(1.0, float(np.abs(w).max())))
    del specs
