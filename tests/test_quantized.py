"""Quantized models (ENABLE_QUANT, on by default): int8/uint8 graphs run on
the delegate through a float view and are compared with the CPU's integer
kernels in quantization steps.

Tolerance: the delegate computes in float and rounds once per op output
(quantize-dequantize onto the model's grid); the CPU's integer kernels
requantize with fixed-point multipliers, lookup tables and their own
rounding. Both land on the same grid point or a neighbour, so >= 99% of
output elements must agree within 1 step and all within 2.

Each single-op case is built twice from the same seed: first as a float
model (weights = the dequantized int8 values, inputs = the dequantized
int8 inputs) whose CPU output sets the output's quantization range, as a
converter's calibration would, then as the quantized model under test.
"""
from __future__ import annotations

import zlib

import numpy as np
import pytest

import tflite_gpu
from tflite_gpu import _capi
from tflite_gpu.model_builder import ModelBuilder

from conftest import _interpreter, _run, rel_l2, run_cpu, run_delegate

INT8_VERSION = {  # the op version the converter writes for int8 kernels
    "CONV_2D": 3, "DEPTHWISE_CONV_2D": 3, "FULLY_CONNECTED": 4, "ADD": 2, "MUL": 2, "AVERAGE_POOL_2D": 2,
    "MAX_POOL_2D": 2, "CONCATENATION": 2, "RESHAPE": 1, "LOGISTIC": 2, "RESIZE_BILINEAR": 2, "PAD": 2,
    "MEAN": 2, "QUANTIZE": 2, "DEQUANTIZE": 2, "SUB": 2, "TANH": 2, "RELU6": 2, "MAXIMUM": 2, "HARD_SWISH": 1,
    "STRIDED_SLICE": 2, "DEPTH_TO_SPACE": 2, "PRELU": 1, "TRANSPOSE_CONV": 3, "SOFTMAX": 2, "LOG_SOFTMAX": 2,
}
QRANGE = {np.int8: (-128, 127), np.uint8: (0, 255)}


class Tensors:
    """Makes the tensors of one case, as float (calibration pass) or
    quantized (the model under test). Data is drawn in the same order in
    both passes, so both models hold the same values."""

    def __init__(self, mb, rng, dtype, out_ranges=None):
        self.mb, self.rng, self.dtype = mb, rng, dtype
        self.quant = out_ranges is not None
        self.out_ranges = out_ranges or {}
        self.inputs = []
        self.in_scale, self.in_zp = 0.05, (3 if dtype == np.int8 else 131)
        self.outputs = []

    def _qtype(self):
        return self.dtype if self.quant else np.float32

    def input(self, shape, scale=None, zp=None):
        scale = self.in_scale if scale is None else scale
        zp = self.in_zp if zp is None else zp
        lo, hi = QRANGE[self.dtype]
        q = self.rng.integers(lo, hi + 1, shape).astype(self.dtype)
        if self.quant:
            self.inputs.append(q)
            return self.mb.add_input(shape, self.dtype, quant=dict(scale=[scale], zero_point=[zp]))
        self.inputs.append(((q.astype(np.float32) - zp) * scale).astype(np.float32))
        return self.mb.add_input(shape)

    def weights(self, shape, axis=None):
        """int8 (uint8 models: uint8, zero point 120) weights; per-channel
        scales along `axis` (int8 only), else one scale."""
        if self.dtype == np.int8:
            q = self.rng.integers(-127, 128, shape).astype(np.int8)
            zp = 0
        else:
            q = self.rng.integers(0, 256, shape).astype(np.uint8)
            zp = 120
        if axis is None:
            scales = np.array([0.02], np.float32)
            full = np.float32(0.02)
        else:
            scales = self.rng.uniform(0.005, 0.03, shape[axis]).astype(np.float32)
            bshape = [1] * len(shape)
            bshape[axis] = shape[axis]
            full = scales.reshape(bshape)
        w = ((q.astype(np.float32) - zp) * full).astype(np.float32)
        if not self.quant:
            return self.mb.add_tensor(shape, data=w), scales
        quant = dict(scale=scales.tolist(), zero_point=[zp] * len(scales), quantized_dimension=axis or 0)
        return self.mb.add_tensor(shape, self.dtype, data=q, quant=quant), scales

    def bias(self, n, w_scales):
        """int32 bias with scale input_scale * weight_scale (per channel)."""
        scales = (self.in_scale * np.broadcast_to(w_scales, (n,))).astype(np.float32)
        q = self.rng.integers(-2000, 2001, n).astype(np.int32)
        if not self.quant:
            return self.mb.add_tensor([n], data=(q * scales).astype(np.float32))
        if len(w_scales) == 1:  # per-tensor weights: one bias scale (the CPU reads params.scale)
            return self.mb.add_tensor([n], np.int32, data=q, quant=dict(scale=[float(scales[0])], zero_point=[0]))
        return self.mb.add_tensor([n], np.int32, data=q,
                                  quant=dict(scale=scales.tolist(), zero_point=[0] * n))

    def ints(self, values):
        values = np.asarray(values, np.int32)
        return self.mb.add_tensor(list(values.shape), np.int32, data=values)

    def output(self, shape, name, like_input=False, fixed=None):
        """An output quantized like the input (ops that keep the grid), with
        fixed (scale, zp), or over the range the float pass produced."""
        if not self.quant:
            t = self.mb.add_tensor(shape, name=name)
        else:
            if like_input:
                scale, zp = self.in_scale, self.in_zp
            elif fixed:
                scale, zp = fixed
            else:
                lo, hi = self.out_ranges[name]
                lo, hi = min(lo, 0.0), max(hi, 0.0)
                qmin, qmax = QRANGE[self.dtype]
                scale = max(hi - lo, 1e-3) / (qmax - qmin)
                zp = int(np.clip(round(qmin - lo / scale), qmin, qmax))
            t = self.mb.add_tensor(shape, self.dtype, name=name, quant=dict(scale=[scale], zero_point=[zp]))
        self.outputs.append(name)
        self.mb.mark_output(t)
        return t


