"""Epilogue chains (fuse_epilogue.c, common.cl's epilogue_chain): any
elementwise op after a conv or depthwise, up to GD_MAX_EPILOGUE (8) of
them, becomes a step of its epilogue: every float unary op, PRELU, any
binary arithmetic op with a constant per channel or scalar (either operand
order), and one runtime operand per node (a tensor of the output's shape,
or of one value per channel). Each fused op is a launch fewer; the outputs
are the CPU interpreter's.

Tolerance: FP32 1e-4 of the output's scale (the same float operations, the
conv's sums in another order); FP16 storage 1e-2, as check's FP16
tolerance (half rounding of the stored input and output)."""
import numpy as np
import pytest

import tflite_gpu
from conftest import assert_close, run_cpu
from fusion_hooks import mode_options
from test_fusion import _conv, _run_delegate
from tflite_gpu import _capi, interpreters
from tflite_gpu.model_builder import ModelBuilder

UNARY = {"abs", "neg", "floor", "tanh", "logistic", "relu", "exp", "leaky_relu", "sqrt"}

# A step: (op, operand, constant range). Operands: "c" a constant per
# channel, "s" a scalar constant, "x" the model's input (a runtime tensor of
# the output's shape), "g" a runtime gate of one value per channel (MEAN of
# the input over H and W, computed before the conv); an "r" prefix puts the
# conv's value second (c - v, c / v).
CHAINS = {
    # PReLU, an affine step and leaky relu each take constants: one chain.
    "alphas": [("MUL", "c", (0.5, 2)), ("ADD", "c", (-1, 1)), ("PRELU", "c", (0.1, 0.4)), ("leaky_relu",),
               ("MAXIMUM", "s", (-0.5, -0.5)), ("tanh",)],
    # Either operand order; |v| + 1 keeps c / v finite.
    "swapped": [("abs",), ("ADD", "s", (1, 1)), ("DIV", "rc", (0.5, 2)), ("SQUARED_DIFFERENCE", "c", (-1, 1)),
                ("POW", "s", (0.5, 0.5)), ("SUB", "rc", (-1, 1)), ("MINIMUM", "c", (0, 1))],
    "floors": [("floor",), ("FLOOR_MOD", "s", (3, 3)), ("FLOOR_DIV", "s", (2, 2)), ("MUL", "c", (-2, 2))],
    "input": [("MUL", "x", None)],
    "input_second": [("SUB", "rx", None), ("relu",)],
    "gate": [("MUL", "g", None), ("ADD", "c", (-1, 1)), ("logistic",)],
    # One runtime operand per node: the gate's MUL stays a launch.
    "two_runtime": [("ADD", "x", None), ("MUL", "g", None)],
    # Nine steps: eight fuse, the last stays.
    "nine": [("abs",), ("neg",), ("exp",), ("neg",), ("abs",), ("sqrt",), ("neg",), ("exp",), ("neg",)],
}
UNFUSED = {"two_runtime": 1, "nine": 1}


def _model(chain, c, depthwise, seed=3):
    rng = np.random.default_rng(seed)
    mb = ModelBuilder()
    h, w = 5, 7
    x = mb.add_input([1, h, w, c])
    steps = CHAINS[chain]
    gate = None
    if any(s[1:2] == ("g",) for s in steps):
        gate = mb.add_tensor([1, 1, 1, c])
        axes = mb.add_tensor([2], dtype=np.int32, data=np.array([1, 2], np.int32))
        mb.add_op("MEAN", [x, axes], [gate], dict(keep_dims=True))
    y = _conv(mb, rng, x, c, c, (h, w), depthwise=depthwise, act="RELU6" if chain == "gate" else "NONE")
    for step in steps:
        out = mb.add_tensor([1, h, w, c])
        if step[0] in UNARY:
            if step[0] == "leaky_relu":
                mb.add_op("LEAKY_RELU", [y], [out], dict(alpha=0.3))
            else:
                mb.add_op(step[0].upper(), [y], [out])
        else:
            op, operand, rng_range = step
            kind = operand.lstrip("r")
            if kind in "cs":
                n = c if kind == "c" else 1
                other = mb.add_tensor([n], data=rng.uniform(*rng_range, [n]).astype(np.float32))
            else:
                other = x if kind == "x" else gate
            ins = [other, y] if operand.startswith("r") else [y, other]
            mb.add_op(op, ins, [out], dict(fused_activation="NONE") if op in ("ADD", "SUB", "MUL", "DIV") else {})
        y = out
    mb.mark_output(y)
    return mb.build(), [rng.standard_normal([1, h, w, c]).astype(np.float32) * 2]


# A chain never takes conv.cl's 16-lane store (its steps go float4 by float4),
# so the CPU set runs 5 channels; persistent 16, whole blocks of the VM's bodies.
MODES = [("cpu", 5, False), ("gpu", 17, False), ("gpu", 5, True), ("persistent", 16, False),
         ("persistent-fine", 7, False)]


@pytest.mark.parametrize("mode,c,fp16", MODES, ids=[f"{m}-{c}{'-fp16' if h else ''}" for m, c, h in MODES])
@pytest.mark.parametrize("chain,depthwise", [(k, False) for k in CHAINS] + [("gate", True), ("input", True),
                                                                             ("swapped", True)])
