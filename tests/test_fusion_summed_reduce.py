"""A reduction that reads its source through the ADD that makes it
(fuse_summed_reduce.c): selfie_segmentation's decoder blocks add a skip
tensor to an upsampled conv's output and read the sum only in a global
average pool. The pool adds the two where it loads them (reduce.cl reduce,
reduce_gpu.cl reduce_gpu / reduce_gpu_part: `summed`), so the ADD is never
launched. Every kernel set and execution mode; with the VM's group bodies
and a 132-unit grid also the reduction split over chunks of its window.

Every case runs with the fusion on and off (TFLITE_GPU_FUSE_SUMMED_REDUCE=0)
against the CPU interpreter on seeded random data: fused, exactly the ADD's
launch goes; where the pattern does not hold, nothing changes.

Tolerance: fusion_hooks.py's (FP32 1e-4 of the output's scale: the same
sums in another order; FP16 1e-2: the fused sum is not rounded to half
before the reduction, the unfused one is)."""
import numpy as np
import pytest

import tflite_gpu
from fusion_hooks import ALL_MODE_IDS, ALL_MODES, launches_saved, mode_options
from tflite_gpu import _capi, interpreters
from tflite_gpu.model_builder import ModelBuilder
from conftest import set_policy

HOOK = "TFLITE_GPU_FUSE_SUMMED_REDUCE"


def _add_reduce(shape, op="MEAN", axes=(1, 2), pool=False, add_act="NONE", sum_is_output=False, seed=0):
    """x, r -> ADD(x, r) -> op over axes (or a global AVERAGE_POOL_2D with
    RELU, pool=True) -> output; sum_is_output: the sum is an output too (a
    second reader). (An ADD after a conv read by nothing else would be the
    conv's epilogue, the epilogues pass.)"""
    rng = np.random.default_rng(seed)
    b, h, w, c = shape
    mb = ModelBuilder()
    x, r = mb.add_input(shape), mb.add_input(shape)
    s = mb.add_tensor(shape)
    mb.add_op("ADD", [x, r], [s], dict(fused_activation=add_act))
    if pool:
        out = mb.add_tensor([b, 1, 1, c])
        mb.add_op("AVERAGE_POOL_2D", [s], [out], dict(padding="VALID", stride_w=w, stride_h=h, filter_w=w,
                                                        filter_h=h, fused_activation="RELU"))
    else:
        out_shape = [1 if i in axes else n for i, n in enumerate(shape)]
        out = mb.add_tensor(out_shape)
        mb.add_op(op, [s, mb.add_tensor([len(axes)], np.int32, data=np.array(axes, np.int32))], [out],
                  dict(keep_dims=True))
    mb.mark_output(out)
    if sum_is_output:
        mb.mark_output(s)
    inputs = [rng.standard_normal(shape).astype(np.float32) for _ in range(2)]
    return mb.build(), inputs


CASES = {
    "mean-hw": dict(shape=[2, 9, 7, 17]),
    "max-c": dict(shape=[1, 5, 6, 17], op="REDUCE_MAX", axes=(3,)),
    "global-pool": dict(shape=[1, 13, 11, 3], pool=True),
}


@pytest.mark.parametrize("mode,fp16", ALL_MODES, ids=ALL_MODE_IDS)
@pytest.mark.parametrize("case", list(CASES))
def test_the_reduction_adds_the_sum_itself(monkeypatch, case, mode, fp16):
    model, inputs = _add_reduce(**CASES[case])
    assert launches_saved(monkeypatch, HOOK, model, inputs, fp16=fp16, **mode_options(monkeypatch, mode)) == 1


@pytest.mark.parametrize("units,kernel", [(None, "reduce_gpu"), ("132", "reduce_gpu_part")], ids=["one-phase", "split"])
def test_with_the_group_bodies(monkeypatch, units, kernel):
    """The VM's group bodies (a GPU's): reduce_gpu, and with a 132-unit grid
    reduce_gpu_part over chunks of a 2,115-float4 window, read the sum."""
    set_policy(monkeypatch, vm_fine="1")
    if units:
        monkeypatch.setenv("TFLITE_GPU_COMPUTE_UNITS", units)
    model, inputs = _add_reduce([1, 45, 47, 5])
    assert launches_saved(monkeypatch, HOOK, model, inputs, execution="persistent") == 1
    monkeypatch.setenv(HOOK, "1")
    d = tflite_gpu.load_delegate(log_level="silent", execution="persistent")
    it = interpreters.make(model, delegate=d)
    kernels = [k for g in _capi.delegate_groups(d._get_native_delegate_pointer()) for k in g["kernels"]]
    del it
    assert kernel in kernels and "binary_op_rows" not in kernels, kernels


@pytest.mark.parametrize("why", ["sum_is_output", "add_act"])
def test_a_sum_read_elsewhere_or_activated_stays(monkeypatch, why):
    model, inputs = _add_reduce([2, 9, 7, 17], **({why: True} if why == "sum_is_output" else {why: "RELU"}))
    assert launches_saved(monkeypatch, HOOK, model, inputs, kernel_set="gpu") == 0
