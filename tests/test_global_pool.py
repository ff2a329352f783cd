"""AVERAGE_POOL_2D / MAX_POOL_2D whose window is the whole input (output
1x1, no padding) run as a reduction over H and W (ops_pool.c lowers them
to the MEAN / REDUCE_MAX node, reduce.cl / reduce_gpu.cl), with their fused
activation; every other pool keeps pool2d (pool.cl). Compared with the CPU
interpreter on seeded random data, both kernel sets, FP32 and FP16.

Tolerances: FP32 1e-4 relative to the output's magnitude (the reduction
sums in another order than the CPU's serial loop; MAX is order-free, so
exact); FP16 storage rounds the input and output to half (relative spacing
2^-11), so 4e-3, as tests/test_cl_reduce_gpu.py.
"""
from __future__ import annotations

import numpy as np
import pytest

import tflite_gpu
from conftest import assert_close, run_cpu
from tflite_gpu import _capi, interpreters
from tflite_gpu.model_builder import ModelBuilder

OPS = {"avg": "AVERAGE_POOL_2D", "max": "MAX_POOL_2D"}
# (batch, H, W, C): odd sizes, a 1x1 input (window 1x1), batch 2.
SHAPES = [(1, 7, 9, 1), (1, 13, 13, 3), (2, 1, 1, 5), (1, 33, 17, 17), (2, 13, 13, 17)]
# select_reduce.c: the GPU set gives a window of >= 32 float4s (here
# H * W, channels are not reduced) to a work-group (reduce_gpu).
WG_MIN_REDUCTION = 32


def _out(size, f, s, padding):
    return (size + s - 1) // s if padding == "SAME" else (size - f) // s + 1


def _model(op, shape, fh, fw, stride, padding, act, seed):
    b, h, w, c = shape
    mb = ModelBuilder()
    x = mb.add_input([b, h, w, c])
    y = mb.add_tensor([b, _out(h, fh, stride, padding), _out(w, fw, stride, padding), c])
    mb.add_op(OPS[op], [x], [y], dict(padding=padding, stride_w=stride, stride_h=stride, filter_w=fw,
                                      filter_h=fh, fused_activation=act))
    mb.mark_output(y)
    rng = np.random.default_rng(seed)
    # A spread of per-channel offsets, so means and maxima fall below 0 and
    # above 6 as well as between: RELU6 clamps on both sides. Never zeros.
    offset = rng.uniform(-10.0, 10.0, c)
    x = (offset + 2.0 * rng.standard_normal((b, h, w, c))).astype(np.float32)
    return mb.build(), [x]


def _run(model, inputs, kernel_set, fp16, monkeypatch):
    """Outputs and {kernel: calls} of one invoke (the profile lists the
    kernels the executor dispatched; TFLITE_GPU_PROFILE is read when the
    delegate's device is created)."""
    monkeypatch.setenv("TFLITE_GPU_PROFILE", "1")
    d = tflite_gpu.load_delegate(log_level="silent", kernel_set=kernel_set,
                                 is_precision_loss_allowed=int(fp16))
    it = interpreters.make(model, delegate=d)
    ptr = d._get_native_delegate_pointer()
    outputs = interpreters.run(it, inputs)
    stats = _capi.delegate_stats(ptr)
    assert stats["cpu_nodes"] == 0, stats
    assert _capi.delegate_device(ptr)["precision"] == ("fp16" if fp16 else "fp32")
    kernels = {r["kernel"]: r["calls"] for r in _capi.delegate_profile(ptr)}
    del it
    return outputs[0], kernels


def _check(got, want, op, fp16):
    scale = max(1.0, float(np.abs(want).max()))
    if fp16:
        assert_close(got, want, rtol_l2=4e-3, atol=4e-3 * scale)
    elif op == "max":
        np.testing.assert_array_equal(got, want)  # a max is the same in any order
    else:
        assert_close(got, want, rtol_l2=1e-4, atol=1e-4 * scale)


FP = [pytest.param(False, id="fp32"), pytest.param(True, id="fp16")]


@pytest.mark.parametrize("fp16", FP)
@pytest.mark.parametrize("kernel_set", ["cpu", "gpu"])
@pytest.mark.parametrize("act", ["NONE", "RELU6"])
@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_global_pool_is_a_reduction(shape, op, act, kernel_set, fp16, monkeypatch):
    b, h, w, c = shape
    model, inputs = _model(op, shape, h, w, 1, "VALID", act, seed=h * 1000 + w * 10 + c)
    want = run_cpu(model, inputs)[0]
    got, kernels = _run(model, inputs, kernel_set, fp16, monkeypatch)
    _check(got, want, op, fp16)
    reduce_kernel = "reduce_gpu" if kernel_set == "gpu" and h * w >= WG_MIN_REDUCTION else "reduce"
    assert kernels.get(reduce_kernel) == 1, kernels
    assert "pool2d" not in kernels, kernels


@pytest.mark.parametrize("fp16", FP)
@pytest.mark.parametrize("kernel_set", ["cpu", "gpu"])
@pytest.mark.parametrize("op", list(OPS))
def test_global_same_padding_window_is_a_reduction(op, kernel_set, fp16, monkeypatch):
    """SAME with a stride of the input's size: one output, no padding."""
    model, inputs = _model(op, (1, 7, 9, 3), 7, 9, 9, "SAME", "RELU6", seed=3)
    want = run_cpu(model, inputs)[0]
    got, kernels = _run(model, inputs, kernel_set, fp16, monkeypatch)
    _check(got, want, op, fp16)
    assert "pool2d" not in kernels and sum(v for k, v in kernels.items() if k.startswith("reduce")) == 1, kernels


# Pools whose window is not the whole input keep pool2d: strided 3x3, a
# whole-input filter with SAME padding (output = input size), a window as
# high as the input but narrower, and a 2x2 filter padded over a 1x1 input.
NOT_GLOBAL = [
    pytest.param((1, 13, 13, 5), 3, 3, 2, "VALID", id="3x3s2-valid"),
    pytest.param((1, 13, 11, 3), 3, 3, 2, "SAME", id="3x3s2-same"),
    pytest.param((1, 7, 9, 17), 7, 9, 1, "SAME", id="whole-filter-same-s1"),
    pytest.param((1, 7, 9, 3), 7, 3, 3, "VALID", id="full-height-only"),
    pytest.param((2, 1, 1, 17), 2, 2, 2, "SAME", id="2x2-over-1x1"),
]


@pytest.mark.parametrize("fp16", FP)
@pytest.mark.parametrize("kernel_set", ["cpu", "gpu"])
@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("shape,fh,fw,stride,padding", NOT_GLOBAL)
def test_other_pools_keep_pool2d(shape, fh, fw, stride, padding, op, kernel_set, fp16, monkeypatch):
    model, inputs = _model(op, shape, fh, fw, stride, padding, "RELU6", seed=7)
    want = run_cpu(model, inputs)[0]
    got, kernels = _run(model, inputs, kernel_set, fp16, monkeypatch)
    _check(got, want, op, fp16)
    assert kernels.get("pool2d") == 1, kernels
    assert not any(k.startswith("reduce") for k in kernels), kernels
