"""A 1x1 CONV_2D whose output only a DEPTHWISE_CONV_2D reads, computed
inside that depthwise (fuse_pw_dw.c, depthwise_gpu.cl's pw_depthwise_gpu): the
expansion of an inverted-residual block, one launch instead of two with the
GPU kernel set. Every case runs with the pass on and off
(policy fuse_pw_dw=0) against the CPU interpreter on seeded random
data (tests/fusion_hooks.py, whose tolerance holds: the same products
summed in another order, and in FP16 one rounding fewer, of the expanded
tensor). The depthwise + 1x1 pass is held off (policy fuse_dw_1x1=0)
so that these small blocks' depthwise is left for this one, as the wide
blocks of the hand and pose models are."""
import numpy as np
import pytest

from fusion_hooks import launches_saved
from tflite_gpu.model_builder import ModelBuilder
from conftest import set_policy

HOOK = "policy:fuse_pw_dw"
KEEP_OFF = ("policy:fuse_dw_1x1", "TFLITE_GPU_BHWC_INPUT")


def _out_size(n, k, stride, dil, padding):
    eff = (k - 1) * dil + 1
    return (n + stride - 1) // stride if padding == "SAME" else (n - eff) // stride + 1


def _block(b=1, h=11, w=9, cin=5, cmid=17, k=3, stride=1, dil=1, padding="SAME", pw_act="RELU6",
           dw_act="RELU6", residual=False, mean=None, seed=0):
    """x -> CONV_2D 1x1 to cmid (pw_act) -> DEPTHWISE k (stride, dil,
    dw_act) [-> ADD a second input (residual)] [-> MEAN over H, W with
    keep_dims = mean]. Returns (model, inputs)."""
    rng = np.random.default_rng(seed)
    mb = ModelBuilder()

    def const(shape, scale=1.0):
        return mb.add_tensor(shape, data=(rng.standard_normal(shape) * scale).astype(np.float32))

    x = mb.add_input([b, h, w, cin])
    e = mb.add_tensor([b, h, w, cmid])
    mb.add_op("CONV_2D", [x, const([cmid, 1, 1, cin], 1 / np.sqrt(cin)), const([cmid])], [e],
              dict(padding="VALID", stride_w=1, stride_h=1, fused_activation=pw_act))
    oh, ow = _out_size(h, k, stride, dil, padding), _out_size(w, k, stride, dil, padding)
    y = mb.add_tensor([b, oh, ow, cmid])
    mb.add_op("DEPTHWISE_CONV_2D", [e, const([1, k, k, cmid], 1 / k), const([cmid])], [y],
              dict(padding=padding, stride_w=stride, stride_h=stride, depth_multiplier=1, dilation_w=dil,
                   dilation_h=dil, fused_activation=dw_act))
    inputs = [rng.standard_normal([b, h, w, cin]).astype(np.float32)]
    if residual:
        r = mb.add_input([b, oh, ow, cmid])
        inputs.append(rng.standard_normal([b, oh, ow, cmid]).astype(np.float32))
        out = mb.add_tensor([b, oh, ow, cmid])
        mb.add_op("ADD", [y, r], [out])
        y = out
    if mean is not None:
        axes = mb.add_tensor([2], dtype=np.int32, data=np.array([1, 2], np.int32))
        out = mb.add_tensor([b, 1, 1, cmid] if mean else [b, cmid])
        mb.add_op("MEAN", [y, axes], [out], dict(keep_dims=mean))
        y = out
    mb.mark_output(y)
    return mb.build(), inputs


def _saved(monkeypatch, model, inputs, fp16=False, **policy):
    if policy:
        set_policy(monkeypatch, **policy)
    return launches_saved(monkeypatch, HOOK, model, inputs, fp16=fp16, keep_off=KEEP_OFF, kernel_set="gpu")


@pytest.mark.parametrize("cin,cmid", [(1, 1), (3, 5), (5, 17), (17, 40)])
@pytest.mark.parametrize("k,stride,dil,padding", [
    (3, 1, 1, "SAME"), (3, 2, 1, "SAME"), (5, 1, 1, "SAME"), (5, 2, 1, "VALID"), (3, 1, 2, "SAME"),
])
def test_pair_is_one_launch(monkeypatch, cin, cmid, k, stride, dil, padding):
    model, inputs = _block(cin=cin, cmid=cmid, k=k, stride=stride, dil=dil, padding=padding,
                           seed=cin * 100 + cmid + k)
    assert _saved(monkeypatch, model, inputs) == 1


@pytest.mark.parametrize("fp16", [False, True], ids=["fp32", "fp16"])
@pytest.mark.parametrize("pw_act,dw_act,residual", [("NONE", "NONE", False), ("RELU", "NONE", True),
                                                     ("RELU6", "RELU", True)])