def _op(T, name, inputs, outputs, options=None):
    T.mb.add_op(name, inputs, outputs, options, version=INT8_VERSION[name])


# -- single-op cases: build(T, c) with c the channel count --------------------

def conv(T, c):
    x = T.input([2, 7, 9, 3])
    w, ws = T.weights([c, 3, 3, 3], axis=0 if T.dtype == np.int8 else None)
    b = T.bias(c, ws)
    y = T.output([2, 4, 5, c], "y")
    _op(T, "CONV_2D", [x, w, b], [y], dict(padding="SAME", stride_w=2, stride_h=2, fused_activation="RELU6"))


def depthwise(T, c):
    x = T.input([1, 9, 7, c])
    w, ws = T.weights([1, 3, 3, c], axis=3 if T.dtype == np.int8 else None)
    b = T.bias(c, ws)
    y = T.output([1, 9, 7, c], "y")
    _op(T, "DEPTHWISE_CONV_2D", [x, w, b], [y], dict(padding="SAME", depth_multiplier=1))


def fully_connected(T, c):
    x = T.input([3, 13])
    w, ws = T.weights([c, 13])
    b = T.bias(c, ws)
    y = T.output([3, c], "y")
    _op(T, "FULLY_CONNECTED", [x, w, b], [y], dict(fused_activation="RELU"))


def add(T, c):
    x = T.input([1, 5, 7, c])
    z = T.input([1, 1, 7, c], scale=0.03, zp=-7 if T.dtype == np.int8 else 100)
    y = T.output([1, 5, 7, c], "y")
    _op(T, "ADD", [x, z], [y])


def mul(T, c):
    x = T.input([2, 3, 5, c])
    z = T.input([2, 3, 5, c], scale=0.03, zp=-7 if T.dtype == np.int8 else 100)
    y = T.output([2, 3, 5, c], "y")
    _op(T, "MUL", [x, z], [y])


def average_pool(T, c):
    x = T.input([1, 9, 11, c])
    y = T.output([1, 5, 6, c], "y", like_input=True)
    _op(T, "AVERAGE_POOL_2D", [x], [y], dict(padding="SAME", filter_w=3, filter_h=3, stride_w=2, stride_h=2))


def max_pool(T, c):
    x = T.input([2, 7, 9, c])
    y = T.output([2, 3, 4, c], "y", like_input=True)
    _op(T, "MAX_POOL_2D", [x], [y], dict(padding="VALID", filter_w=2, filter_h=3, stride_w=2, stride_h=2))


def concatenation(T, c):
    x = T.input([1, 5, 3, c])
    z = T.input([1, 5, 3, 3])
    y = T.output([1, 5, 3, c + 3], "y", like_input=True)
    _op(T, "CONCATENATION", [x, z], [y], dict(axis=3))


def reshape(T, c):
    x = T.input([1, 3, 5, c])
    shape = T.ints([5, 3 * c])
    y = T.output([5, 3 * c], "y", like_input=True)
    _op(T, "RESHAPE", [x, shape], [y], dict(new_shape=[5, 3 * c]))


