"""A depthwise convolution fused into the 1x1 convolution that alone reads
it (fuse_dw_conv.c, conv_gpu.cl's dw_conv2d_1x1_gpu): with the GPU kernel
set the pair is one launch and gives the CPU interpreter's results; the
CPU kernel set, and every pair the rule must leave alone, keep two."""
import numpy as np
import pytest

from conftest import assert_close, run_cpu, test_options, set_policy
import tflite_gpu
from tflite_gpu import _capi, interpreters
from tflite_gpu.model_builder import ModelBuilder


def _run(model, inputs, monkeypatch, fuse=True, **options):
    set_policy(monkeypatch, fuse_dw_1x1="1" if fuse else "0")
    # The counts below include the output's conversion, which the GPU set
    # skips for an output a conv stores itself (tests/test_output_direct.py).
    monkeypatch.setenv("TFLITE_GPU_BHWC_OUTPUT", "0")
    d = tflite_gpu.load_delegate(**test_options(**options))
    it = interpreters.make(model, delegate=d)
    stats = _capi.delegate_stats(d._get_native_delegate_pointer())
    return interpreters.run(it, inputs), stats


def _out_size(n, k, stride, dil, padding):
    eff = (k - 1) * dil + 1
    return (n + stride - 1) // stride if padding == "SAME" else (n - eff) // stride + 1


def _block(b=1, h=11, w=9, cin=5, cout=17, k=3, stride=1, dil=1, padding="SAME", dw_act="NONE",
           tail=(), pw_act="NONE", seed=0):
    """x -> DEPTHWISE(k, stride, dil, dw_act) -> CONV_2D 1x1 (pw_act) ->
    `tail` steps: "prelu" (per channel) and "add" (a residual fed as a
    second input). Returns (model, inputs)."""
    rng = np.random.default_rng(seed)
    mb = ModelBuilder()
    x = mb.add_input([b, h, w, cin])
    oh, ow = _out_size(h, k, stride, dil, padding), _out_size(w, k, stride, dil, padding)
    dwt = mb.add_tensor([1, k, k, cin], data=rng.standard_normal([1, k, k, cin]).astype(np.float32))
    dwb = mb.add_tensor([cin], data=rng.standard_normal([cin]).astype(np.float32))
    mid = mb.add_tensor([b, oh, ow, cin])
    mb.add_op("DEPTHWISE_CONV_2D", [x, dwt, dwb], [mid],
              dict(padding=padding, stride_w=stride, stride_h=stride, depth_multiplier=1,
                   dilation_w=dil, dilation_h=dil, fused_activation=dw_act))
    pwt = mb.add_tensor([cout, 1, 1, cin], data=(rng.standard_normal([cout, 1, 1, cin]) / np.sqrt(cin)).astype(np.float32))
    pwb = mb.add_tensor([cout], data=rng.standard_normal([cout]).astype(np.float32))
    y = mb.add_tensor([b, oh, ow, cout])
    mb.add_op("CONV_2D", [mid, pwt, pwb], [y], dict(padding="VALID", stride_w=1, stride_h=1, fused_activation=pw_act))
    inputs = [rng.standard_normal([b, h, w, cin]).astype(np.float32)]
    for step in tail:
        out = mb.add_tensor([b, oh, ow, cout])
        if step == "prelu":
            alpha = mb.add_tensor([cout], data=rng.uniform(0.05, 0.5, [cout]).astype(np.float32))
            mb.add_op("PRELU", [y, alpha], [out])
        else:
            r = mb.add_input([b, oh, ow, cout])
            inputs.append(rng.standard_normal([b, oh, ow, cout]).astype(np.float32))
            mb.add_op("ADD", [y, r], [out], dict(fused_activation="RELU"))
        y = out
    mb.mark_output(y)
    return mb.build(), inputs


def _check(model, inputs, monkeypatch, fp16=False, **options):
    """Fused and unfused on the GPU set against the CPU interpreter; the
    fused graph has one launch fewer. Returns the fused run's dispatches."""
    if fp16:
        options["is_precision_loss_allowed"] = 1
    (want,) = run_cpu(model, inputs)
    (got, ), fused = _run(model, inputs, monkeypatch, kernel_set="gpu", **options)
    _, plain = _run(model, inputs, monkeypatch, fuse=False, kernel_set="gpu", **options)
    assert fused["cpu_nodes"] == 0 and plain["cpu_nodes"] == 0
    assert fused["dispatches"] == plain["dispatches"] - 1, (fused, plain)
    # FP32: the same products summed in another order (1e-4). FP16 storage:
    # inputs, weights-times-inputs and the output rounded to half (2^-11
    # each); the fused kernel skips one rounding, of the depthwise's output.
    tol = 4e-3 if fp16 else 1e-4
    assert_close(got, want, rtol_l2=tol, atol=tol * max(1.0, float(np.abs(want).max())))
    return fused["dispatches"]


