"""Elementwise ops beyond the single-op sweep of test_ops.py: bool and int32
tensors crossing partition boundaries, versions above the limit falling
back to the CPU with their reason, and FP16 storage."""
import numpy as np
import pytest

import tflite_gpu
from conftest import _interpreter, _run, assert_close, run_cpu, run_delegate
from op_cases import COMPARISONS, elementwise_cases
from tflite_gpu import _capi
from tflite_gpu.model_builder import ModelBuilder


def _delegate_nodes(model, inputs, **options):
    """Outputs and the per-node report (op, where, reason) of one run."""
    options.setdefault("log_level", "silent")
    delegate = tflite_gpu.load_delegate(**options)
    it = _interpreter(model, [delegate])
    nodes = _capi.delegate_nodes(delegate._get_native_delegate_pointer())
    outputs = _run(it, inputs)
    del it
    return outputs, nodes


def _assert_equal_outputs(actual, expected):
    """Float outputs to the FP32 tolerance of test_ops; bool/int32 exactly."""
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected):
        assert got.dtype == want.dtype and got.shape == want.shape
        if want.dtype == np.float32:
            assert_close(got, want, rtol_l2=1e-4, atol=1e-4 * max(1.0, float(np.abs(want).max())))
        else:
            assert np.array_equal(got, want), f"{int((got != want).sum())} of {want.size} values differ"


# -- bool and int32 tensors between partitions ----------------------------------

def _bool_between_partitions():
    """GREATER and LESS (GPU) -> LOGICAL_OR (CPU only) -> SELECT_V2 (GPU):
    two bool partition outputs, then a bool partition input."""
    rng = np.random.default_rng(5)
    shape = [2, 5, 7, 3]
    mb = ModelBuilder()
    x, y = mb.add_input(shape), mb.add_input(shape)
    z = mb.add_tensor([3], data=rng.standard_normal(3).astype(np.float32))
    gt, lt, either = (mb.add_tensor(shape, np.bool_) for _ in range(3))
    mb.add_op("GREATER", [x, y], [gt])
    mb.add_op("LESS", [x, z], [lt])
    mb.add_op("LOGICAL_OR", [gt, lt], [either])
    out = mb.add_tensor(shape)
    mb.add_op("SELECT_V2", [either, x, y], [out])
    mb.mark_output(out)
    mb.mark_output(gt)
    inputs = [rng.standard_normal(shape).astype(np.float32) for _ in range(2)]
    return mb.build(), inputs


def _int_between_partitions():
    """x -> CAST int32 (GPU) -> ADD int32 (CPU only) -> CAST float -> MUL (GPU)."""
    rng = np.random.default_rng(6)
    shape = [1, 4, 6, 5]
    mb = ModelBuilder()
    x = mb.add_input(shape)
    k = mb.add_input(shape, np.int32)
    xi, si = mb.add_tensor(shape, np.int32), mb.add_tensor(shape, np.int32)
    mb.add_op("CAST", [x], [xi])
    mb.add_op("ADD", [xi, k], [si], dict(fused_activation="NONE"))
    sf, out = mb.add_tensor(shape), mb.add_tensor(shape)
    mb.add_op("CAST", [si], [sf])
    mb.add_op("MUL", [sf, x], [out], dict(fused_activation="NONE"))
    mb.mark_output(out)
    inputs = [(8 * rng.standard_normal(shape)).astype(np.float32),
              rng.integers(-100, 100, shape).astype(np.int32)]
    return mb.build(), inputs


@pytest.mark.parametrize("make", [_bool_between_partitions, _int_between_partitions],
                         ids=["bool", "int32"])
def test_typed_tensors_cross_partitions(make):
    model, inputs = make()
    expected = run_cpu(model, inputs)
    actual, report = run_delegate(model, inputs, max_delegated_partitions=2)
    assert report.cpu_nodes == 1 and report.partitions == 2, report
    _assert_equal_outputs(actual, expected)


def test_int32_add_stays_on_cpu_with_reason():
    model, inputs = _int_between_partitions()
    _, nodes = _delegate_nodes(model, inputs, max_delegated_partitions=2)
    add = [n for n in nodes if n["op"] == "ADD"]
    assert add[0]["where"] == "cpu"
    assert "has type INT32; only FLOAT32 runtime tensors are supported" in add[0]["reason"]


# -- versions above the limit -----------------------------------------------------

# (op, version the CPU runs, our limit, input kinds, output dtype)
ABOVE_LIMIT = [
    ("ABS", 3, 2, 1, np.float32),
    ("EQUAL", 3, 2, 2, np.bool_),
    ("FLOOR_DIV", 3, 2, 2, np.float32),
    ("SELECT", 2, 1, 3, np.float32),
    ("SELECT_V2", 2, 1, 3, np.float32),
]


