"""Layout ops inside larger graphs, against the CPU interpreter: multi-output
nodes (SPLIT, UNPACK) feeding other delegated nodes, int32 indices crossing
the partition boundary (GATHER, ONE_HOT), FP16 storage, and versions above
the limit falling back to the CPU with their reason."""
import numpy as np
import pytest

import tflite_gpu
from conftest import assert_close, run_cpu
from op_cases import (gather_cases, mirror_pad_cases, one_hot_cases, pack_cases, split_cases, tile_cases,
                      transpose_cases, unpack_cases)
from tflite_gpu import _capi, interpreters
from tflite_gpu.model_builder import ModelBuilder


def _run_delegate(model, inputs, **options):
    options.setdefault("log_level", "silent")
    d = tflite_gpu.load_delegate(**options)
    it = interpreters.make(model, delegate=d)
    ptr = d._get_native_delegate_pointer()
    stats, nodes = _capi.delegate_stats(ptr), _capi.delegate_nodes(ptr)
    return interpreters.run(it, inputs), stats, nodes


def _check(model, inputs, cpu_nodes=0, rtol=1e-4, **options):
    expected = run_cpu(model, inputs)
    actual, stats, nodes = _run_delegate(model, inputs, **options)
    assert stats["cpu_nodes"] == cpu_nodes, nodes
    for got, want in zip(actual, expected):
        assert_close(got, want, rtol_l2=rtol, atol=rtol * max(1.0, float(np.abs(want).max())))
    return stats, nodes


def _i32(mb, values):
    values = np.asarray(values, np.int32)
    return mb.add_tensor(values.shape, np.int32, data=values)


def test_split_outputs_feed_other_nodes():
    """SPLIT's pieces are read by an ADD inside the partition and one is a
    graph output: one partition, nothing on the CPU."""
    rng = np.random.default_rng(1)
    mb = ModelBuilder()
    x = mb.add_input([2, 7, 9, 6])
    pieces = [mb.add_tensor([2, 7, 9, 2]) for _ in range(3)]
    mb.add_op("SPLIT", [_i32(mb, 3), x], pieces, dict(num_splits=3))
    y = mb.add_tensor([2, 7, 9, 2])
    mb.add_op("ADD", [pieces[0], pieces[2]], [y])
    mb.mark_output(y)
    mb.mark_output(pieces[1])
    stats, _ = _check(mb.build(), [rng.standard_normal([2, 7, 9, 6], dtype=np.float32)])
    assert stats["partitions"] == 1


def test_unpack_then_concat():
    rng = np.random.default_rng(2)
    mb = ModelBuilder()
    x = mb.add_input([3, 5, 17])
    parts = [mb.add_tensor([5, 17]) for _ in range(3)]
    mb.add_op("UNPACK", [x], parts, dict(num=3, axis=0))
    y = mb.add_tensor([5, 51])
    mb.add_op("CONCATENATION", [parts[2], parts[0], parts[1]], [y], dict(axis=1))
    mb.mark_output(y)
    stats, _ = _check(mb.build(), [rng.standard_normal([3, 5, 17], dtype=np.float32)])
    assert stats["partitions"] == 1


def test_gather_indices_from_a_cpu_node():
    """CAST (float -> int32) stays on the CPU; its int32 output enters the
    GATHER's partition raw."""
    rng = np.random.default_rng(3)
    mb = ModelBuilder()
    params = mb.add_input([6, 17])
    f = mb.add_input([4, 3])
    idx = mb.add_tensor([4, 3], np.int32)
    mb.add_op("CAST", [f], [idx])
    y = mb.add_tensor([4, 3, 17])
    mb.add_op("GATHER", [params, idx], [y], dict(axis=0))
    z = mb.add_tensor([4, 3, 17])
    mb.add_op("RELU", [y], [z])
    mb.mark_output(z)
    inputs = [rng.standard_normal([6, 17], dtype=np.float32), rng.integers(0, 6, [4, 3]).astype(np.float32)]
    _, nodes = _check(mb.build(), inputs, cpu_nodes=1)
    assert [n["where"] for n in nodes if n["op"] == "GATHER"] == ["gpu"], nodes


def test_shared_runtime_indices_and_one_hot():
    """One int32 graph input read by two GATHERs and a ONE_HOT, mixed with
    float ops in one partition."""
    rng = np.random.default_rng(4)
    mb = ModelBuilder()
    a = mb.add_input([9, 5])
    b = mb.add_input([9, 5])
    idx = mb.add_input([5], np.int32)
    ga, gb = mb.add_tensor([5, 5]), mb.add_tensor([5, 5])
    mb.add_op("GATHER", [a, idx], [ga], dict(axis=0))
    mb.add_op("GATHER", [b, idx], [gb], dict(axis=0))
    s = mb.add_tensor([5, 5])
    mb.add_op("ADD", [ga, gb], [s])
    oh = mb.add_tensor([5, 9])
    mb.add_op("ONE_HOT", [idx, _i32(mb, 9), mb.add_tensor([], data=np.float32(1)),
                          mb.add_tensor([], data=np.float32(0))], [oh], dict(axis=-1))
    y = mb.add_tensor([5, 5])
    mb.add_op("FULLY_CONNECTED", [oh, mb.add_tensor([5, 9], data=rng.standard_normal([5, 9]).astype(np.float32)),
                                  -1], [y])
    z = mb.add_tensor([5, 5])
    mb.add_op("MUL", [s, y], [z])
    mb.mark_output(z)
    inputs = [rng.standard_normal([9, 5], dtype=np.float32), rng.standard_normal([9, 5], dtype=np.float32),
              np.array([8, 0, 3, 3, 5], np.int32)]
    stats, _ = _check(mb.build(), inputs)
    assert stats["partitions"] == 1


