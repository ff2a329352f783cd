"""Bad models: unexpected tensor types or ranks, zero-size tensors, missing
buffers, runtime weights. Each node either falls back to the CPU with a
precise reason (and the outputs match the CPU interpreter) or the delegate
reports a clear error; nothing crashes."""
from __future__ import annotations

import numpy as np
import pytest

import tflite_gpu
from tflite_gpu import _capi
from tflite_gpu.model_builder import ModelBuilder

from conftest import assert_close, run_cpu


def _delegate_run(model, inputs):
    delegate = tflite_gpu.load_delegate(log_level="warning")
    it = tflite_gpu.runtime().Interpreter(model_content=model, experimental_delegates=[delegate])
    it.allocate_tensors()
    for d, x in zip(it.get_input_details(), inputs):
        it.set_tensor(d["index"], x)
    it.invoke()
    stats = _capi.delegate_stats(delegate._get_native_delegate_pointer())
    return [it.get_tensor(d["index"]).copy() for d in it.get_output_details()], stats


def _add_model(shape, dtype=np.float32, const_second=None):
    mb = ModelBuilder()
    x = mb.add_input(shape, dtype)
    y = mb.add_tensor(shape, dtype, data=const_second) if const_second is not None else mb.add_input(shape, dtype)
    out = mb.add_tensor(shape, dtype)
    mb.add_op("ADD", [x, y], [out], dict(fused_activation="NONE"))
    mb.mark_output(out)
    return mb.build()


def _check_fallback(model, inputs, capfd, reason):
    got, stats = _delegate_run(model, inputs)
    err = capfd.readouterr().err
    assert stats["cpu_nodes"] >= 1 and stats["delegated_nodes"] == 0, stats
    assert reason in err, err
    for g, e in zip(got, run_cpu(model, inputs)):
        np.testing.assert_array_equal(g, e)  # the CPU ran it: identical


def test_int32_runtime_tensors_fall_back(capfd):
    rng = np.random.default_rng(1)
    xs = [rng.integers(-50, 50, [1, 3, 5, 3], dtype=np.int32) for _ in range(2)]
    _check_fallback(_add_model([1, 3, 5, 3], np.int32), xs, capfd, "only FLOAT32 runtime tensors")


def test_rank_5_tensors_fall_back(capfd):
    rng = np.random.default_rng(2)
    xs = [rng.standard_normal([2, 1, 3, 2, 5], dtype=np.float32) for _ in range(2)]
    _check_fallback(_add_model([2, 1, 3, 2, 5]), xs, capfd, "rank 5")


def test_zero_size_tensors_fall_back(capfd):
    xs = [np.zeros([1, 0, 5, 3], np.float32) for _ in range(2)]
    _check_fallback(_add_model([1, 0, 5, 3]), xs, capfd, "zero-size")


def test_constant_without_buffer_is_a_runtime_tensor():
    """A 'constant' whose buffer is empty is a runtime tensor to TFLite; the
    delegate must treat it the same way (no read of missing data)."""
    mb = ModelBuilder()
    x = mb.add_input([1, 4, 3, 5])
    y = mb.add_tensor([1, 4, 3, 5])  # no data, not an input: buffer 0 (empty)
    out = mb.add_tensor([1, 4, 3, 5])
    mb.add_op("ADD", [x, y], [out], dict(fused_activation="NONE"))
    mb.mark_output(out)
    model = mb.build()
    x0 = np.random.default_rng(3).standard_normal([1, 4, 3, 5], dtype=np.float32)
    with pytest.raises(RuntimeError, match="lacks data"):
        run_cpu(model, [x0])  # the runtime refuses to invoke: so must the delegated graph
    with pytest.raises(RuntimeError, match="lacks data"):
        _delegate_run(model, [x0])


def test_runtime_conv_weights_fall_back(capfd):
    rng = np.random.default_rng(4)
    mb = ModelBuilder()
    x = mb.add_input([1, 6, 5, 3])
    w = mb.add_input([4, 3, 3, 3])  # weights fed at run time
    b = mb.add_tensor([4], data=rng.standard_normal(4, dtype=np.float32))
    out = mb.add_tensor([1, 6, 5, 4])
    mb.add_op("CONV_2D", [x, w, b], [out], dict(padding="SAME", stride_w=1, stride_h=1, fused_activation="NONE"))
    mb.mark_output(out)
    model = mb.build()
    xs = [rng.standard_normal([1, 6, 5, 3], dtype=np.float32), rng.standard_normal([4, 3, 3, 3], dtype=np.float32)]
    got, stats = _delegate_run(model, xs)
    assert stats["delegated_nodes"] == 0
    assert "constant" in capfd.readouterr().err
    assert_close(got[0], run_cpu(model, xs)[0])


def test_declared_output_shape_that_lies_falls_back(capfd):
    """An output declared [1,4,3,5] for an ADD that computes [1,4,3,2]."""
    mb = ModelBuilder()
    x = mb.add_input([1, 4, 3, 2])
    y = mb.add_input([1, 4, 3, 2])
    out = mb.add_tensor([1, 4, 3, 5])
    mb.add_op("ADD", [x, y], [out], dict(fused_activation="NONE"))
    mb.mark_output(out)
    model = mb.build()
    rng = np.random.default_rng(5)
    xs = [rng.standard_normal([1, 4, 3, 2], dtype=np.float32) for _ in range(2)]
    got, stats = _delegate_run(model, xs)
    assert stats["delegated_nodes"] == 0, stats
    assert "differs from the computed" in capfd.readouterr().err


def test_resize_to_zero_batch_fails_clearly(capfd):
    from test_resize import C_IN, _chain_model
    delegate = tflite_gpu.load_delegate(log_level="warning")
    it = tflite_gpu.runtime().Interpreter(model_content=_chain_model(), experimental_delegates=[delegate])
    it.allocate_tensors()
    it.resize_tensor_input(it.get_input_details()[0]["index"], [0, 9, 7, C_IN])
    with pytest.raises(RuntimeError):
        it.allocate_tensors()
    assert "cannot follow the input resize" in capfd.readouterr().err
