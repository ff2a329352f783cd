"""fp16_guard=on: an FP16 partition is also run on float storage at start-up,
and an output whose half result drifts from it keeps everything it depends
on in float (mixed_storage.c), while the other outputs stay half.

The model has two outputs of one input x, uniform in [-1, 1):
  cancel = (x + 300) - 300   half storage rounds x + 300 to 0.25 steps, so
                             the result is off by up to 0.125 (~10% relative)
  double = x * 2             benign: half's 2^-11 relative rounding only
The first is what pose_landmark_full's segmentation head does on a large
scale (docs/troubleshooting.md)."""
from __future__ import annotations

import numpy as np
import pytest

import tflite_gpu
from conftest import _interpreter, _run, rel_l2, run_cpu, test_options
from tflite_gpu.model_builder import ModelBuilder

SHAPE = [1, 5, 7, 3]


def guard_model(with_double=True, shape=SHAPE, tail=()):
    """tail: unary ops after the double (more half nodes)."""
    mb = ModelBuilder()
    x = mb.add_input(shape)
    c = shape[-1]
    up = mb.add_tensor(shape)
    mb.add_op("ADD", [x, mb.add_tensor([c], data=np.full(c, 300, np.float32))], [up], dict(fused_activation="NONE"))
    back = mb.add_tensor(shape)
    mb.add_op("ADD", [up, mb.add_tensor([c], data=np.full(c, -300, np.float32))], [back],
              dict(fused_activation="NONE"))
    mb.mark_output(back)
    if with_double:
        dbl = mb.add_tensor(shape)
        mb.add_op("MUL", [x, mb.add_tensor([c], data=np.full(c, 2, np.float32))], [dbl], dict(fused_activation="NONE"))
        for op in tail:
            dbl, src = mb.add_tensor(shape), dbl
            mb.add_op(op, [src], [dbl])
        mb.mark_output(dbl)
    return mb.build()


TAIL = ("TANH", "ABS", "NEG")


def inputs(seed=0, shape=SHAPE):
    return [np.random.default_rng(seed).uniform(-1, 1, shape).astype(np.float32)]


def _delegated(model, x, **options):
    d = tflite_gpu.load_delegate(**test_options(**options))
    it = _interpreter(model, [d])
    out = _run(it, x)
    del it
    return out


def test_half_storage_alone_loses_the_cancelling_output():
    """The failure the guard exists for: without it, FP16 is 10% off."""
    model, x = guard_model(), inputs()
    cancel, _ = _delegated(model, x, is_precision_loss_allowed=1)
    assert rel_l2(cancel, run_cpu(model, x)[0]) > 0.02


@pytest.mark.parametrize("seed", [0, 1])
def test_guard_keeps_only_the_drifting_output_on_float(seed, capfd):
    model, x = guard_model(), inputs(seed)
    expected = run_cpu(model, x)
    cancel, double = _delegated(model, x, is_precision_loss_allowed=1, fp16_guard="on", log_level="info")
    log = capfd.readouterr().err
    # x itself arrives on half (the MUL reads it too): the cancelling
    # output is x rounded to half, 2^-12 relative on average, 2^-11 at most.
    assert rel_l2(cancel, expected[0]) < 1e-3
    assert np.abs(cancel - expected[0]).max() <= 2.0 ** -11
    assert rel_l2(double, expected[1]) < 1e-3
    assert log.count("kept on float with what it depends on") == 1, log
    assert "FP16 partition: 2 nodes kept on float storage" in log, log


def _vm_run(model, x, execution, capfd):
    """The guarded FP16 partition in a VM mode: its outputs, the last
    invoke's run, the partition's row and the log; the launches asserted
    (one persistent, one per dispatch stepped)."""
    from tflite_gpu import _capi, interpreters
    d = tflite_gpu.load_delegate(**test_options(is_precision_loss_allowed=1, fp16_guard="on", log_level="info",
                                                execution=execution))
    it = interpreters.make(model, delegate=d)
    got = interpreters.run(it, x)
    (run,) = _capi.delegate_runs(d._get_native_delegate_pointer())
    (part,) = _capi.delegate_partitions(d._get_native_delegate_pointer())
    del it
    assert run["execution"] == execution and run["launches"] == (1 if execution == "persistent" else part["dispatches"])
    return got, part, capfd.readouterr().err


