"""TRANSPOSE_CONV against the CPU interpreter, and MediaPipe's custom ops
against numpy references written from their semantics (MediaPipe's
mediapipe/util/tflite/operations/*.cc): the stock CPU interpreter has no
kernels for them, so a model holding one runs only through the delegate.

Tolerances: both sides compute in FP32 and differ only in summation order
(and fused multiply-adds), so relative L2 <= 1e-5 and max abs <= 1e-4 times
the output's magnitude hold with room to spare, and any wrong index or
weight is far outside them.
"""
import struct
import zlib

import numpy as np
import pytest

from conftest import assert_close, run_cpu, run_delegate
from tflite_gpu.model_builder import ModelBuilder

RTOL_L2 = 1e-5
ATOL_SCALE = 1e-4


def _rng(case_id):
    return np.random.default_rng(zlib.crc32(case_id.encode()))


def _close(actual, expected):
    atol = ATOL_SCALE * max(1.0, float(np.abs(expected).max()))
    assert_close(actual, expected, rtol_l2=RTOL_L2, atol=atol)


# -- TRANSPOSE_CONV (builtin) ------------------------------------------------------

def _transpose_out(size, k, stride, padding, extra):
    """An output size whose forward conv gives back `size` (extra picks one
    of the stride-many valid sizes)."""
    if padding == "SAME":
        return (size - 1) * stride + 1 + extra % stride
    return (size - 1) * stride + k + extra % stride


TRANSPOSE_CASES = [
    # (batch, h, w, cin, cout, kh, kw, stride, padding, bias, extra)
    (1, 5, 7, 3, 5, 3, 3, 2, "SAME", True, 1),
    (1, 5, 7, 3, 5, 3, 3, 2, "SAME", False, 1),
    (2, 4, 3, 5, 1, 2, 2, 2, "SAME", True, 0),
    (1, 3, 5, 17, 3, 4, 4, 2, "VALID", True, 1),
    (1, 3, 5, 17, 3, 4, 4, 2, "VALID", False, 0),
    (1, 6, 5, 1, 17, 3, 2, 3, "SAME", True, 2),
    (1, 7, 9, 8, 8, 3, 3, 1, "SAME", True, 0),
    (2, 5, 5, 3, 3, 1, 1, 1, "VALID", False, 0),
    (1, 4, 6, 5, 7, 5, 3, 2, "VALID", True, 1),
]


def _transpose_id(c):
    n, h, w, cin, cout, kh, kw, s, pad, bias, extra = c
    return f"tconv-{n}x{h}x{w}x{cin}to{cout}-k{kh}x{kw}-s{s}-{pad}-{'bias' if bias else 'nobias'}-e{extra}"


def _transpose_model(c, version=None):
    n, h, w, cin, cout, kh, kw, s, pad, bias, extra = c
    rng = _rng(_transpose_id(c))
    oh, ow = _transpose_out(h, kh, s, pad, extra), _transpose_out(w, kw, s, pad, extra + 1)
    mb = ModelBuilder()
    x = mb.add_input([n, h, w, cin])
    shape = mb.add_tensor([4], np.int32, data=np.array([n, oh, ow, cout], np.int32))
    wt = mb.add_tensor([cout, kh, kw, cin], data=rng.standard_normal((cout, kh, kw, cin), np.float32))
    inputs = [shape, wt, x]
    if bias:
        inputs.append(mb.add_tensor([cout], data=rng.standard_normal(cout, np.float32)))
    y = mb.add_tensor([n, oh, ow, cout])
    mb.add_op("TRANSPOSE_CONV", inputs, [y], dict(padding=pad, stride_w=s, stride_h=s),
              version=version or (3 if bias else 1))
    mb.mark_output(y)
    return mb.build(), [rng.standard_normal((n, h, w, cin), np.float32)]


@pytest.mark.parametrize("case", TRANSPOSE_CASES, ids=_transpose_id)
def test_transpose_conv_matches_cpu(case):
    model, inputs = _transpose_model(case)
    expected = run_cpu(model, inputs)
    actual, report = run_delegate(model, inputs)
    assert report.cpu_nodes == 0 and report.partitions == 1
    _close(actual[0], expected[0])


def test_transpose_conv_v4_falls_back():
    """Version 4 adds a fused activation the delegate does not read: the node
    stays on the CPU with its reason, and the model stays correct."""
    model, inputs = _transpose_model(TRANSPOSE_CASES[0], version=4)
    expected = run_cpu(model, inputs)
    actual, report = run_delegate(model, inputs)
    assert report.cpu_nodes == 1 and report.partitions == 0
    _close(actual[0], expected[0])  # the CPU leftovers run on XNNPACK: summation order differs


# -- Convolution2DTransposeBias (MediaPipe) ----------------------------------------