def logistic(T, c):
    x = T.input([1, 7, 5, c])
    y = T.output([1, 7, 5, c], "y", fixed=(1.0 / 256, -128 if T.dtype == np.int8 else 0))
    _op(T, "LOGISTIC", [x], [y])


def _softmax(T, c, beta):
    # The converter's fixed output grid for softmax (the CPU kernels require it).
    x = T.input([2, 3, 5, c], scale=0.1)
    y = T.output([2, 3, 5, c], "y", fixed=(1.0 / 256, -128 if T.dtype == np.int8 else 0))
    _op(T, "SOFTMAX", [x], [y], dict(beta=beta))


def softmax(T, c):
    _softmax(T, c, 1.0)


def softmax_beta(T, c):
    """The integer kernels fold beta into their input multiplier."""
    _softmax(T, c, 0.6)


def log_softmax(T, c):
    # The CPU kernels require this output grid: scale 16/256, zero point at qmax.
    x = T.input([2, 3, 5, c], scale=0.1)
    y = T.output([2, 3, 5, c], "y", fixed=(16.0 / 256, 127 if T.dtype == np.int8 else 255))
    _op(T, "LOG_SOFTMAX", [x], [y])


def resize_bilinear(T, c):
    x = T.input([1, 5, 7, c])
    size = T.ints([9, 13])
    y = T.output([1, 9, 13, c], "y", like_input=True)
    _op(T, "RESIZE_BILINEAR", [x, size], [y], dict(half_pixel_centers=True))


def pad(T, c):
    x = T.input([1, 5, 3, c])
    pads = T.ints([[0, 0], [1, 2], [2, 0], [0, 1]])
    y = T.output([1, 8, 5, c + 1], "y", like_input=True)
    _op(T, "PAD", [x, pads], [y])


def mean(T, c):
    x = T.input([1, 7, 9, c])
    axes = T.ints([1, 2])
    y = T.output([1, 1, 1, c], "y")
    _op(T, "MEAN", [x, axes], [y], dict(keep_dims=True))


def sub(T, c):
    x = T.input([1, 5, 7, c])
    z = T.input([1, 5, 1, c], scale=0.03, zp=-7 if T.dtype == np.int8 else 100)
    y = T.output([1, 5, 7, c], "y")
    _op(T, "SUB", [x, z], [y])


def tanh(T, c):
    x = T.input([1, 7, 5, c])
    y = T.output([1, 7, 5, c], "y", fixed=(1.0 / 128, 0 if T.dtype == np.int8 else 128))
    _op(T, "TANH", [x], [y])


def relu6(T, c):
    x = T.input([2, 3, 5, c], scale=0.1)
    y = T.output([2, 3, 5, c], "y")
    _op(T, "RELU6", [x], [y])


def maximum(T, c):
    x = T.input([1, 5, 7, c])
    z = T.input([1, 5, 7, c])
    y = T.output([1, 5, 7, c], "y", like_input=True)
    _op(T, "MAXIMUM", [x, z], [y])


def hard_swish(T, c):
    x = T.input([1, 7, 5, c])
    y = T.output([1, 7, 5, c], "y")
    _op(T, "HARD_SWISH", [x], [y])


def strided_slice(T, c):
    x = T.input([1, 9, 7, c])
    begin, end, strides = T.ints([0, 1, 0, 0]), T.ints([1, 8, 7, c]), T.ints([1, 2, 3, 1])
    y = T.output([1, 4, 3, c], "y", like_input=True)
    _op(T, "STRIDED_SLICE", [x, begin, end, strides], [y])


def depth_to_space(T, c):
    x = T.input([1, 3, 5, 4 * c])
    y = T.output([1, 6, 10, c], "y", like_input=True)
    _op(T, "DEPTH_TO_SPACE", [x], [y], dict(block_size=2))


def concat_rescale(T, c):
    """uint8 CONCATENATION may requantize inputs of other grids (int8 may not)."""
    x = T.input([1, 5, 3, c])
    z = T.input([1, 5, 3, 3], scale=0.03, zp=100)
    y = T.output([1, 5, 3, c + 3], "y")
    _op(T, "CONCATENATION", [x, z], [y], dict(axis=3))


def prelu(T, c):
    x = T.input([1, 5, 7, c])
    alpha, _ = T.weights([c])
    y = T.output([1, 5, 7, c], "y")
    _op(T, "PRELU", [x, alpha], [y])


def transpose_conv(T, c):
    x = T.input([1, 4, 5, 3])
    w, ws = T.weights([c, 3, 3, 3], axis=0 if T.dtype == np.int8 else None)
    b = T.bias(c, ws)
    y = T.output([1, 8, 10, c], "y")
    _op(T, "TRANSPOSE_CONV", [T.ints([1, 8, 10, c]), w, x, b], [y], dict(padding="SAME", stride_w=2, stride_h=2))