@pytest.mark.parametrize("cin,cout", [(1, 1), (3, 5), (5, 17), (17, 40), (8, 8)])
@pytest.mark.parametrize("k,stride,dil,padding", [
    (3, 1, 1, "SAME"), (3, 2, 1, "SAME"), (5, 1, 1, "SAME"), (5, 2, 1, "VALID"), (3, 1, 2, "SAME"), (1, 1, 1, "VALID"),
])
def test_fused_pair_matches_cpu(cin, cout, k, stride, dil, padding, monkeypatch):
    model, inputs = _block(cin=cin, cout=cout, k=k, stride=stride, dil=dil, padding=padding, dw_act="RELU6",
                           seed=cin * 100 + cout + k)
    # one launch for the pair, and the two boundary conversions
    assert _check(model, inputs, monkeypatch) == 3


@pytest.mark.parametrize("tail,pw_act", [((), "RELU"), (("prelu",), "NONE"), (("add",), "NONE"),
                                          (("prelu", "add"), "NONE")])
@pytest.mark.parametrize("fp16", [False, True])
def test_fused_pair_keeps_the_1x1_epilogue(tail, pw_act, fp16, monkeypatch):
    """The 1x1's activation, PReLU and residual ADD stay fused into the one
    launch (batch 2, a partial last slice)."""
    model, inputs = _block(b=2, h=7, w=13, cin=17, cout=21, k=5, dw_act="NONE", tail=tail, pw_act=pw_act,
                           seed=len(tail) + 7 * fp16)
    conversions = 1 + len(inputs)  # each input in, the output out
    assert _check(model, inputs, monkeypatch, fp16=fp16) == 1 + conversions


def test_fused_pair_with_small_groups(monkeypatch):
    """The occupancy rule's smaller groups (a 132-unit device, here on
    PoCL through the test hook) run the fused kernel too."""
    monkeypatch.setenv("TFLITE_GPU_COMPUTE_UNITS", "132")
    model, inputs = _block(h=16, w=16, cin=24, cout=48, k=3, dw_act="RELU", seed=3)
    assert _check(model, inputs, monkeypatch) == 3


def test_cpu_set_is_unchanged(monkeypatch):
    """The CPU kernel set has no fused kernel: two launches for the pair."""
    model, inputs = _block(seed=4)
    (want,) = run_cpu(model, inputs)
    (got,), stats = _run(model, inputs, monkeypatch, kernel_set="cpu")
    assert stats["dispatches"] == 4, stats
    assert_close(got, want, rtol_l2=1e-4, atol=1e-4 * max(1.0, float(np.abs(want).max())))


def _pair_kept(mb_extra, monkeypatch, seed=5):
    """Builds x -> DEPTHWISE -> CONV_2D with mb_extra(mb, rng, x, mid, y)
    changing it, and checks the GPU set keeps both launches (same count
    with the fusion on and off) and the CPU's results."""
    rng = np.random.default_rng(seed)
    mb = ModelBuilder()
    h, w, c = 9, 10, 6
    x = mb.add_input([1, h, w, c])
    spec = mb_extra(mb, rng, x, h, w, c)
    mb_model = mb.build()
    inputs = [rng.standard_normal([1, h, w, c]).astype(np.float32)]
    expected = run_cpu(mb_model, inputs)
    on_out, on = _run(mb_model, inputs, monkeypatch, kernel_set="gpu")
    _, off = _run(mb_model, inputs, monkeypatch, fuse=False, kernel_set="gpu")
    assert on["dispatches"] == off["dispatches"] == spec, (on, off)
    for got, want in zip(on_out, expected):
        assert_close(got, want, rtol_l2=1e-4, atol=1e-4 * max(1.0, float(np.abs(want).max())))


