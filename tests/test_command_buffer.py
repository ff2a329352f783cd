"""The dispatch-list replay (delegate_c/runtime/cmdbuf.c): where the device offers
cl_khr_command_buffer, invokes after the first replay the partition's
kernels as one recorded command buffer. It must give the same bits as the
kernel-by-kernel path (the default; policy command_buffer=1 turns the
replay on, read when a partition records, after its first invoke), be dropped and re-recorded when a resize
re-plans, be released with the interpreter, and stay off under profiling."""
from __future__ import annotations

import numpy as np
import pytest

import tflite_gpu
from tflite_gpu import _capi
from tflite_gpu.model_builder import ModelBuilder

from conftest import _interpreter, _run, assert_close, run_cpu, test_options, set_policy


def _has_command_buffer():
    """Every device offers it, so whichever the delegate picks does."""
    try:
        devs = _capi.devices()
    except RuntimeError:
        return False
    return bool(devs) and all(d.get("command_buffer") for d in devs)


needs_cb = pytest.mark.skipif(not _has_command_buffer(), reason="no device offers cl_khr_command_buffer")


def _model():
    """conv -> ADD const -> depthwise -> MEAN: several kernels plus the
    boundary conversions, on a resizable input."""
    rng = np.random.default_rng(11)
    mb = ModelBuilder()
    x = mb.add_input([1, 9, 7, 5])

    def const(shape):
        return mb.add_tensor(shape, data=rng.standard_normal(shape, dtype=np.float32))

    conv = mb.add_tensor([1, 9, 7, 6])
    mb.add_op("CONV_2D", [x, const([6, 3, 3, 5]), const([6])], [conv],
              dict(padding="SAME", stride_w=1, stride_h=1, fused_activation="RELU"))
    added = mb.add_tensor([1, 9, 7, 6])
    mb.add_op("ADD", [conv, const([6])], [added], dict(fused_activation="NONE"))
    dw = mb.add_tensor([1, 9, 7, 6])
    mb.add_op("DEPTHWISE_CONV_2D", [added, const([1, 3, 3, 6]), const([6])], [dw],
              dict(padding="SAME", stride_w=1, stride_h=1, depth_multiplier=1, fused_activation="NONE"))
    mb.mark_output(dw)
    return mb.build()


def _invokes(monkeypatch, setting, xs, model=None):
    set_policy(monkeypatch, command_buffer=setting)
    delegate = tflite_gpu.load_delegate(**test_options())
    it = _interpreter(model or _model(), [delegate])
    outs = [_run(it, [x])[0] for x in xs]
    return it, outs


def _inputs(n, shape=(1, 9, 7, 5)):
    rng = np.random.default_rng(2)
    return [rng.uniform(-1, 1, shape).astype(np.float32) for _ in range(n)]


@needs_cb
def test_replay_gives_the_same_bits_as_enqueueing_each_kernel(monkeypatch):
    xs = _inputs(4)
    before = _capi.command_buffer_counters()
    it_off, off = _invokes(monkeypatch, "0", xs)
    assert _capi.command_buffer_counters() == before  # switched off: nothing recorded
    set_policy(monkeypatch, command_buffer=None)
    it_default = _interpreter(_model(), [tflite_gpu.load_delegate(**test_options())])
    for x, want in zip(xs, off):
        np.testing.assert_array_equal(_run(it_default, [x])[0], want)
    assert _capi.command_buffer_counters() == before  # off by default
    del it_default
    it_on, on = _invokes(monkeypatch, "1", xs)
    after = _capi.command_buffer_counters()
    assert after["live"] == before["live"] + 1
    assert after["replays"] == before["replays"] + 3  # the first invoke enqueues kernel by kernel
    for a, b, x in zip(off, on, xs):
        np.testing.assert_array_equal(a, b)
        assert_close(b, run_cpu(_model(), [x])[0])
    del it_on
    assert _capi.command_buffer_counters()["live"] == before["live"]  # released with the interpreter
    del it_off


@needs_cb
def test_a_resize_drops_the_recording_and_records_again(monkeypatch):
    set_policy(monkeypatch, command_buffer="1")
    model = _model()
    delegate = tflite_gpu.load_delegate(**test_options())
    it = _interpreter(model, [delegate])
    cpu = _interpreter(model)
    live0 = _capi.command_buffer_counters()["live"]
    for shape in ([1, 9, 7, 5], [2, 12, 6, 5], [1, 5, 4, 5]):
        it.resize_tensor_input(it.get_input_details()[0]["index"], shape)
        it.allocate_tensors()
        cpu.resize_tensor_input(cpu.get_input_details()[0]["index"], shape)
        cpu.allocate_tensors()
        for x in _inputs(3, shape):
            got, want = _run(it, [x])[0], _run(cpu, [x])[0]
            assert got.shape == want.shape
            assert_close(got, want)
        assert _capi.command_buffer_counters()["live"] == live0 + 1  # the old plan's buffer is gone
    del it
    assert _capi.command_buffer_counters()["live"] == live0