@pytest.mark.parametrize("op,version,limit,arity,dtype", ABOVE_LIMIT, ids=[a[0] for a in ABOVE_LIMIT])
def test_version_above_limit_falls_back(op, version, limit, arity, dtype):
    """op at `version` -> MUL: the op runs on the CPU with upstream's reason,
    the MUL on the GPU, and the model's results stay right."""
    rng = np.random.default_rng(version)
    shape = [1, 3, 5, 3]
    mb = ModelBuilder()
    if arity == 3:
        ins = [mb.add_input(shape, np.bool_), mb.add_input(shape), mb.add_input(shape)]
        inputs = [rng.random(shape) < 0.5] + [rng.standard_normal(shape).astype(np.float32) for _ in range(2)]
    else:
        ins = [mb.add_input(shape) for _ in range(arity)]
        inputs = [rng.uniform(0.5, 3.0, shape).astype(np.float32) for _ in range(arity)]
    mid = mb.add_tensor(shape, dtype)
    mb.add_op(op, ins, [mid], version=version)
    if dtype == np.bool_:
        f = mb.add_tensor(shape)
        mb.add_op("CAST", [mid], [f])
        mid = f
    out = mb.add_tensor(shape)
    mb.add_op("MUL", [mid, ins[-1]], [out], dict(fused_activation="NONE"))
    mb.mark_output(out)
    model = mb.build()
    expected = run_cpu(model, inputs)
    actual, nodes = _delegate_nodes(model, inputs)
    node = next(n for n in nodes if n["op"] == op)
    assert node["where"] == "cpu"
    assert node["reason"] == f"Max version supported: {limit}. Requested version {version}."
    assert all(n["where"] == "gpu" for n in nodes if n["op"] in ("MUL", "CAST"))
    _assert_equal_outputs(actual, expected)


# -- FP16 storage ------------------------------------------------------------------

def _fp16_cases(per_op=3):
    """A few cases per op whose result FP16 storage does not change
    discontinuously: no floor/trunc of a rounded input, and comparisons only
    on values FP16 holds exactly (the "ties" data)."""
    taken, cases = {}, []
    for case in elementwise_cases():
        op = case.id.split("-")[0]
        if any(k in case.id for k in ("floor", "cast-float32-to-int32", "int-input", "math-chain",
                                          "mask-by-less")):
            continue
        if op.upper() in COMPARISONS and "ties_ties" not in case.id:
            continue
        if taken.get(op, 0) < per_op:
            taken[op] = taken.get(op, 0) + 1
            cases.append(pytest.param(case, id=case.id))
    return cases


@pytest.mark.parametrize("case", _fp16_cases())
def test_fp16_storage(case):
    """FP16 storage, FP32 math: relative L2 <= 1e-2 (half keeps ~3 decimal
    digits per stored value; the ops here amplify that at most ~10x), bool
    and int32 outputs exact."""
    model, reference, inputs = case.make()
    expected = run_cpu(reference, inputs)
    actual, report = run_delegate(model, inputs, is_precision_loss_allowed=1)
    assert report.cpu_nodes == 0
    for got, want in zip(actual, expected):
        if want.dtype == np.float32:
            assert_close(got, want, rtol_l2=1e-2, atol=1e-2 * max(1.0, float(np.abs(want).max())))
        else:
            assert np.array_equal(got, want)


# -- types the partition does not take -------------------------------------------

TYPE_REFUSALS = [
    ("CAST", np.int64, np.float32, "has type INT64; only FLOAT32 or INT32/BOOL runtime tensors are supported"),
    ("EQUAL", np.int32, np.bool_, "has type INT32; only FLOAT32 runtime tensors are supported"),
    ("NEG", np.int32, np.int32, "has type INT32; only FLOAT32 runtime tensors are supported"),
]


@pytest.mark.parametrize("op,in_type,out_type,why", TYPE_REFUSALS, ids=[t[0] for t in TYPE_REFUSALS])
def test_unsupported_types_stay_on_cpu(op, in_type, out_type, why):
    shape = [2, 3, 5]
    mb = ModelBuilder()
    ins = [mb.add_input(shape, in_type) for _ in range(2 if op == "EQUAL" else 1)]
    out = mb.add_tensor(shape, out_type)
    mb.add_op(op, ins, [out])
    mb.mark_output(out)
    model = mb.build()
    rng = np.random.default_rng(3)
    inputs = [rng.integers(-3, 4, shape).astype(in_type) for _ in ins]
    expected = run_cpu(model, inputs)
    actual, nodes = _delegate_nodes(model, inputs)
    assert nodes[0]["where"] == "cpu" and why in nodes[0]["reason"], nodes[0]
    _assert_equal_outputs(actual, expected)