def _dw(mb, rng, x, h, w, c, mult=1, out_hw=None):
    oh, ow = out_hw or (h, w)
    wt = mb.add_tensor([1, 3, 3, c * mult], data=rng.standard_normal([1, 3, 3, c * mult]).astype(np.float32))
    b = mb.add_tensor([c * mult], data=rng.standard_normal([c * mult]).astype(np.float32))
    y = mb.add_tensor([1, oh, ow, c * mult])
    mb.add_op("DEPTHWISE_CONV_2D", [x, wt, b], [y], dict(padding="SAME", stride_w=1, stride_h=1, depth_multiplier=mult))
    return y


def _pw(mb, rng, x, h, w, cin, cout=7, stride=1):
    wt = mb.add_tensor([cout, 1, 1, cin], data=rng.standard_normal([cout, 1, 1, cin]).astype(np.float32))
    oh, ow = (h + stride - 1) // stride, (w + stride - 1) // stride
    b = mb.add_tensor([cout], data=rng.standard_normal([cout]).astype(np.float32))
    y = mb.add_tensor([1, oh, ow, cout])
    mb.add_op("CONV_2D", [x, wt, b], [y], dict(padding="SAME", stride_w=stride, stride_h=stride))
    return y


def test_depthwise_read_twice_is_kept(monkeypatch):
    def build(mb, rng, x, h, w, c):
        mid = _dw(mb, rng, x, h, w, c)
        mb.mark_output(_pw(mb, rng, mid, h, w, c))
        r = mb.add_tensor([1, h, w, c])
        mb.add_op("RELU", [mid], [r])
        mb.mark_output(r)
        return 6  # input, dw, 1x1, relu, two outputs
    _pair_kept(build, monkeypatch)


def test_depthwise_output_of_the_model_is_kept(monkeypatch):
    def build(mb, rng, x, h, w, c):
        mid = _dw(mb, rng, x, h, w, c)
        mb.mark_output(mid)
        mb.mark_output(_pw(mb, rng, mid, h, w, c))
        return 5
    _pair_kept(build, monkeypatch)


def test_strided_1x1_is_kept(monkeypatch):
    def build(mb, rng, x, h, w, c):
        mb.mark_output(_pw(mb, rng, _dw(mb, rng, x, h, w, c), h, w, c, stride=2))
        return 4
    _pair_kept(build, monkeypatch)


def test_depth_multiplier_2_is_kept(monkeypatch):
    def build(mb, rng, x, h, w, c):
        mb.mark_output(_pw(mb, rng, _dw(mb, rng, x, h, w, c, mult=2), h, w, 2 * c))
        return 4
    _pair_kept(build, monkeypatch)


def test_depthwise_with_its_own_prelu_is_kept(monkeypatch):
    """A PReLU fused into the depthwise has no place in the fused kernel."""
    def build(mb, rng, x, h, w, c):
        mid = _dw(mb, rng, x, h, w, c)
        alpha = mb.add_tensor([c], data=rng.uniform(0.05, 0.5, [c]).astype(np.float32))
        p = mb.add_tensor([1, h, w, c])
        mb.add_op("PRELU", [mid, alpha], [p])
        mb.mark_output(_pw(mb, rng, p, h, w, c))
        return 4
    _pair_kept(build, monkeypatch)


# 5x5 pairs around GD_DW_1X1_MAX_ITEM_TAPS (576): a work-item of the fused
# launch makes ceil(16 / rows) * 25 * ceil(S_in / 4) depthwise loads, with
# rows the least power of two >= ceil(S_out / 2), at most 16
# (fuse_dw_conv.h). The same input fuses or not by its output's width.
@pytest.mark.parametrize("cin,cout,bound,fused", [
    (16, 8, None, True),     # 1 block, 1 row, 1 K step: 16 x 25 x 1 = 400
    (20, 8, None, False),    # 2 K steps: 800
    (20, 17, None, True),    # 3 blocks, 4 rows: 4 x 25 x 2 = 200
    (196, 64, None, False),  # 8 blocks, 8 rows, 13 K steps: 2 x 25 x 13 = 650
    (196, 128, None, True),  # 16 blocks, 16 rows: 1 x 25 x 13 = 325
    (16, 8, "399", False),   # policy dw_1x1_max_taps stands for the bound
    (20, 8, "800", True),
], ids=["400", "800", "200-wide", "650", "325-wide", "hook-below", "hook-at"])
def test_long_pairs_by_taps_per_work_item(monkeypatch, cin, cout, bound, fused):
    if bound:
        set_policy(monkeypatch, dw_1x1_max_taps=bound)
    model, inputs = _block(h=6, w=7, cin=cin, cout=cout, k=5, seed=cin + cout)
    (want,) = run_cpu(model, inputs)
    (got,), on = _run(model, inputs, monkeypatch, kernel_set="gpu")
    _, off = _run(model, inputs, monkeypatch, fuse=False, kernel_set="gpu")
    assert on["dispatches"] == off["dispatches"] - fused, (cin, cout, on, off)
    assert_close(got, want, rtol_l2=1e-4, atol=1e-4 * max(1.0, float(np.abs(want).max())))