def test_activations_and_residual(monkeypatch, pw_act, dw_act, residual, fp16):
    """Both activations, and an ADD fused into the depthwise (batch 2, a
    partial last slice)."""
    model, inputs = _block(b=2, h=7, w=13, cin=6, cmid=21, k=5, pw_act=pw_act, dw_act=dw_act, residual=residual,
                           seed=3 + fp16)
    assert _saved(monkeypatch, model, inputs, fp16=fp16) == 1


@pytest.mark.parametrize("h,w,stride", [(40, 37, 1), (61, 50, 2), (23, 300, 1)])
def test_bands(monkeypatch, h, w, stride):
    """Tensors whose source rows do not all fit PWDW_LOCAL (1,024 float4s)
    split into bands of output rows whose edge rows both neighbours
    compute: 37 wide takes 27 source rows a band, 300 wide 3."""
    model, inputs = _block(h=h, w=w, cin=3, cmid=6, k=3, stride=stride, seed=h + w)
    assert _saved(monkeypatch, model, inputs) == 1


def test_too_wide_a_row_stays_two_launches(monkeypatch):
    """A 5x5 depthwise over rows of 300 pixels: five source rows are 1,500
    float4s, more than one band holds, so the pair stays apart."""
    model, inputs = _block(h=6, w=300, cin=3, cmid=4, k=5, seed=9)
    assert _saved(monkeypatch, model, inputs) == 0


def test_the_bound_keeps_pairs_apart(monkeypatch):
    """The policy's pw_dw_max_loads stands for the bound on a work-item's 1x1
    loads: below this pair's (2 values x 5 source slices) it stays two."""
    model, inputs = _block(h=11, w=9, cin=17, cmid=8, seed=10)
    assert _saved(monkeypatch, model, inputs, pw_dw_max_loads="9") == 0
    assert _saved(monkeypatch, model, inputs, pw_dw_max_loads="10") == 1


@pytest.mark.parametrize("keep_dims", [False, True])
@pytest.mark.parametrize("fp16", [False, True], ids=["fp32", "fp16"])
def test_mean_goes_too(monkeypatch, keep_dims, fp16):
    """A MEAN over H and W after the depthwise at batch 1 (hand_landmark's
    last block, 7x7x1,152 then its heads): the group averages its slice,
    two launches fewer."""
    model, inputs = _block(h=7, w=7, cin=24, cmid=37, k=3, mean=keep_dims, seed=11 + fp16)
    assert _saved(monkeypatch, model, inputs, fp16=fp16) == 2


@pytest.mark.parametrize("b,h,w,residual", [(2, 7, 7, False), (1, 40, 37, False), (1, 7, 7, True)])
def test_mean_stays_where_a_group_lacks_the_plane(monkeypatch, b, h, w, residual):
    """Not at batch 2 (the output's rows would be its batch), not across
    bands, not after a residual ADD: only the 1x1 goes."""
    model, inputs = _block(b=b, h=h, w=w, cin=5, cmid=9, k=3, residual=residual, mean=False, seed=b + h)
    assert _saved(monkeypatch, model, inputs) == 1


def test_cpu_set_keeps_both(monkeypatch):
    """The CPU kernel set has no fused kernel: the hook changes nothing."""
    model, inputs = _block(seed=12)
    assert launches_saved(monkeypatch, HOOK, model, inputs, kernel_set="cpu") == 0


def test_small_groups_device(monkeypatch):
    """On a 132-unit device (the test hook, here on PoCL) the fused launch
    keeps its group; the rest shrink theirs around it."""
    model, inputs = _block(h=14, w=14, cin=24, cmid=144, k=5, seed=13)
    monkeypatch.setenv("TFLITE_GPU_COMPUTE_UNITS", "132")
    assert _saved(monkeypatch, model, inputs) == 1


@pytest.mark.parametrize("case", ["k3s2-3x5", "k5-residual-b2-fp16", "bands-40x37", "mean"])
def test_pair_is_one_phase_in_the_vm_on_a_gpu(monkeypatch, case):
    """The VM on a GPU (policy vm_fine=1) runs pw_depthwise_gpu as a
    group body (test_vm_group_bodies.py, groups of 64 sharing the band in
    __local memory): the pair one phase (and the MEAN after it, a second)."""
    set_policy(monkeypatch, vm_fine="1")
    kw, fp16, saved = {
        "k3s2-3x5": (dict(cin=3, cmid=5, k=3, stride=2, seed=21), False, 1),
        "k5-residual-b2-fp16": (dict(b=2, h=7, w=13, cin=6, cmid=21, k=5, residual=True, seed=22), True, 1),
        "bands-40x37": (dict(h=40, w=37, cin=3, cmid=6, k=3, seed=23), False, 1),
        "mean": (dict(h=7, w=7, cin=24, cmid=37, k=3, mean=False, seed=24), False, 2),
    }[case]
    model, inputs = _block(**kw)
    assert launches_saved(monkeypatch, HOOK, model, inputs, fp16=fp16, keep_off=KEEP_OFF,
                          execution="persistent") == saved
