"""The VM's group bodies (issue 36 item 5): on a GPU (policy vm_fine=1
here, PoCL standing in for one), a long reduction runs the GPU set's
work-group kernel (fc_gpu.cl, reduce_gpu.cl: GROUP_KERNEL in common.cl) as
one phase: each physical group of the VM runs virtual groups of 64 one
after another, its work-items splitting the reduction and adding their
partials in __local memory (vm/vm_run.cl). Where the fine bodies give a
work-item the whole reduction, or split it in two phases with a grid
barrier between (policy vm_group_bodies=0 keeps them). With
policy vm_tiles=1 the GPU set's tiled convs and depthwise run so too.

Tolerances: against the CPU interpreter, FP32 1e-5 of the output's scale
(the same products summed in another order: a tree of 64 partials); FP16
storage 1e-2, check's. Stepped against persistent, none: the same program,
op list and bodies, the tree's order fixed, so the same bits."""
import numpy as np
import pytest

import tflite_gpu
from conftest import assert_close, run_cpu, set_policy
from op_cases.conv import _fc_case
from op_cases.math_ops import _bmm_case, _reduce_case, _softmax_case
from tflite_gpu import _capi, interpreters

# (case, the group kernel it must run)
CASES = [
    (_fc_case([1, 1152], 63), "fully_connected_gpu"),        # hand_landmark's heads: 288 slices
    (_fc_case([3, 517], 17, act="RELU"), "fully_connected_gpu"),  # 3 rows, a partial last slice
    (_fc_case([1, 601], 1, act="RELU6"), "fully_connected_gpu"),  # one output float4: one group
    (_reduce_case([2, 13, 11, 5], [1, 2], True), "reduce_gpu"),   # a global pool's 143 taps, batch 2
    (_reduce_case([1, 3, 4, 300], [3], False, "REDUCE_MAX"), "reduce_gpu"),  # over 75 channel slices
    (_softmax_case([2, 3, 150], beta=0.7), "softmax_gpu"),       # rows of 38 slices
    (_bmm_case([2, 5, 133], [2, 133, 7]), "batch_matmul_gpu"),   # depth 133
    (_bmm_case([2, 133, 5], [2, 7, 133], adj_x=True, adj_y=True), "batch_matmul_gpu"),
]


def _run(model, inputs, execution, invokes=2, **options):
    """(outputs of each invoke, kernels, run record, stats) through a fresh delegate."""
    d = tflite_gpu.load_delegate(log_level="silent", execution=execution, **options)
    it = interpreters.make(model, delegate=d)
    outs = [interpreters.run(it, inputs) for _ in range(invokes)]
    ptr = d._get_native_delegate_pointer()
    kernels = [k for g in _capi.delegate_groups(ptr) for k in g["kernels"]]
    runs, stats = _capi.delegate_runs(ptr), _capi.delegate_stats(ptr)
    del it
    return outs, kernels, runs[0], stats


@pytest.fixture
def gpu_bodies(monkeypatch):
    set_policy(monkeypatch, vm_fine="1")
    return monkeypatch


@pytest.mark.parametrize("fp16", [False, True], ids=["fp32", "fp16"])
@pytest.mark.parametrize("case,kernel", CASES, ids=[c.id for c, _ in CASES])
def test_a_long_reduction_is_one_group_phase(gpu_bodies, case, kernel, fp16):
    model, reference, inputs = case.make()
    want = run_cpu(reference, inputs)
    tol = 1e-2 if fp16 else 1e-5
    first = None
    for execution in ("stepped", "persistent"):
        outs, kernels, run, stats = _run(model, inputs, execution, is_precision_loss_allowed=int(fp16))
        assert run["execution"] == execution and run["fallback"] == "", run
        assert stats["cpu_nodes"] == 0 and kernel in kernels, (kernels, stats)
        # Every dispatch a phase: a persistent invoke is one launch.
        assert run["launches"] == (1 if execution == "persistent" else stats["dispatches"]), (run, stats)
        first = first if first is not None else outs[0]
        for got in outs:
            for a, b in zip(got, first):
                np.testing.assert_array_equal(a, b)
        for a, b in zip(outs[0], want):
            assert_close(a, b, rtol_l2=tol, atol=tol * max(1.0, float(np.abs(b).max())))


def test_without_group_bodies_the_fine_ones_run(gpu_bodies):
    """The policy's vm_group_bodies=0: the fine bodies (here the FC split
    over K in two phases), one launch."""
    set_policy(gpu_bodies, vm_group_bodies=0)
    model, reference, inputs = CASES[0][0].make()
    want = run_cpu(reference, inputs)
    outs, kernels, run, _ = _run(model, inputs, "persistent")
    assert run["launches"] == 1 and run["fallback"] == "", run
    assert kernels == ["fully_connected_split", "fully_connected_sum"], kernels
    for a, b in zip(outs[0], want):
        assert_close(a, b, rtol_l2=1e-5, atol=1e-5 * max(1.0, float(np.abs(b).max())))