OPS = [conv, depthwise, fully_connected, add, mul, average_pool, max_pool, concatenation, reshape, logistic,
       resize_bilinear, pad, mean, softmax]
MORE_OPS = [sub, tanh, relu6, maximum, hard_swish, strided_slice, depth_to_space, prelu, transpose_conv,
            log_softmax]  # beyond the list
CASES = [(op, dtype, c) for op in OPS for dtype in (np.int8, np.uint8) for c in (1, 3, 5, 17)
         if dtype == np.int8 or c in (3, 17)]
CASES += [(op, dtype, c) for op in MORE_OPS for dtype in (np.int8, np.uint8) for c in (3, 17)
          if dtype == np.int8 or c == 3]
CASES += [(concat_rescale, np.uint8, c) for c in (1, 17)]
CASES += [(softmax_beta, dtype, c) for dtype in (np.int8, np.uint8) for c in (1, 5, 17)]


def _build(build, dtype, c, case_id):
    """(quantized model, its inputs): calibrated by a float pass."""
    def make(out_ranges):
        mb = ModelBuilder()
        T = Tensors(mb, np.random.default_rng(zlib.crc32(case_id.encode())), dtype, out_ranges)
        build(T, c)
        return mb.build(), T
    fmodel, F = make(None)
    fout = run_cpu(fmodel, F.inputs)
    ranges = {name: (float(o.min()), float(o.max())) for name, o in zip(F.outputs, fout)}
    qmodel, Q = make(ranges)
    return qmodel, Q.inputs


def assert_within_steps(actual, expected, what=""):
    """>= 99% of elements within 1 quantization step, all within 2."""
    assert actual.shape == expected.shape and actual.dtype == expected.dtype
    diff = np.abs(actual.astype(np.int32) - expected.astype(np.int32))
    within1 = float((diff <= 1).mean()) if diff.size else 1.0
    assert within1 >= 0.99, f"{what}: only {within1:.2%} within 1 step (max {diff.max()})"
    assert diff.max() <= 2, f"{what}: max difference {diff.max()} steps"


@pytest.mark.parametrize("build,dtype,c", [pytest.param(*k, id=f"{k[0].__name__}-{np.dtype(k[1]).name}-c{k[2]}")
                                           for k in CASES])
def test_quantized_op_matches_cpu_integer_kernels(build, dtype, c):
    case_id = f"{build.__name__}-{np.dtype(dtype).name}-c{c}"
    model, inputs = _build(build, dtype, c, case_id)
    expected = run_cpu(model, inputs)
    actual, report = run_delegate(model, inputs)
    assert report.cpu_nodes == 0 and report.partitions == 1
    for a, e in zip(actual, expected):
        assert a.dtype == np.dtype(dtype)
        # The case exercises the grid: outputs are not one saturated value
        # (softmax over one channel is 1 everywhere, which saturates to qmax).
        assert len(np.unique(e)) > 1 or e.size == 1 or (c == 1 and build in (softmax, softmax_beta))
        assert_within_steps(a, e, case_id)
        if dtype == np.int8 and build in (conv, fully_connected, prelu):
            # TFLite's integer requantization (delegate_c/ops/int8_exact.c): bit exact.
            np.testing.assert_array_equal(a, e, case_id)


@pytest.mark.parametrize("fp16", [False, True], ids=["fp32", "fp16"])
def test_quantized_conv_in_fp16_storage(fp16):
    """FP16 storage rounds the float view to 11 bits; still within steps."""
    model, inputs = _build(conv, np.int8, 17, "conv-fp16")
    expected = run_cpu(model, inputs)
    actual, report = run_delegate(model, inputs, is_precision_loss_allowed="1" if fp16 else "0")
    assert report.cpu_nodes == 0
    assert_within_steps(actual[0], expected[0])


