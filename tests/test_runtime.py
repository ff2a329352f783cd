"""Which interpreter the suite runs on: $TFLITE_GPU_RUNTIME is honoured (CI
runs the suite once per runtime and must not silently test the other)."""
import os

import pytest

import tflite_gpu
from conftest import run_cpu, run_delegate
from tflite_gpu.model_builder import ModelBuilder


def test_runtime_is_the_requested_one():
    wanted = os.environ.get("TFLITE_GPU_RUNTIME")
    name = tflite_gpu.runtime().__name__
    assert name.endswith(".interpreter")
    if wanted:
        assert name == f"{wanted}.interpreter"


def test_bad_runtime_name_is_rejected(monkeypatch):
    monkeypatch.setenv("TFLITE_GPU_RUNTIME", "tensorflow")
    with pytest.raises(ValueError, match="TFLITE_GPU_RUNTIME"):
        tflite_gpu.runtime()


def test_delegate_loads_through_this_runtime():
    import numpy as np

    rng = np.random.default_rng(11)
    mb = ModelBuilder()
    x = mb.add_input([2, 5, 3, 17])
    k = mb.add_tensor([17], data=rng.standard_normal(17).astype(np.float32))
    y = mb.add_tensor([2, 5, 3, 17])
    mb.add_op("MUL", [x, k], [y], dict(fused_activation="RELU6"))
    mb.mark_output(y)
    model, inputs = mb.build(), [rng.standard_normal([2, 5, 3, 17]).astype(np.float32)]
    delegate = tflite_gpu.load_delegate(log_level="silent")
    assert isinstance(delegate, tflite_gpu.runtime().Delegate)
    actual, report = run_delegate(model, inputs)
    assert report.delegated_nodes == 1 and report.cpu_nodes == 0
    np.testing.assert_allclose(actual[0], run_cpu(model, inputs)[0], rtol=1e-6, atol=1e-6)
