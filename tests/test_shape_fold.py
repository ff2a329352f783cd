"""SHAPE folding beyond the op sweep (tests/op_cases/shape_fold.py): the
folded value follows a resize, a SHAPE that is also a model output comes
out exact, a SHAPE whose reader stays on the CPU stays there too (with
its reason), and a folded value that the runtime groups into another
partition than its reader is written out by the partition that has it."""

import numpy as np

import tflite_gpu
from conftest import _interpreter, _run, assert_close, test_options
from op_cases.shape_fold import _biased, _element, _int_op, _ints, _shape_of
from tflite_gpu import _capi, interpreters
from tflite_gpu.model_builder import ModelBuilder


def _flatten_then_fc(shape, shape_output=False):
    """x + c -> RESHAPE to [batch from SHAPE, rest] -> FULLY_CONNECTED."""
    rng = np.random.default_rng(5)
    mb, inputs = ModelBuilder(), []
    x = _biased(mb, rng, shape, inputs)
    dims = _shape_of(mb, x, len(shape))
    rest = int(np.prod(shape[1:]))
    new_shape = _int_op(mb, "PACK", [_element(mb, dims, 0), _ints(mb, rest)], [2], dict(values_count=2, axis=0))
    flat = mb.add_tensor([shape[0], rest])
    mb.add_op("RESHAPE", [x, new_shape], [flat])
    out = mb.add_tensor([shape[0], 3])
    weights = mb.add_tensor([3, rest], data=rng.standard_normal([3, rest], dtype=np.float32))
    mb.add_op("FULLY_CONNECTED", [flat, weights, -1], [out], dict(fused_activation="NONE", keep_num_dims=False))
    mb.mark_output(out)
    if shape_output:
        mb.mark_output(dims)
    return mb.build(), inputs


def _delegate():
    return tflite_gpu.load_delegate(**test_options())


def _stats(delegate):
    return _capi.delegate_stats(delegate._get_native_delegate_pointer())


def test_folded_batch_follows_a_resize():
    model, _ = _flatten_then_fc([2, 5, 3, 17])
    delegate = _delegate()
    gpu = interpreters.make(model, delegate=delegate, cpu="builtin", allocate=False)
    cpu = interpreters.make(model, cpu="builtin", allocate=False)
    gpu.allocate_tensors()
    assert _stats(delegate)["cpu_nodes"] == 0
    rng = np.random.default_rng(1)
    for batch in (2, 5, 1, 3):
        shape = [batch, 5, 3, 17]
        for it in (gpu, cpu):
            it.resize_tensor_input(it.get_input_details()[0]["index"], shape)
            it.allocate_tensors()
        x = rng.standard_normal(shape, dtype=np.float32)
        (got,), (want,) = _run(gpu, [x]), _run(cpu, [x])
        assert got.shape == want.shape == (batch, 3)
        assert_close(got, want)


def test_shape_as_a_model_output_is_exact():
    model, inputs = _flatten_then_fc([3, 7, 5, 1], shape_output=True)
    delegate = _delegate()
    gpu = _interpreter(model, [delegate])
    assert _stats(delegate)["cpu_nodes"] == 0
    got, want = _run(gpu, inputs), _run(_interpreter(model), inputs)
    assert got[1].dtype == np.int32 and got[1].tolist() == want[1].tolist() == [3, 7, 5, 1]
    assert_close(got[0], want[0])


def _shape_into_fill():
    """SHAPE read by FILL, which the delegate leaves on the CPU: SHAPE stays
    there too, and the float nodes around it are delegated."""
    rng = np.random.default_rng(2)
    mb, inputs = ModelBuilder(), []
    shape = [2, 3, 5, 3]
    x = _biased(mb, rng, shape, inputs)
    filled = mb.add_tensor(shape)
    mb.add_op("FILL", [_shape_of(mb, x, 4), mb.add_tensor([], data=np.float32(1.5))], [filled])
    out = mb.add_tensor(shape)
    mb.add_op("MUL", [x, filled], [out], dict(fused_activation="NONE"))
    mb.mark_output(out)
    return mb.build(), inputs


def test_shape_read_on_the_cpu_stays_there():
    model, inputs = _shape_into_fill()
    delegate = tflite_gpu.load_delegate(**test_options(max_delegated_partitions="2"))
    gpu = _interpreter(model, [delegate])
    nodes = {row["op"]: row for row in _capi.delegate_nodes(delegate._get_native_delegate_pointer())}
    assert nodes["SHAPE"]["where"] == "cpu" and "reader" in nodes["SHAPE"]["reason"], nodes["SHAPE"]
    assert nodes["ADD"]["where"] != "cpu" and nodes["MUL"]["where"] != "cpu"
    (got,), (want,) = _run(gpu, inputs), _run(_interpreter(model), inputs)
    assert_close(got, want)


def test_folded_value_written_by_the_partition_that_holds_it():
    """x + c -> SHAPE chain -> RESHAPE of ROUND(x + c): ROUND stays on the
    CPU, so the runtime makes {ADD, SHAPE, STRIDED_SLICE, PACK} one
    partition and RESHAPE another; the first must output the packed shape
    (a folded constant) for the CPU's view of the graph."""
    rng = np.random.default_rng(3)
    mb, inputs = ModelBuilder(), []
    shape = [3, 5, 7, 1]
    x = _biased(mb, rng, shape, inputs)
    new_shape = _int_op(mb, "PACK", [_element(mb, _shape_of(mb, x, 4), 0), _ints(mb, 35)], [2],
                        dict(values_count=2, axis=0))
    rounded = mb.add_tensor(shape)
    mb.add_op("ROUND", [x], [rounded])
    flat = mb.add_tensor([3, 35])
    mb.add_op("RESHAPE", [rounded, new_shape], [flat])
    out = mb.add_tensor([3, 35])
    mb.add_op("LOGISTIC", [flat], [out])
    mb.mark_output(out)
    mb.mark_output(new_shape)
    model = mb.build()
    delegate = tflite_gpu.load_delegate(**test_options(max_delegated_partitions="4"))
    gpu = _interpreter(model, [delegate])
    stats = _stats(delegate)
    assert stats["cpu_nodes"] == 1 and stats["partitions"] == 2, stats
    got, want = _run(gpu, inputs), _run(_interpreter(model), inputs)
    assert got[1].tolist() == want[1].tolist() == [3, 35]
    assert_close(got[0], want[0])


def test_folded_dequantize_as_a_model_output():
    """The same path for a float fold: fp16 weights behind DEQUANTIZE that
    a MUL reads and the model also outputs."""
    rng = np.random.default_rng(4)
    mb, inputs = ModelBuilder(), []
    x = _biased(mb, rng, [2, 3, 5], inputs)
    half = mb.add_tensor([5], np.float16, data=rng.standard_normal(5).astype(np.float16))
    weights = mb.add_tensor([5])
    mb.add_op("DEQUANTIZE", [half], [weights], version=2)
    out = mb.add_tensor([2, 3, 5])
    mb.add_op("MUL", [x, weights], [out], dict(fused_activation="NONE"))
    mb.mark_output(out)
    mb.mark_output(weights)
    model = mb.build()
    delegate = _delegate()
    gpu = _interpreter(model, [delegate])
    assert _stats(delegate)["cpu_nodes"] == 0
    got, want = _run(gpu, inputs), _run(_interpreter(model), inputs)
    assert got[1].tolist() == want[1].tolist()
    assert_close(got[0], want[0])