def ref_transpose_conv_bias(x, w, b, padding, sw, sh):
    """MediaPipe's transpose_conv_bias.cc: output size and scatter-add."""
    n, h, wd, _ = x.shape
    cout, kh, kw, _ = w.shape

    def pad_total(size, k, s):
        return max(0, k - (size - 1) % s - 1) if padding == 1 else 0

    ph, pw = pad_total(h, kh, sh), pad_total(wd, kw, sw)
    oh, ow = sh * (h - 1) + kh - ph, sw * (wd - 1) + kw - pw
    out = np.tile(b.astype(np.float64), (n, oh, ow, 1))
    for iy in range(h):
        for ix in range(wd):
            for fy in range(kh):
                for fx in range(kw):
                    oy, ox = iy * sh - ph // 2 + fy, ix * sw - pw // 2 + fx
                    if 0 <= oy < oh and 0 <= ox < ow:
                        out[:, oy, ox, :] += x[:, iy, ix, :].astype(np.float64) @ w[:, fy, fx, :].T.astype(np.float64)
    return out.astype(np.float32)


def _tconv_bias_model(x_shape, cout, kh, kw, padding, sw, sh, rng, options=None):
    n, h, wd, cin = x_shape
    w = rng.standard_normal((cout, kh, kw, cin), np.float32)
    b = rng.standard_normal(cout, np.float32)
    x = rng.standard_normal(x_shape, np.float32)
    expected = ref_transpose_conv_bias(x, w, b, padding, sw, sh)
    mb = ModelBuilder()
    xi = mb.add_input(x_shape)
    wi = mb.add_tensor(w.shape, data=w)
    bi = mb.add_tensor(b.shape, data=b)
    y = mb.add_tensor(expected.shape)
    mb.add_op("CUSTOM:Convolution2DTransposeBias", [xi, wi, bi], [y],
              custom_options=options if options is not None else struct.pack("<3i", padding, sw, sh))
    mb.mark_output(y)
    return mb.build(), [x], expected


TCONV_BIAS_CASES = [
    # (input shape, cout, kh, kw, padding (1 SAME, 2 VALID), stride_w, stride_h)
    ((1, 9, 7, 16), 1, 2, 2, 1, 2, 2),   # selfie_segmentation's last layer, smaller
    ((2, 5, 6, 3), 5, 3, 3, 1, 2, 2),
    ((1, 4, 5, 5), 17, 4, 3, 2, 2, 3),
    ((1, 6, 3, 17), 3, 3, 3, 1, 1, 1),
    ((1, 5, 5, 1), 3, 5, 5, 1, 3, 2),
]


@pytest.mark.parametrize("case", TCONV_BIAS_CASES, ids=lambda c: f"tconvbias-{'x'.join(map(str, c[0]))}-{c[1:]}")
def test_convolution2d_transpose_bias(case):
    shape, cout, kh, kw, pad, sw, sh = case
    model, inputs, expected = _tconv_bias_model(shape, cout, kh, kw, pad, sw, sh, _rng(str(case)))
    actual, report = run_delegate(model, inputs)
    assert report.cpu_nodes == 0 and report.partitions == 1
    _close(actual[0], expected)


def test_transpose_conv_bias_reference_agrees_with_tflite():
    """The numpy reference itself, against the CPU's TRANSPOSE_CONV where the
    two ops coincide (VALID: no padding, output stride*(in-1)+k)."""
    rng = _rng("tconv-ref")
    x = rng.standard_normal((1, 4, 5, 3), np.float32)
    w = rng.standard_normal((5, 3, 3, 3), np.float32)
    b = rng.standard_normal(5, np.float32)
    expected = ref_transpose_conv_bias(x, w, b, 2, 2, 2)
    mb = ModelBuilder()
    xi = mb.add_input(x.shape)
    shape = mb.add_tensor([4], np.int32, data=np.array(expected.shape, np.int32))
    y = mb.add_tensor(expected.shape)
    mb.add_op("TRANSPOSE_CONV", [shape, mb.add_tensor(w.shape, data=w), xi, mb.add_tensor([5], data=b)], [y],
              dict(padding="VALID", stride_w=2, stride_h=2), version=3)
    mb.mark_output(y)
    _close(expected, run_cpu(mb.build(), [x])[0])


def test_transpose_conv_bias_short_options_stay_on_cpu():
    """custom_options shorter than the three int32s: refused with a reason
    (the stock runtime then cannot run the node: allocation fails cleanly)."""
    model, inputs, _ = _tconv_bias_model((1, 3, 3, 2), 2, 2, 2, 1, 2, 2, _rng("short"), options=b"\x01\x00")
    with pytest.raises((RuntimeError, ValueError)):
        run_delegate(model, inputs)