def _side_by_side():
    """x [1, 300] -> three FULLY_CONNECTED of 1, 9 and 5 units (1, 3 and 2
    groups) and a MEAN over its channels (1 group), every one an output:
    one level of a persistent launch, each phase starting on the group
    where the one before it ended."""
    from tflite_gpu.model_builder import ModelBuilder

    rng = np.random.default_rng(11)
    mb = ModelBuilder()
    x = mb.add_input([1, 300])
    for n in (1, 9, 5):
        w = mb.add_tensor([n, 300], data=(rng.standard_normal([n, 300]) / 17).astype(np.float32))
        b = mb.add_tensor([n], data=rng.standard_normal([n]).astype(np.float32))
        y = mb.add_tensor([1, n])
        mb.add_op("FULLY_CONNECTED", [x, w, b], [y], dict(fused_activation="NONE"))
        mb.mark_output(y)
    axes = mb.add_tensor([1], np.int32, data=np.array([1], np.int32))
    m = mb.add_tensor([1, 1])
    mb.add_op("MEAN", [x, axes], [m], dict(keep_dims=True))
    mb.mark_output(m)
    return mb.build(), [rng.standard_normal([1, 300]).astype(np.float32)]


@pytest.mark.parametrize("groups", [None, "1"], ids=["grid", "one-group"])
def test_group_phases_side_by_side(gpu_bodies, groups):
    """Group phases of one level start where the one before ended (vm.c's
    first lane, in groups), wrapping round the grid; with a grid of one
    group (TFLITE_GPU_VM_GROUPS=1) it runs every virtual group of every
    phase in turn. The heads pass held off: four phases, not one."""
    gpu_bodies.setenv("TFLITE_GPU_FUSE_FC_HEADS", "0")
    if groups:
        gpu_bodies.setenv("TFLITE_GPU_VM_GROUPS", groups)
    model, inputs = _side_by_side()
    want = run_cpu(model, inputs)
    got = {}
    for execution in ("stepped", "persistent"):
        outs, kernels, run, _ = _run(model, inputs, execution)
        assert run["execution"] == execution and run["fallback"] == "", run
        assert sorted(kernels) == ["fully_connected_gpu"] * 3 + ["reduce_gpu"], kernels
        got[execution] = outs[-1]
    for a, b in zip(got["persistent"], got["stepped"]):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(got["persistent"], want):
        assert_close(a, b, rtol_l2=1e-5, atol=1e-5 * max(1.0, float(np.abs(b).max())))


# A few outputs with long windows (select_reduce_chunks): split over chunks
# of each window in two group phases when the grid has 132 groups
# (TFLITE_GPU_COMPUTE_UNITS stands for the units; the real grid stays
# PoCL's). (case, chunks, output float4s)
SPLIT_CASES = [
    (_reduce_case([1, 67, 61, 17], [1, 2], True), 15, 5),       # a global pool: 4,087 taps, 5 slices
    (_reduce_case([2, 30, 41, 7], [1, 2, 3], False, "REDUCE_MAX"), 9, 2),  # with the channels' tail lanes
    (_reduce_case([1, 45, 47, 3], [1, 2], True, "SUM"), 8, 1),  # one output float4
]


@pytest.mark.parametrize("fp16", [False, True], ids=["fp32", "fp16"])
@pytest.mark.parametrize("case,chunks,outs", SPLIT_CASES, ids=[c.id for c, _, _ in SPLIT_CASES])
def test_a_long_window_of_few_outputs_is_split_over_the_grid(gpu_bodies, case, chunks, outs, fp16):
    gpu_bodies.setenv("TFLITE_GPU_COMPUTE_UNITS", "132")
    model, reference, inputs = case.make()
    want = run_cpu(reference, inputs)
    tol = 1e-2 if fp16 else 1e-5
    got = {}
    for execution in ("stepped", "persistent"):
        d = tflite_gpu.load_delegate(log_level="silent", execution=execution, is_precision_loss_allowed=int(fp16))
        it = interpreters.make(model, delegate=d)
        results = [interpreters.run(it, inputs) for _ in range(2)]
        ptr = d._get_native_delegate_pointer()
        phases = [(p["kernel"], p["work_items"]) for p in _capi.delegate_phases(ptr) if p["node"] >= 0]
        run = _capi.delegate_runs(ptr)[0]
        del it
        assert run["execution"] == execution and run["fallback"] == "", run
        # Work-items: 64 a group; the sum takes every chunk of an output in one group.
        assert phases == [("reduce_gpu_part", 64 * chunks * outs), ("reduce_gpu_sum", 64 * outs)], phases
        for a, b in zip(results[1], results[0]):
            np.testing.assert_array_equal(a, b)  # the partials' order is fixed
        got[execution] = results[0]
    for a, b in zip(got["persistent"], got["stepped"]):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(got["persistent"], want):
        assert_close(a, b, rtol_l2=tol, atol=tol * max(1.0, float(np.abs(b).max())))