def _full_int8_model(rng, dtype=np.int8):
    """Float in, float out: QUANTIZE -> CONV_2D (per-channel) -> ADD of the
    conv's input -> MAX_POOL -> DEQUANTIZE, as a full-integer converter
    writes it."""
    signed = dtype == np.int8
    mb = ModelBuilder()
    x = mb.add_input([1, 9, 11, 5])
    q = lambda s, z: dict(scale=[s], zero_point=[z])  # noqa: E731
    xq = mb.add_tensor([1, 9, 11, 5], dtype, quant=q(2.0 / 255, 0 if signed else 128))
    mb.add_op("QUANTIZE", [x], [xq], version=2 if signed else 1)
    wscales = rng.uniform(0.004, 0.01, 5).astype(np.float32)
    if signed:
        wq = rng.integers(-127, 128, [5, 3, 3, 5]).astype(np.int8)
        w = mb.add_tensor([5, 3, 3, 5], np.int8, data=wq, quant=dict(scale=wscales.tolist(), zero_point=[0] * 5,
                                                                       quantized_dimension=0))
        bscale = (2.0 / 255 * wscales).tolist()
    else:
        wq = rng.integers(0, 256, [5, 3, 3, 5]).astype(np.uint8)
        w = mb.add_tensor([5, 3, 3, 5], np.uint8, data=wq, quant=q(0.008, 127))
        bscale = [2.0 / 255 * 0.008] * 5
    b = mb.add_tensor([5], np.int32, data=rng.integers(-500, 500, 5).astype(np.int32),
                      quant=dict(scale=bscale, zero_point=[0] * 5))
    c = mb.add_tensor([1, 9, 11, 5], dtype, quant=q(4.0 / 255, -10 if signed else 118))
    mb.add_op("CONV_2D", [xq, w, b], [c], dict(padding="SAME"), version=3)
    s = mb.add_tensor([1, 9, 11, 5], dtype, quant=q(6.0 / 255, -3 if signed else 125))
    mb.add_op("ADD", [c, xq], [s], dict(fused_activation="RELU"), version=2)
    p = mb.add_tensor([1, 5, 6, 5], dtype, quant=q(6.0 / 255, -3 if signed else 125))
    mb.add_op("MAX_POOL_2D", [s], [p], dict(filter_w=2, filter_h=2, stride_w=2, stride_h=2), version=2)
    y = mb.add_tensor([1, 5, 6, 5])
    mb.add_op("DEQUANTIZE", [p], [y], version=2 if signed else 1)
    mb.mark_output(y)
    return mb.build()


@pytest.mark.parametrize("dtype", [np.int8, np.uint8], ids=["int8", "uint8"])
def test_full_integer_model_with_float_io(dtype):
    rng = np.random.default_rng(6)
    model = _full_int8_model(rng, dtype)
    inputs = [rng.uniform(-1, 1, [1, 9, 11, 5]).astype(np.float32)]
    expected = run_cpu(model, inputs)[0]
    actual, report = run_delegate(model, inputs)
    assert report.cpu_nodes == 0 and report.partitions == 1
    step = 6.0 / 255
    steps = np.rint(np.abs(actual[0].astype(np.float64) - expected) / step).astype(np.int32)
    assert float((steps <= 1).mean()) >= 0.99 and steps.max() <= 2, steps.max()
    assert np.unique(expected).size > 10


def test_int8_model_with_quant_off_stays_on_cpu(capfd):
    model, inputs = _build(add, np.int8, 3, "quant-off")
    expected = run_cpu(model, inputs)
    capfd.readouterr()
    delegate = tflite_gpu.load_delegate(gpu_experimental_enable_quant="false", log_level="warning")
    it = _interpreter(model, [delegate])
    warning = capfd.readouterr().err
    assert "ADD: input 0" in warning and "ENABLE_QUANT" in warning, warning
    nodes = _capi.delegate_nodes(delegate._get_native_delegate_pointer())
    actual = _run(it, inputs)
    assert [n["where"] for n in nodes] == ["cpu"]
    assert "ENABLE_QUANT" in nodes[0]["reason"] and "INT8" in nodes[0]["reason"], nodes[0]["reason"]
    np.testing.assert_array_equal(actual[0], expected[0])


def test_float_graph_with_int8_constant_dequantize_quant_off():
    """Without ENABLE_QUANT a DEQUANTIZE of an int8 constant is not folded."""
    mb = ModelBuilder()
    x = mb.add_input([1, 4, 4, 3])
    wq = mb.add_tensor([3], np.int8, data=np.array([5, -7, 9], np.int8), quant=dict(scale=[0.1], zero_point=[0]))
    w = mb.add_tensor([3])
    mb.add_op("DEQUANTIZE", [wq], [w], version=2)
    y = mb.add_tensor([1, 4, 4, 3])
    mb.add_op("ADD", [x, w], [y])
    mb.mark_output(y)
    model = mb.build()
    inputs = [np.random.default_rng(1).standard_normal([1, 4, 4, 3]).astype(np.float32)]
    expected = run_cpu(model, inputs)[0]
    actual, report = run_delegate(model, inputs, gpu_experimental_enable_quant="false")
    np.testing.assert_allclose(actual[0], expected, atol=1e-6)
    on, rep_on = run_delegate(model, inputs)
    assert rep_on.cpu_nodes == 0
    np.testing.assert_allclose(on[0], expected, atol=1e-6)


