"""ARG_MAX/ARG_MIN and REVERSE_V2 beyond the op cases: nodes the delegate
must refuse stay on the CPU with a precise reason and the model stays
right; ARG_MAX of a quantized input (v2) runs on its float view."""
import numpy as np
import pytest

from conftest import assert_close, run_cpu, run_delegate
from tflite_gpu.model_builder import ModelBuilder


def _reverse_two_axes(mb, rng):
    # TFLite 2.x reverses only the first axis, LiteRT both: no one answer.
    x = mb.add_input([2, 3, 4])
    axes = mb.add_tensor([2], np.int32, data=np.array([1, 2], np.int32))
    y = mb.add_tensor([2, 3, 4])
    mb.add_op("REVERSE_V2", [x, axes], [y])
    mb.mark_output(y)
    return [rng.standard_normal([2, 3, 4]).astype(np.float32)], 1


def _arg_max_into_gather(mb, rng):
    # A delegated GATHER reads raw int32 indices; ARG_MAX's stay floats.
    x = mb.add_input([4, 5])
    axis = mb.add_tensor([1], np.int32, data=np.array([1], np.int32))
    idx = mb.add_tensor([4], np.int32)
    mb.add_op("ARG_MAX", [x, axis], [idx], dict(output_type="INT32"))
    table = mb.add_input([5, 3])
    y = mb.add_tensor([4, 3])
    mb.add_op("GATHER", [table, idx], [y], dict(axis=0))
    mb.mark_output(y)
    return [rng.standard_normal([4, 5]).astype(np.float32), rng.standard_normal([5, 3]).astype(np.float32)], 1


@pytest.mark.parametrize("build,reason", [
    (_reverse_two_axes, "REVERSE_V2: the axis tensor holds 2 values; exactly 1 is supported"),
    (_arg_max_into_gather, "ARG_MAX: its output is the indices of a GATHER/ONE_HOT"),
], ids=["reverse-two-axes", "arg_max-into-gather"])
def test_refused_with_reason_and_still_correct(build, reason, capfd):
    rng = np.random.default_rng(7)
    mb = ModelBuilder()
    inputs, cpu_nodes = build(mb, rng)
    model = mb.build()
    expected = run_cpu(model, inputs)
    actual, report = run_delegate(model, inputs, log_level="warning")
    err = capfd.readouterr().err
    assert reason in err, err
    assert report.cpu_nodes == cpu_nodes
    for got, want in zip(actual, expected):
        assert_close(got, want, rtol_l2=0, atol=0)


@pytest.mark.parametrize("dtype,version", [(np.int8, 2), (np.uint8, 1)], ids=["int8-v2", "uint8-v1"])
def test_arg_max_of_quantized_input(dtype, version):
    """The float view is monotonic in the stored integers (scale > 0), so
    indices and TFLite's first-index ties are exact."""
    rng = np.random.default_rng(3)
    mb = ModelBuilder()
    x = mb.add_input([2, 7, 9, 5], dtype, quant=dict(scale=[0.05], zero_point=[3]))
    axis = mb.add_tensor([1], np.int32, data=np.array([-1], np.int32))
    y = mb.add_tensor([2, 7, 9], np.int32)
    mb.add_op("ARG_MAX", [x, axis], [y], dict(output_type="INT32"), version=version)
    mb.mark_output(y)
    model = mb.build()
    info = np.iinfo(dtype)
    inputs = [rng.integers(info.min, info.max, [2, 7, 9, 5]).astype(dtype)]
    expected = run_cpu(model, inputs)
    actual, report = run_delegate(model, inputs)
    assert report.cpu_nodes == 0
    np.testing.assert_array_equal(actual[0], expected[0])