def _tile_cases():
    """(id, model, inputs, the group kernel it must run). Output blocks of
    2 slices: each conv below has 3 or more (17+ channels)."""
    from op_cases.conv import _conv_case
    from test_fusion_conv_source import _se_block, _up_block
    from test_fusion_dw_conv import _block

    def case(c):
        model, reference, inputs = c.make()
        return model, inputs

    return [
        ("1x1-batch2", *case(_conv_case(2, 7, 9, 40, 33, 1, 1, 1, "VALID", 1, "RELU")), "conv2d_1x1_gpu"),
        ("3x3-s2-batch2", *case(_conv_case(2, 13, 11, 33, 40, 3, 3, 2, "SAME", 1, "NONE")), "conv2d_gpu"),
        ("5x5-s2-3ch", *case(_conv_case(1, 9, 10, 3, 24, 5, 5, 2, "SAME", 1, "RELU6")), "conv2d_gpu"),
        ("dw-3x3-batch2", *case(_conv_case(2, 6, 37, 17, 0, 3, 3, 1, "SAME", 1, "RELU", depthwise=True)),
         "depthwise_gpu"),
        ("dw-then-1x1", *_block(cin=17, cout=40, tail=("prelu",), seed=3), "dw_conv2d_1x1_gpu"),
        ("scaled-add", *_se_block(1, 11, 13, 40, 24, seed=4, addend="after"), "conv2d_1x1_scaled_add_gpu"),
        ("upsampled-batch2", *_up_block(2, 8, 4, 5, 17, half_pixel=True, seed=5), "conv2d_1x1_up2_gpu"),
    ]


TILE_CASES = _tile_cases()
# Every case in FP32; FP16 (the same bodies' half loads and stores) on one
# (each case is a VM program of its own: 4-6 s of cold PoCL compile).
TILE_RUNS = [(*c, False) for c in TILE_CASES] + [(*c, True) for c in TILE_CASES if c[0] == "dw-then-1x1"]


@pytest.mark.parametrize("name,model,inputs,kernel,fp16", TILE_RUNS,
                         ids=[f"{r[0]}-{'fp16' if r[-1] else 'fp32'}" for r in TILE_RUNS])
def test_vm_tiles_run_the_gpu_sets_convs(gpu_bodies, name, model, inputs, kernel, fp16):
    """policy vm_tiles=1: conv_gpu.cl's and depthwise_gpu.cl's kernels
    (tiles shared in __local memory) as group bodies at their default 16 x 4
    and 8 x 8 groups, stepped and persistent, one launch."""
    set_policy(gpu_bodies, vm_tiles="1")
    want = run_cpu(model, inputs)
    tol = 1e-2 if fp16 else 1e-5
    got = {}
    for execution in ("stepped", "persistent"):
        outs, kernels, run, stats = _run(model, inputs, execution, is_precision_loss_allowed=int(fp16))
        assert run["execution"] == execution and run["fallback"] == "", run
        assert stats["cpu_nodes"] == 0 and kernel in kernels, (kernels, stats)
        assert run["launches"] == (1 if execution == "persistent" else stats["dispatches"]), (run, stats)
        got[execution] = outs[0]
    for a, b in zip(got["persistent"], got["stepped"]):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(got["persistent"], want):
        assert_close(a, b, rtol_l2=tol, atol=tol * max(1.0, float(np.abs(b).max())))


def test_vm_tiles_keep_fine_bodies_where_a_tile_would_idle(gpu_bodies):
    """Outputs of at most two blocks (16 channels) keep conv2d_x4, and the
    switch off keeps the fine bodies everywhere."""
    from op_cases.conv import _conv_case

    model, _, inputs = _conv_case(1, 7, 9, 5, 16, 3, 3, 1, "SAME", 1, "NONE").make()
    set_policy(gpu_bodies, vm_tiles="1")
    _, kernels, run, _ = _run(model, inputs, "persistent", invokes=1)
    assert kernels == ["conv2d_x4"] and run["launches"] == 1, (kernels, run)
    model, inputs = TILE_CASES[0][1:3]
    set_policy(gpu_bodies, vm_tiles="0")
    _, kernels, run, _ = _run(model, inputs, "persistent", invokes=1)
    assert kernels == ["conv2d_x4"] and run["launches"] == 1, (kernels, run)