def _hybrid_model(rng, op):
    """Float activations, int8 weights read directly by the op (dynamic
    range quantization): returns (model, float reference weights, bias)."""
    mb = ModelBuilder()
    if op == "FULLY_CONNECTED":
        x = mb.add_input([3, 19])
        wq = rng.integers(-127, 128, [17, 19]).astype(np.int8)
        scale = np.float32(0.01)
        w = mb.add_tensor([17, 19], np.int8, data=wq, quant=dict(scale=[float(scale)], zero_point=[0]))
        bias = rng.standard_normal(17).astype(np.float32)
        b = mb.add_tensor([17], data=bias)
        y = mb.add_tensor([3, 17])
        mb.add_op("FULLY_CONNECTED", [x, w, b], [y], version=1)
        wf = wq.astype(np.float32) * scale
    else:
        x = mb.add_input([1, 7, 9, 5])
        wq = rng.integers(-127, 128, [3, 3, 3, 5]).astype(np.int8)
        scales = rng.uniform(0.005, 0.02, 3).astype(np.float32)
        w = mb.add_tensor([3, 3, 3, 5], np.int8, data=wq,
                          quant=dict(scale=scales.tolist(), zero_point=[0] * 3, quantized_dimension=0))
        bias = rng.standard_normal(3).astype(np.float32)
        b = mb.add_tensor([3], data=bias)
        y = mb.add_tensor([1, 7, 9, 3])
        mb.add_op("CONV_2D", [x, w, b], [y], dict(padding="SAME"), version=2)
        wf = wq.astype(np.float32) * scales.reshape(3, 1, 1, 1)
    mb.mark_output(y)
    return mb.build(), wf, bias


@pytest.mark.parametrize("op", ["FULLY_CONNECTED", "CONV_2D"])
def test_hybrid_model_weights_dequantized_at_prepare(op):
    rng = np.random.default_rng(7)
    model, wf, bias = _hybrid_model(rng, op)
    shape = [3, 19] if op == "FULLY_CONNECTED" else [1, 7, 9, 5]
    x = rng.standard_normal(shape).astype(np.float32)
    actual, report = run_delegate(model, [x])
    assert report.cpu_nodes == 0
    # Constants are gated by nothing but their type (as upstream): also
    # delegated, with the same result, when ENABLE_QUANT is off.
    off, report_off = run_delegate(model, [x], gpu_experimental_enable_quant="false")
    assert report_off.cpu_nodes == 0
    np.testing.assert_array_equal(off[0], actual[0])
    # Exact float math on the dequantized weights (numpy reference) ...
    if op == "FULLY_CONNECTED":
        ref = x @ wf.T + bias
    else:
        xp = np.pad(x, [(0, 0), (1, 1), (1, 1), (0, 0)])
        ref = np.zeros([1, 7, 9, 3], np.float64)
        for ky in range(3):
            for kx in range(3):
                ref += np.einsum("bhwi,oi->bhwo", xp[:, ky:ky + 7, kx:kx + 9, :], wf[:, ky, kx, :])
        ref += bias
    assert rel_l2(actual[0], ref) <= 1e-5
    # ... and close to the CPU's hybrid kernel, which also quantizes the
    # input to int8 on the fly (about 1/127 of the input range per value).
    expected = run_cpu(model, [x])[0]
    assert rel_l2(actual[0], expected) <= 2e-2


@pytest.mark.parametrize("kind", ["full-int8-float-io", "uint8-conv", "hybrid-fc"])
def test_check_compares_quantized_outputs_in_steps(kind, tmp_path):
    """`python -m tflite_gpu check` on quantized models: int8/uint8 outputs
    and float outputs of a DEQUANTIZE are compared in quantization steps."""
    from tflite_gpu.check import QUANT_RTOL_L2, check_model
    from tflite_gpu.check_text import format_result

    rng = np.random.default_rng(9)
    if kind == "full-int8-float-io":
        model = _full_int8_model(rng)
    elif kind == "uint8-conv":
        model, _ = _build(conv, np.uint8, 5, "check-uint8")
    else:
        model, _, _ = _hybrid_model(rng, "FULLY_CONNECTED")
    path = tmp_path / f"{kind}.tflite"
    path.write_bytes(model)
    r = check_model(path, {"log_level": "silent"}, seed=3)
    assert r.cpu_nodes == 0 and r.passed, format_result(r)
    (o,) = r.outputs
    if kind == "hybrid-fc":
        assert o.step == 0 and o.tolerance == QUANT_RTOL_L2
    else:
        assert o.step > 0 and o.within_1_step >= 0.99 and o.max_steps <= 2
        assert "within 1 step" in format_result(r)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8], ids=["int8", "uint8"])