# FP16 storage rounds every stored value once (relative 2^-11): pure data
# movement stays within 1e-3 of the FP32 CPU result.
FP16_CASES = [c for group in (transpose_cases()[:4], split_cases()[:2], pack_cases()[:2], unpack_cases()[:2],
                              tile_cases()[:2], mirror_pad_cases()[:2], gather_cases()[:4], one_hot_cases()[:2])
              for c in group]


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in FP16_CASES])
def test_fp16_storage(case):
    model, reference, inputs = case.make()
    expected = run_cpu(reference, inputs)
    actual, stats, nodes = _run_delegate(model, inputs, is_precision_loss_allowed=1)
    assert stats["cpu_nodes"] == 0, nodes
    for got, want in zip(actual, expected):
        assert_close(got, want, rtol_l2=1e-3, atol=1e-3 * max(1.0, float(np.abs(want).max())))


# SPLIT, SPLIT_V, PACK, UNPACK and TILE take every version the 2.14 runtime
# has, so only ops with a lower limit are here.
@pytest.mark.parametrize("op,version,limit", [("TRANSPOSE", 5, 4), ("SLICE", 3, 2), ("RESIZE_NEAREST_NEIGHBOR", 4, 3),
                                              ("MIRROR_PAD", 3, 2), ("GATHER", 2, 1)])
def test_version_above_limit_stays_on_cpu(op, version, limit):
    rng = np.random.default_rng(5)
    mb = ModelBuilder()
    x = mb.add_input([1, 4, 6, 3])
    out_shape, extra, options = [1, 4, 6, 3], [], None
    if op == "TRANSPOSE":
        extra, out_shape = [_i32(mb, [0, 2, 1, 3])], [1, 6, 4, 3]
    elif op == "SLICE":
        extra, out_shape = [_i32(mb, [0, 1, 1, 0]), _i32(mb, [1, 2, 3, 3])], [1, 2, 3, 3]
    elif op == "RESIZE_NEAREST_NEIGHBOR":
        extra, out_shape, options = [_i32(mb, [8, 5])], [1, 8, 5, 3], dict(align_corners=True)
    elif op == "MIRROR_PAD":
        extra, out_shape = [_i32(mb, [[0, 0], [1, 1], [2, 0], [0, 0]])], [1, 6, 8, 3]
    elif op == "GATHER":
        extra, out_shape, options = [_i32(mb, [5, 0])], [1, 4, 2, 3], dict(axis=2)
    y = mb.add_tensor(out_shape)
    mb.add_op(op, [x] + extra, [y], options, version)
    mb.mark_output(y)
    _, nodes = _check(mb.build(), [rng.standard_normal([1, 4, 6, 3], dtype=np.float32)], cpu_nodes=1)
    assert nodes[0]["reason"] == f"Max version supported: {limit}. Requested version {version}.", nodes


def test_unsupported_parameters_stay_on_cpu_with_reason():
    """GATHER with batch_dims 1 (which the CPU runs) is left to the CPU with
    a reason naming the parameter; the model stays correct."""
    rng = np.random.default_rng(6)
    mb = ModelBuilder()
    params = mb.add_input([2, 5, 3])
    idx = _i32(mb, [[4, 0, 1, 1], [2, 3, 0, 4]])
    y = mb.add_tensor([2, 4, 3])
    mb.add_op("GATHER", [params, idx], [y], dict(axis=1, batch_dims=1))
    mb.mark_output(y)
    _, nodes = _check(mb.build(), [rng.standard_normal([2, 5, 3], dtype=np.float32)], cpu_nodes=1)
    assert nodes[0]["reason"] == "batch_dims 1 is not supported (only 0)", nodes


def test_pack_with_a_constant_input():
    rng = np.random.default_rng(7)
    mb = ModelBuilder()
    x = mb.add_input([3, 5, 17])
    c = mb.add_tensor([3, 5, 17], data=rng.standard_normal([3, 5, 17]).astype(np.float32))
    y = mb.add_tensor([3, 2, 5, 17])
    mb.add_op("PACK", [c, x], [y], dict(values_count=2, axis=1))
    mb.mark_output(y)
    _check(mb.build(), [rng.standard_normal([3, 5, 17], dtype=np.float32)])
