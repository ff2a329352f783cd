"""Half arithmetic (HALF_MATH): the GPU kernel set with FP16 storage, on a
device with cl_khr_fp16, computes the row-wise binary ops in half where one
correctly rounded half op gives what float math followed by a half store
should (ADD, MUL, SUB, MAXIMUM, MINIMUM, PRELU with RELU-family
activations). So the results must equal, bit for bit, the exact result
rounded once to half: computed here in float64 from the half-rounded
inputs. PoCL has no cl_khr_fp16 (the tests skip there); the matrix runs
this file on Intel's OpenCL CPU runtime, which has it."""
from __future__ import annotations

import numpy as np
import pytest

import tflite_gpu
from conftest import _interpreter, _run, test_options
from tflite_gpu import _capi
from tflite_gpu.model_builder import ModelBuilder

OPS = {"ADD": np.add, "MUL": np.multiply, "SUB": np.subtract, "MAXIMUM": np.maximum, "MINIMUM": np.minimum}
ACTS = {"NONE": lambda v: v, "RELU": lambda v: np.maximum(v, 0), "RELU6": lambda v: np.clip(v, 0, 6),
        "RELU_N1_TO_1": lambda v: np.clip(v, -1, 1)}


def _device_has_fp16():
    """Whether the device the delegate picks (the first GPU, else the first
    device) has cl_khr_fp16."""
    try:
        devs = _capi.devices()
    except RuntimeError:  # no OpenCL at all: the other tests say so
        return False
    gpus = [d for d in devs if "GPU" in d["type"].upper()]
    return bool(devs) and (gpus or devs)[0]["fp16"]


pytestmark = pytest.mark.skipif(not _device_has_fp16(), reason="the OpenCL device has no cl_khr_fp16")


def _half(x):
    return np.asarray(x, np.float32).astype(np.float16).astype(np.float64)


def binary_model(op, act, shape, per_channel):
    mb = ModelBuilder()
    a = mb.add_input(shape)
    b = mb.add_input([shape[-1]] if per_channel else shape)
    out = mb.add_tensor(shape)
    opts = {} if op in ("MAXIMUM", "MINIMUM") else dict(fused_activation=act)
    mb.add_op(op, [a, b], [out], opts)
    mb.mark_output(out)
    return mb.build()


def _delegate_run(model, inputs, **options):
    d = tflite_gpu.load_delegate(**test_options(kernel_set="gpu", is_precision_loss_allowed=1, **options))
    it = _interpreter(model, [d])
    (out,) = _run(it, inputs)
    del it
    return out


@pytest.mark.parametrize("channels", [1, 3, 5, 17])
@pytest.mark.parametrize("op", sorted(OPS))
def test_binary_ops_round_once(op, channels):
    rng = np.random.default_rng(channels)
    shape = [2, 5, 7, channels]
    act = "RELU6" if op in ("ADD", "MUL", "SUB") else "NONE"
    a = rng.uniform(-8, 8, shape).astype(np.float32)
    b = rng.uniform(-8, 8, shape).astype(np.float32)
    out = _delegate_run(binary_model(op, act, shape, False), [a, b])
    expected = _half(ACTS[act](OPS[op](_half(a), _half(b))))
    np.testing.assert_array_equal(out.astype(np.float64), expected)


@pytest.mark.parametrize("act", sorted(ACTS))
def test_per_channel_operand_and_activations(act):
    rng = np.random.default_rng(7)
    shape = [1, 9, 3, 5]
    a = rng.uniform(-3, 3, shape).astype(np.float32)
    b = rng.uniform(-3, 3, [5]).astype(np.float32)
    out = _delegate_run(binary_model("ADD", act, shape, True), [a, b])
    expected = _half(ACTS[act](_half(a) + _half(b)))
    np.testing.assert_array_equal(out.astype(np.float64), expected)


def test_the_half_math_build_is_used(monkeypatch, capfd):
    """The binary kernel is built with -DHALF_MATH=1 here (else the tests
    above would only check the float path)."""
    monkeypatch.setenv("TFLITE_GPU_BUILD_LOG", "1")
    rng = np.random.default_rng(3)
    shape = [1, 4, 6, 3]
    x = [rng.uniform(-1, 1, shape).astype(np.float32) for _ in range(2)]
    _delegate_run(binary_model("ADD", "NONE", shape, False), x)
    assert "-DHALF_MATH=1" in capfd.readouterr().err
