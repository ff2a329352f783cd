"""Outputs read back without a conversion kernel (executor.c
phwc4_is_bhwc): a float32 output stored as float whose PHWC4 bytes begin
with its BHWC bytes (one pixel per batch with B = 1 or C a multiple of 4,
or exactly 4 channels) is read from its own buffer, a launch fewer; every
other shape, and FP16 storage, keeps its conversion. Results are the CPU
interpreter's either way."""
import numpy as np
import pytest

import tflite_gpu
from conftest import assert_close, run_cpu, test_options
from tflite_gpu import _capi, interpreters
from tflite_gpu.model_builder import ModelBuilder


@pytest.mark.parametrize("kernel_set", ["cpu", "gpu"])
@pytest.mark.parametrize("fp16", [False, True])
@pytest.mark.parametrize("shape,direct", [
    ([1, 63], True), ([1, 1], True), ([1, 1, 1, 17], True), ([2, 1, 1, 8], True), ([1, 3, 5, 4], True), ([4], True),
    ([2, 8], False),  # rank 2 is (W, C): two pixels
    ([2, 1, 1, 6], False), ([1, 3, 5, 5], False), ([1, 2, 1, 1], False), ([3, 5, 3], False),
])
def test_output_read_back(shape, direct, fp16, kernel_set):
    rng = np.random.default_rng(len(shape) * 100 + int(np.prod(shape)))
    mb = ModelBuilder()
    x = mb.add_input(shape)
    c = mb.add_tensor(shape, data=rng.standard_normal(shape).astype(np.float32))
    s = mb.add_tensor(shape)
    mb.add_op("ADD", [x, c], [s], dict(fused_activation="NONE"))
    y = mb.add_tensor(shape)
    mb.add_op("RELU", [s], [y])  # a second node: the output is not the ADD's own
    mb.mark_output(y)
    model = mb.build()
    inputs = [rng.standard_normal(shape).astype(np.float32)]
    (want,) = run_cpu(model, inputs)
    options = test_options(kernel_set=kernel_set)
    if fp16:
        options["is_precision_loss_allowed"] = 1
    d = tflite_gpu.load_delegate(**options)
    it = interpreters.make(model, delegate=d)
    stats = _capi.delegate_stats(d._get_native_delegate_pointer())
    (got,) = interpreters.run(it, inputs)
    assert stats["cpu_nodes"] == 0
    # the input's conversion, ADD, RELU, and the output's conversion unless read directly
    assert stats["dispatches"] == 3 + (0 if direct and not fp16 else 1), stats
    # FP32: the same additions; FP16: inputs, constant and sum rounded to half (2^-11 each).
    tol = 2e-3 if fp16 else 1e-6
    assert_close(got, want, rtol_l2=tol, atol=tol * max(1.0, float(np.abs(want).max())))