@pytest.mark.parametrize("execution", ["stepped", "persistent"])
def test_in_the_vm_modes_a_float_island_runs_the_float_copies(execution, capfd):
    """The FP16 VM program holds a float copy of each body (tools/gen_vm.py,
    VM_FLOAT_COPY): the guard's float nodes (2 of 5, less than half) and
    their conversion are phases of the same program, so the partition stays
    whole (one launch persistent, no dispatch left as a kernel) and its
    outputs are bit for bit the kernels mode's, where the island is built
    with -DFP32_STORAGE=1. The cancelling output is then as right as there
    (2^-11 at most, where half storage alone is 10% off)."""
    model, x = guard_model(tail=TAIL), inputs(2)
    expected = run_cpu(model, x)
    kernels = _delegated(model, x, is_precision_loss_allowed=1, fp16_guard="on")
    capfd.readouterr()
    got, part, log = _vm_run(model, x, execution, capfd)
    assert "FP16 partition: 2 nodes kept on float storage, 1 conversions" in log, log
    assert f"execution={execution}: {part['dispatches']} of {part['dispatches']} dispatches as VM phases" in log, log
    for a, k in zip(got, kernels):
        np.testing.assert_array_equal(a, k)
    assert np.abs(got[0] - expected[0]).max() <= 2.0 ** -11
    assert rel_l2(got[1], expected[1]) < 1e-3


@pytest.mark.parametrize("execution", ["stepped", "persistent"])
def test_in_the_vm_modes_an_island_of_half_the_nodes_makes_the_partition_float(execution, capfd):
    """2 of 3 nodes: every node goes float (mixed_storage.h says why), no
    conversion, still one launch persistent; x no longer rounds to half."""
    model, x = guard_model(), inputs(2)
    expected = run_cpu(model, x)
    got, _, log = _vm_run(model, x, execution, capfd)
    # The guard's float build, then the partition's own.
    assert log.count("FP16 partition: 3 nodes kept on float storage, 0 conversions") == 2, log
    for a, b in zip(got, expected):
        assert rel_l2(a, b) < 1e-5


def test_an_input_that_only_float_nodes_read_arrives_on_float():
    """With no half reader, x is never rounded: the same float arithmetic
    as the CPU's, bit for bit."""
    model, x = guard_model(with_double=False), inputs(2)
    (cancel,) = _delegated(model, x, is_precision_loss_allowed=1, fp16_guard="on")
    np.testing.assert_array_equal(cancel, run_cpu(model, x)[0])


def test_guard_is_a_no_op_in_fp32(capfd):
    model, x = guard_model(), inputs(3)
    out = _delegated(model, x, fp16_guard="on", log_level="info")
    for a, e in zip(out, run_cpu(model, x)):
        np.testing.assert_allclose(a, e, rtol=1e-6, atol=1e-6)
    assert "fp16_guard" not in capfd.readouterr().err


def test_float_outputs_survive_a_resize():
    """The outputs the guard chose stay on float when the partition is
    planned again for new input shapes."""
    model = guard_model()
    d = tflite_gpu.load_delegate(**test_options(is_precision_loss_allowed=1, fp16_guard="on"))
    it = _interpreter(model, [d])
    shape = [2, 9, 4, 3]
    it.resize_tensor_input(it.get_input_details()[0]["index"], shape)
    it.allocate_tensors()
    x = inputs(4, shape)
    cancel, double = _run(it, x)
    del it
    ref_it = _interpreter(model)
    ref_it.resize_tensor_input(ref_it.get_input_details()[0]["index"], shape)
    ref_it.allocate_tensors()
    expected = _run(ref_it, x)
    assert np.abs(cancel - expected[0]).max() <= 2.0 ** -11
    assert rel_l2(double, expected[1]) < 1e-3


@pytest.mark.parametrize("bad", ["maybe", "2", ""])
def test_bad_values_are_refused_by_name(bad):
    with pytest.raises(ValueError, match="fp16_guard"):
        tflite_gpu.load_delegate(**test_options(fp16_guard=bad))


def test_a_constant_read_on_both_storages():
    """One constant (300) read by the float ADD and by a half MUL: each
    gets a copy in its own storage type."""
    mb = ModelBuilder()
    x = mb.add_input(SHAPE)
    k = mb.add_tensor([3], data=np.full(3, 300, np.float32))
    up, back, scaled = (mb.add_tensor(SHAPE) for _ in range(3))
    mb.add_op("ADD", [x, k], [up], dict(fused_activation="NONE"))
    mb.add_op("ADD", [up, mb.add_tensor([3], data=np.full(3, -300, np.float32))], [back],
              dict(fused_activation="NONE"))
    mb.add_op("MUL", [x, k], [scaled], dict(fused_activation="NONE"))
    mb.mark_output(back)
    mb.mark_output(scaled)
    model, x_in = mb.build(), inputs(5)
    expected = run_cpu(model, x_in)
    cancel, scaled_out = _delegated(model, x_in, is_precision_loss_allowed=1, fp16_guard="on")
    assert np.abs(cancel - expected[0]).max() <= 2.0 ** -11
    assert rel_l2(scaled_out, expected[1]) < 1e-3