def test_requantize(dtype):
    """QUANTIZE from one grid to another (and int8 <-> uint8)."""
    rng = np.random.default_rng(11)
    mb = ModelBuilder()
    lo, hi = QRANGE[dtype]
    x = mb.add_input([1, 5, 7, 17], dtype, quant=dict(scale=[0.05], zero_point=[3 if dtype == np.int8 else 131]))
    y = mb.add_tensor([1, 5, 7, 17], dtype, quant=dict(scale=[0.037], zero_point=[-5 if dtype == np.int8 else 120]))
    mb.add_op("QUANTIZE", [x], [y], version=2)
    other = np.uint8 if dtype == np.int8 else np.int8
    z = mb.add_tensor([1, 5, 7, 17], other, quant=dict(scale=[0.037], zero_point=[123 if other == np.uint8 else -5]))
    mb.add_op("QUANTIZE", [y], [z], version=2)
    mb.mark_output(y)
    mb.mark_output(z)
    model = mb.build()
    inputs = [rng.integers(lo, hi + 1, [1, 5, 7, 17]).astype(dtype)]
    expected = run_cpu(model, inputs)
    actual, report = run_delegate(model, inputs)
    assert report.cpu_nodes == 0
    for a, e in zip(actual, expected):
        assert_within_steps(a, e, "requantize")


def test_runtime_per_channel_quantized_tensor_stays_on_cpu():
    mb = ModelBuilder()
    x = mb.add_input([1, 3, 3, 2], np.int8, quant=dict(scale=[0.1, 0.2], zero_point=[0, 0], quantized_dimension=3))
    y = mb.add_tensor([1, 3, 3, 2], np.int8, quant=dict(scale=[0.1, 0.2], zero_point=[0, 0], quantized_dimension=3))
    mb.add_op("RESHAPE", [x, mb.add_tensor([4], np.int32, data=[1, 3, 3, 2])], [y])
    mb.mark_output(y)
    delegate = tflite_gpu.load_delegate(log_level="silent")
    it = _interpreter(mb.build(), [delegate])
    (node,) = _capi.delegate_nodes(delegate._get_native_delegate_pointer())
    del it
    assert node["where"] == "cpu" and "per-channel" in node["reason"], node


def test_quantize_dequantize_is_fused_into_conv():
    """The grid step after a quantized conv that keeps the float view (here
    uint8; int8 with FP16 storage) runs inside the conv kernel: input
    conversion, conv, output conversion; an int8 conv takes the integer
    path (delegate_c/ops/int8_exact.c): input conversion, integer view, conv,
    requantization, output conversion. A quantized ADD still gets its own
    small kernel."""
    for dtype, dispatches in ((np.uint8, 3), (np.int8, 5)):
        model, inputs = _build(conv, dtype, 5, "fused-qdq")
        delegate = tflite_gpu.load_delegate(log_level="silent")
        it = _interpreter(model, [delegate])
        (part,) = _capi.delegate_partitions(delegate._get_native_delegate_pointer())
        assert part["dispatches"] == dispatches, dtype
        out, expected = _run(it, inputs)[0], run_cpu(model, inputs)[0]
        assert_within_steps(out, expected, "fused")
        if dtype == np.int8:
            np.testing.assert_array_equal(out, expected)
        del it
    model, inputs = _build(add, np.int8, 5, "unfused-qdq")
    delegate = tflite_gpu.load_delegate(log_level="silent")
    it = _interpreter(model, [delegate])
    (part,) = _capi.delegate_partitions(delegate._get_native_delegate_pointer())
    assert part["dispatches"] == 5  # 2 inputs, add, grid step, output
    del it