def test_epilogue_chain_matches_cpu(chain, depthwise, mode, c, fp16, monkeypatch):
    if fp16 and chain == "floors":
        pytest.skip("FLOOR of a half-rounded value differs from the float one by a whole step")
    monkeypatch.setenv("TFLITE_GPU_BHWC_OUTPUT", "0")
    model, inputs = _model(chain, c, depthwise)
    expected = run_cpu(model, inputs)
    options = dict(mode_options(monkeypatch, mode) if mode != "persistent" else {"execution": "persistent"})
    if fp16:
        options["is_precision_loss_allowed"] = 1
    outputs, stats = _run_delegate(model, inputs, **options)
    assert stats["cpu_nodes"] == 0, stats
    # The conv (every step fused but UNFUSED's), the two boundary
    # conversions, the gate's MEAN; the GPU set reads an input only a
    # conv's source reads as it is (fuse.c keep_inputs_bhwc).
    steps = CHAINS[chain]
    runtime = {s[1].lstrip("r") for s in steps if len(s) > 1}
    want_launches = 3 + ("g" in runtime) + UNFUSED.get(chain, 0)
    want_launches -= mode == "gpu" and not depthwise and not runtime & {"x", "g"}
    assert stats["dispatches"] == want_launches, stats
    if mode.startswith("persistent"):
        d = tflite_gpu.load_delegate(log_level="silent", **options)
        it = interpreters.make(model, delegate=d)
        (part,) = _capi.delegate_partitions(d._get_native_delegate_pointer())
        del it
        assert (part["execution"], part["launches"]) == ("persistent", 1), part
    want = expected[0]
    tol = 1e-2 if fp16 else 1e-4
    assert_close(outputs[0], want, rtol_l2=tol, atol=tol * max(1.0, float(np.abs(want).max())))


def test_per_channel_runtime_operand_needs_batch_one():
    """A runtime operand of one value per channel is read at the slice
    (batch 1): with a batch of 2 its MUL stays a launch of its own."""
    rng = np.random.default_rng(5)
    mb = ModelBuilder()
    c, h, w = 6, 4, 5
    x = mb.add_input([2, h, w, c])
    gate = mb.add_input([1, 1, 1, c])
    wt = mb.add_tensor([c, 3, 3, c], data=rng.standard_normal([c, 3, 3, c]).astype(np.float32))
    b = mb.add_tensor([c], data=rng.standard_normal([c]).astype(np.float32))
    y = mb.add_tensor([2, h, w, c])
    mb.add_op("CONV_2D", [x, wt, b], [y], dict(padding="SAME", stride_w=1, stride_h=1, fused_activation="NONE"))
    y2 = mb.add_tensor([2, h, w, c])
    mb.add_op("MUL", [y, gate], [y2], dict(fused_activation="NONE"))
    mb.mark_output(y2)
    model = mb.build()
    inputs = [rng.standard_normal([2, h, w, c]).astype(np.float32), rng.standard_normal([1, 1, 1, c]).astype(np.float32)]
    expected = run_cpu(model, inputs)
    outputs, stats = _run_delegate(model, inputs, kernel_set="cpu")
    # conv, MUL, the two inputs' conversions and the output's.
    assert (stats["cpu_nodes"], stats["dispatches"]) == (0, 5), stats
    assert_close(outputs[0], expected[0], rtol_l2=1e-4, atol=1e-4 * max(1.0, float(np.abs(expected[0]).max())))


@pytest.mark.parametrize("mode", ["cpu", "gpu", "persistent"])
def test_gate_computed_after_the_conv_is_hoisted(mode, monkeypatch):
    """selfie_segmentation's decoder: MUL(RELU(conv(x)), gate), the gate a
    LOGISTIC of a 1x1 of MEAN(x) whose nodes come after the conv. The
    hoist_residuals pass moves them ahead of it, so that the MUL becomes the
    conv's EPI_BINARY step (one value per channel): 5 launches (conv, MEAN,
    the gate's 1x1, the input's and the output's conversions), not 6."""
    monkeypatch.setenv("TFLITE_GPU_BHWC_OUTPUT", "0")
    rng = np.random.default_rng(8)
    mb = ModelBuilder()
    c, h, w = 5, 6, 7
    x = mb.add_input([1, h, w, c])
    y = _conv(mb, rng, x, c, c, (h, w))
    r = mb.add_tensor([1, h, w, c])
    mb.add_op("RELU", [y], [r])
    m = mb.add_tensor([1, 1, 1, c])
    axes = mb.add_tensor([2], dtype=np.int32, data=np.array([1, 2], np.int32))
    mb.add_op("MEAN", [x, axes], [m], dict(keep_dims=True))
    wt = mb.add_tensor([c, 1, 1, c], data=rng.standard_normal([c, 1, 1, c]).astype(np.float32))
    b = mb.add_tensor([c], data=rng.standard_normal([c]).astype(np.float32))
    g = mb.add_tensor([1, 1, 1, c])
    mb.add_op("CONV_2D", [m, wt, b], [g], dict(padding="VALID", stride_w=1, stride_h=1, fused_activation="NONE"))
    gate = mb.add_tensor([1, 1, 1, c])
    mb.add_op("LOGISTIC", [g], [gate])
    out = mb.add_tensor([1, h, w, c])
    mb.add_op("MUL", [r, gate], [out], dict(fused_activation="NONE"))
    mb.mark_output(out)
    model = mb.build()
    inputs = [rng.standard_normal([1, h, w, c]).astype(np.float32)]
    expected = run_cpu(model, inputs)
    options = {"execution": "persistent"} if mode == "persistent" else {"kernel_set": mode}
    outputs, stats = _run_delegate(model, inputs, **options)
    assert (stats["cpu_nodes"], stats["dispatches"]) == (0, 5), stats
    assert_close(outputs[0], expected[0], rtol_l2=1e-4, atol=1e-4 * max(1.0, float(np.abs(expected[0]).max())))