@pytest.mark.parametrize("units", ["132", "2"])
def test_fused_groups_on_a_large_gpu(monkeypatch, units):
    """TFLITE_GPU_COMPUTE_UNITS=132 narrows the fused launch's LX below 16
    (select_conv_gpu.c dw_1x1_group) on PoCL; results stay the CPU's."""
    monkeypatch.setenv("TFLITE_GPU_COMPUTE_UNITS", units)
    model, inputs = _block(h=13, w=11, cin=36, cout=24, k=5, seed=11)
    _check(model, inputs, monkeypatch)

# The VM on a GPU (execution=stepped|persistent with the fine bodies,
# select_vm_fine; policy vm_fine=1 stands for a GPU on PoCL): the pair
# is conv.cl's conv2d_x4_dw, one phase, no grid barrier between the two.
VM_PAIRS = {
    "3x3-relu6": dict(cin=5, cout=17, k=3, dw_act="RELU6"),
    "5x5-s2-valid": dict(cin=17, cout=3, k=5, stride=2, padding="VALID"),
    "1ch-dil2": dict(cin=1, cout=1, k=3, dil=2),
    "batch2-epilogue": dict(b=2, h=7, w=13, cin=17, cout=21, k=5, tail=("prelu", "add"), pw_act="NONE"),
}


def _vm_run(model, inputs, monkeypatch, execution, fuse=True, **options):
    set_policy(monkeypatch, vm_fine="1")
    set_policy(monkeypatch, fuse_dw_1x1="1" if fuse else "0")
    d = tflite_gpu.load_delegate(**test_options(execution=execution, **options))
    it = interpreters.make(model, delegate=d)
    out = interpreters.run(it, inputs)
    (part,) = _capi.delegate_partitions(d._get_native_delegate_pointer())
    (run,) = _capi.delegate_runs(d._get_native_delegate_pointer())
    del it
    assert run["execution"] == execution and run["launches"] == (1 if execution == "persistent" else part["dispatches"])
    return out, part


@pytest.mark.parametrize("fp16", [False, True])
@pytest.mark.parametrize("execution", ["stepped", "persistent"])
@pytest.mark.parametrize("case", list(VM_PAIRS), ids=list(VM_PAIRS))
def test_the_vm_runs_the_pair_as_one_fine_phase(case, execution, fp16, monkeypatch):
    model, inputs = _block(**VM_PAIRS[case], seed=len(case))
    options = {"is_precision_loss_allowed": 1} if fp16 else {}
    expected = run_cpu(model, inputs)
    got, fused = _vm_run(model, inputs, monkeypatch, execution, **options)
    _, plain = _vm_run(model, inputs, monkeypatch, execution, fuse=False, **options)
    assert fused["passes"]["dw_1x1"] == 1 and fused["dispatches"] == plain["dispatches"] - 1, (fused, plain)
    tol = 4e-3 if fp16 else 1e-4  # as _check says
    for g, w in zip(got, expected):
        assert_close(g, w, rtol_l2=tol, atol=tol * max(1.0, float(np.abs(w).max())))


# conv2d_x4_dw's work-item makes 4 * K * K * ceil(S_in / 4) depthwise loads
# (fuse_dw_conv.h dw_x4_item_taps), under the same bound (576), whatever the
# output's width: 5x5 with 20 inputs is 500, with 24 is 600.
@pytest.mark.parametrize("cin,cout,fused", [(20, 3, True), (24, 3, False), (24, 40, False)])
def test_the_vm_pair_is_bounded_by_its_taps_per_work_item(cin, cout, fused, monkeypatch):
    model, inputs = _block(h=6, w=7, cin=cin, cout=cout, k=5, seed=cin * cout)
    got, part = _vm_run(model, inputs, monkeypatch, "stepped")
    assert part["passes"]["dw_1x1"] == int(fused), part
    assert_close(got[0], run_cpu(model, inputs)[0], rtol_l2=1e-4, atol=1e-4)