def test_model_builder_quantization_params():
    from tflite_gpu.model_builder import quantization

    assert quantization(0.5, 3) == dict(scale=[0.5], zero_point=[3], quantized_dimension=0)
    assert quantization([0.1, 0.2], axis=3)["zero_point"] == [0, 0]
    mb = ModelBuilder()
    with pytest.raises(ValueError, match="per-channel scales do not match"):
        mb.add_tensor([2, 3], np.int8, data=np.zeros(6), quant=quantization([0.1, 0.2, 0.3], axis=0))
    with pytest.raises(ValueError, match="scales must be > 0"):
        mb.add_tensor([2], np.int8, quant=quantization(0.0))
    with pytest.raises(ValueError, match="needs the axis"):
        quantization([0.1, 0.2])
    # Per-channel params round-trip through the flatbuffer to the runtime.
    x = mb.add_input([1, 2], np.int8, quant=quantization(0.25, -1))
    w = mb.add_tensor([3, 2], np.int8, data=np.arange(6) - 3, quant=quantization([0.1, 0.2, 0.3], axis=0))
    b = mb.add_tensor([3], np.int32, data=[1, 2, 3], quant=quantization([0.025, 0.05, 0.075], axis=0))
    y = mb.add_tensor([1, 3], np.int8, quant=quantization(0.5, 2))
    mb.add_op("FULLY_CONNECTED", [x, w, b], [y], version=4)
    mb.mark_output(y)
    it = _interpreter(mb.build())
    details = {d["name"]: d["quantization_parameters"] for d in it.get_tensor_details()}
    np.testing.assert_allclose(details["tensor_1"]["scales"], [0.1, 0.2, 0.3], rtol=1e-6)
    assert details["tensor_0"]["zero_points"].tolist() == [-1]


@pytest.mark.parametrize("wmax,dispatches", [(100, 5), (127, 4)], ids=["exact", "over-2^24"])
def test_int8_fully_connected_accumulation_bound(wmax, dispatches):
    """The integer path (delegate_c/ops/int8_exact.c) needs every partial sum
    below 2^24: 600 inputs with |q - zp| up to 255 and |w| = 100 stay under
    it (15.3M: input conversion, integer view, FC, requantization, output;
    bit exact), |w| = 127 do not (19.4M: the float view, FC then its grid
    step, within steps)."""
    from tflite_gpu.model_builder import quantization
    rng = np.random.default_rng(600)
    mb = ModelBuilder()
    x = mb.add_input([2, 600], np.int8, quant=quantization(0.02, -128))
    wq = (rng.choice([-1, 1], [4, 600]) * wmax).astype(np.int8)
    wq[:, ::7] = rng.integers(-wmax, wmax + 1, wq[:, ::7].shape)
    w = mb.add_tensor([4, 600], np.int8, data=wq, quant=quantization(0.01))
    b = mb.add_tensor([4], np.int32, data=rng.integers(-500, 500, 4).astype(np.int32), quant=quantization(0.0002))
    y = mb.add_tensor([2, 4], np.int8, quant=quantization(0.6, 3))
    mb.add_op("FULLY_CONNECTED", [x, w, b], [y], version=4)
    mb.mark_output(y)
    model = mb.build()
    inputs = [rng.integers(-128, 128, [2, 600]).astype(np.int8)]
    delegate = tflite_gpu.load_delegate(log_level="silent")
    it = _interpreter(model, [delegate])
    (part,) = _capi.delegate_partitions(delegate._get_native_delegate_pointer())
    assert part["dispatches"] == dispatches
    out, expected = _run(it, inputs)[0], run_cpu(model, inputs)[0]
    assert len(np.unique(expected)) > 2
    assert_within_steps(out, expected, "fc-bound")
    if wmax == 100:
        np.testing.assert_array_equal(out, expected)
    del it


@pytest.mark.parametrize("alpha_shape", [[1], [1, 1, 6]], ids=["scalar", "per-channel"])
def test_int8_prelu_integer_path(alpha_shape):
    """PRELU on the integers (delegate_c/ops/int8_exact.c) with one alpha or one
    per channel, and an alpha zero point: one kernel, bit exact."""
    from tflite_gpu.model_builder import quantization
    rng = np.random.default_rng(7)
    mb = ModelBuilder()
    x = mb.add_input([2, 5, 7, 6], np.int8, quant=quantization(0.031, 9))
    aq = rng.integers(-128, 128, alpha_shape).astype(np.int8)
    alpha = mb.add_tensor(alpha_shape, np.int8, data=aq, quant=quantization(0.004, -20))
    y = mb.add_tensor([2, 5, 7, 6], np.int8, quant=quantization(0.027, -5))
    mb.add_op("PRELU", [x, alpha], [y])
    mb.mark_output(y)
    model = mb.build()
    inputs = [rng.integers(-128, 128, [2, 5, 7, 6]).astype(np.int8)]
    delegate = tflite_gpu.load_delegate(log_level="silent")
    it = _interpreter(model, [delegate])
    (part,) = _capi.delegate_partitions(delegate._get_native_delegate_pointer())
    assert part["dispatches"] == 3  # input conversion, PRELU, output conversion
    out, expected = _run(it, inputs)[0], run_cpu(model, inputs)[0]
    assert len(np.unique(expected)) > 50
    np.testing.assert_array_equal(out, expected)
    del it
