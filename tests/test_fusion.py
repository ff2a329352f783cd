"""Fused epilogues: PRELU and residual ADD folded into the convolution that
feeds them must give the CPU's results and save kernel launches."""
import numpy as np
import pytest

import tflite_gpu
from conftest import assert_close, run_cpu
from tflite_gpu import _capi, interpreters
from tflite_gpu.model_builder import ModelBuilder


def _conv(mb, rng, x, cin, cout, shape_hw, depthwise=False, act="NONE"):
    h, w = shape_hw
    # fp16 weights behind DEQUANTIZE, as in the MediaPipe models.
    wshape = [1, 3, 3, cout] if depthwise else [cout, 3, 3, cin]
    op, opts = ("DEPTHWISE_CONV_2D", dict(depth_multiplier=1)) if depthwise else ("CONV_2D", {})
    wt = mb.add_tensor(wshape, dtype=np.float16, data=rng.standard_normal(wshape).astype(np.float16))
    wf = mb.add_tensor(wshape)
    mb.add_op("DEQUANTIZE", [wt], [wf], version=2)
    b = mb.add_tensor([cout], data=rng.standard_normal([cout]).astype(np.float32))
    y = mb.add_tensor([1, h, w, cout])
    mb.add_op(op, [x, wf, b], [y], dict(opts, padding="SAME", stride_w=1, stride_h=1, fused_activation=act))
    return y


def _run_delegate(model, inputs, **options):
    """One invoke through the delegate: the outputs, and the delegate's
    stats (CPU nodes, dispatches) once the graph is planned."""
    d = tflite_gpu.load_delegate(log_level="silent", **options)
    it = interpreters.make(model, delegate=d)
    stats = _capi.delegate_stats(d._get_native_delegate_pointer())
    return interpreters.run(it, inputs), stats


def _model(order, c, alpha_shape):
    """x -> conv -> dw -> [PRELU, ADD(residual = conv output)] in `order`."""
    rng = np.random.default_rng(11)
    mb = ModelBuilder()
    h, w = 9, 7
    x = mb.add_input([1, h, w, 3])
    a = _conv(mb, rng, x, 3, c, (h, w), act="RELU6")
    y = _conv(mb, rng, a, c, c, (h, w), depthwise=True)
    for step in order:
        out = mb.add_tensor([1, h, w, c])
        if step == "prelu":
            alpha = mb.add_tensor(alpha_shape, data=rng.uniform(0.05, 0.5, alpha_shape).astype(np.float32))
            mb.add_op("PRELU", [y, alpha], [out])
        else:
            mb.add_op("ADD", [a, y], [out], dict(fused_activation="RELU"))
        y = out
    mb.mark_output(y)
    return mb.build(), [rng.standard_normal([1, h, w, 3]).astype(np.float32)]


@pytest.mark.parametrize("order", [("prelu",), ("add",), ("prelu", "add"), ("add", "prelu")])
@pytest.mark.parametrize("c,alpha_shape", [(5, [5]), (17, [1, 1, 17]), (8, [1, 1, 1, 8]), (3, [1])])
def test_fused_epilogue_matches_cpu(order, c, alpha_shape):
    model, inputs = _model(order, c, alpha_shape)
    expected = run_cpu(model, inputs)
    outputs, stats = _run_delegate(model, inputs)
    got = outputs[0]
    assert stats["cpu_nodes"] == 0
    # conv, depthwise (+ its epilogue) and the two boundary conversions.
    assert stats["dispatches"] == 4, stats
    assert_close(got, expected[0], rtol_l2=1e-4, atol=1e-4 * max(1.0, float(np.abs(expected[0]).max())))


def test_residual_written_after_the_producer_is_not_fused():
    """ADD(conv_out, t) where t is computed after conv must not be fused
    into conv (it would read t before it exists)."""
    rng = np.random.default_rng(5)
    mb = ModelBuilder()
    x = mb.add_input([1, 6, 5, 4])
    a = _conv(mb, rng, x, 4, 4, (6, 5))
    t = mb.add_tensor([1, 6, 5, 4])
    mb.add_op("RELU", [x], [t])
    y = mb.add_tensor([1, 6, 5, 4])
    mb.add_op("ADD", [a, t], [y], dict(fused_activation="NONE"))
    mb.mark_output(y)
    model = mb.build()
    inputs = [rng.standard_normal([1, 6, 5, 4]).astype(np.float32)]
    expected = run_cpu(model, inputs)
    outputs, _ = _run_delegate(model, inputs)
    assert_close(outputs[0], expected[0], rtol_l2=1e-4, atol=1e-3)


def _padded_convs(readers, pads, stride):
    """x -> PAD(H, W) -> one or two convs (or a conv and a RELU)."""
    rng = np.random.default_rng(7)
    mb = ModelBuilder()
    h, w, c = 11, 10, 6
    x = mb.add_input([1, h, w, c])
    (top, bottom), (left, right) = pads
    ph, pw = h + top + bottom, w + left + right
    paddings = mb.add_tensor([4, 2], dtype=np.int32,
                             data=np.array([[0, 0], [top, bottom], [left, right], [0, 0]], np.int32))
    p = mb.add_tensor([1, ph, pw, c])
    mb.add_op("PAD", [x, paddings], [p])
    outs = []
    for kind in readers:
        if kind == "relu":
            y = mb.add_tensor([1, ph, pw, c])
            mb.add_op("RELU", [p], [y])
        else:
            depthwise = kind == "dw"
            cout = c if depthwise else 9
            k = 5 if depthwise else 3
            wshape = [1, k, k, cout] if depthwise else [cout, k, k, c]
            wt = mb.add_tensor(wshape, data=rng.standard_normal(wshape).astype(np.float32))
            b = mb.add_tensor([cout], data=rng.standard_normal([cout]).astype(np.float32))
            oh, ow = (ph - k) // stride + 1, (pw - k) // stride + 1
            y = mb.add_tensor([1, oh, ow, cout])
            op, opts = ("DEPTHWISE_CONV_2D", dict(depth_multiplier=1)) if depthwise else ("CONV_2D", {})
            mb.add_op(op, [p, wt, b], [y], dict(opts, padding="VALID", stride_w=stride, stride_h=stride))
        mb.mark_output(y)
        outs.append(y)
    return mb.build(), [rng.standard_normal([1, h, w, c]).astype(np.float32)]


@pytest.mark.parametrize("readers,pads,stride,dispatches", [
    (("dw",), ((1, 2), (2, 1)), 2, 3),         # asymmetric pad before a stride-2 depthwise
    (("conv",), ((1, 1), (1, 1)), 1, 3),
    (("dw", "dw"), ((2, 2), (2, 2)), 1, 5),    # one PAD, two readers: folded into both
    (("dw", "relu"), ((1, 1), (1, 1)), 1, 6),  # a non-conv reader keeps the PAD
])
def test_pad_folded_into_convs(readers, pads, stride, dispatches):
    model, inputs = _padded_convs(readers, pads, stride)
    expected = run_cpu(model, inputs)
    outputs, stats = _run_delegate(model, inputs)
    assert stats["cpu_nodes"] == 0
    # one input conversion, the kernels, one output conversion per output
    assert stats["dispatches"] == dispatches, stats
    for got, want in zip(outputs, expected):
        assert_close(got, want, rtol_l2=1e-4, atol=1e-4 * max(1.0, float(np.abs(want).max())))


@pytest.mark.parametrize("cin,cout,producer,extra_reader,dispatches", [
    (5, 12, "conv", False, 3),   # x -> conv ; ADD(conv, PAD_c(x)): the PAD becomes a short residual
    (8, 24, "conv", False, 3),   # two missing slices
    (3, 17, "dw", False, 5),     # ADD(depthwise(conv(x)), PAD_c(RELU(x)))
    (5, 12, "conv", True, 6),    # the PAD has a second reader: it stays (and 2 outputs)
])
def test_channel_pad_folded_into_residual_add(cin, cout, producer, extra_reader, dispatches):
    rng = np.random.default_rng(3)
    mb = ModelBuilder()
    h, w = 7, 10
    x = mb.add_input([1, h, w, cin])
    paddings = mb.add_tensor([4, 2], dtype=np.int32,
                             data=np.array([[0, 0], [0, 0], [0, 0], [0, cout - cin]], np.int32))
    short = x
    if producer == "dw":
        short = mb.add_tensor([1, h, w, cin])
        mb.add_op("RELU", [x], [short])
    p = mb.add_tensor([1, h, w, cout])
    mb.add_op("PAD", [short, paddings], [p])
    if producer == "conv":
        wt = mb.add_tensor([cout, 1, 1, cin], data=rng.standard_normal([cout, 1, 1, cin]).astype(np.float32))
        src = x
        opts = dict(padding="SAME", stride_w=1, stride_h=1)
        op = "CONV_2D"
    else:  # depthwise over a 1x1 conv of x, so the PAD's only reader is the ADD
        w1 = mb.add_tensor([cout, 1, 1, cin], data=rng.standard_normal([cout, 1, 1, cin]).astype(np.float32))
        b1 = mb.add_tensor([cout], data=rng.standard_normal([cout]).astype(np.float32))
        src = mb.add_tensor([1, h, w, cout])
        mb.add_op("CONV_2D", [x, w1, b1], [src], dict(padding="SAME", stride_w=1, stride_h=1))
        wt = mb.add_tensor([1, 3, 3, cout], data=rng.standard_normal([1, 3, 3, cout]).astype(np.float32))
        opts = dict(padding="SAME", stride_w=1, stride_h=1, depth_multiplier=1)
        op = "DEPTHWISE_CONV_2D"
    b = mb.add_tensor([cout], data=rng.standard_normal([cout]).astype(np.float32))
    y = mb.add_tensor([1, h, w, cout])
    mb.add_op(op, [src, wt, b], [y], opts)
    out = mb.add_tensor([1, h, w, cout])
    mb.add_op("ADD", [y, p], [out], dict(fused_activation="RELU"))
    mb.mark_output(out)
    if extra_reader:
        z = mb.add_tensor([1, h, w, cout])
        mb.add_op("RELU", [p], [z])
        mb.mark_output(z)
    model = mb.build()
    inputs = [rng.standard_normal([1, h, w, cin]).astype(np.float32)]
    expected = run_cpu(model, inputs)
    outputs, stats = _run_delegate(model, inputs)
    assert stats["cpu_nodes"] == 0
    assert stats["dispatches"] == dispatches, stats
    for got, want in zip(outputs, expected):
        assert_close(got, want, rtol_l2=1e-4,
                     atol=1e-4 * max(1.0, float(np.abs(want).max())))


# persistent: the VM's bodies; 16 channels: whole 16-channel blocks, the CPU
# set's wide store (conv.cl conv_store16), which the GPU set does not have.
@pytest.mark.parametrize("kernel_set,c", [("cpu", 7), ("gpu", 7), ("persistent", 7), ("cpu", 16), ("persistent", 16)])
@pytest.mark.parametrize("chain,act,dispatches", [
    (("relu",), "NONE", 3),             # conv -> RELU: the conv's activation
    (("add", "relu6"), "RELU", 3),      # conv(RELU) -> ADD -> RELU6: the ADD step's activation
    (("prelu", "relu"), "NONE", 3),     # after a PReLU there is no activation slot: RELU is a step
    (("relu", "relu_n1_to_1"), "NONE", 3),  # the slot is taken by the first one: a step
    (("hard_swish",), "NONE", 3),       # MobileNetV3: conv -> HARD_SWISH
    (("logistic",), "NONE", 3),
    (("tanh",), "NONE", 3),
    (("add", "hard_swish"), "NONE", 3),
    (("relu6", "logistic"), "NONE", 3),
    (("hard_swish",), "RELU", 3),        # the conv's own activation holds the slot: a step
    # Every other float unary op is a step (unary_math, the table unary_op runs).
    (("leaky_relu",), "NONE", 3),       # its alpha in the alpha operand
    (("abs", "sqrt"), "NONE", 3),
    (("abs", "log"), "NONE", 3),
    (("neg", "elu"), "NONE", 3),
    (("sin", "cos"), "RELU6", 3),
    (("square", "exp"), "RELU_N1_TO_1", 3),
    (("abs", "rsqrt"), "NONE", 3),
    (("gelu",), "RELU", 3),
    (("gelu_tanh",), "NONE", 3),
    (("neg", "sign"), "NONE", 3),
    (("floor",), "NONE", 3),
    (("prelu", "leaky_relu"), "NONE", 3),  # two steps with constants: a chain (EPI_CHAIN)
    (("add", "exp", "tanh"), "NONE", 3),   # three steps: a chain
])
def test_unary_after_conv_is_fused(chain, act, dispatches, c, kernel_set, monkeypatch):
    """A unary op after a conv (or after its fused ADD) becomes that step's
    activation when it is one of the RELU family, TANH, LOGISTIC or
    HARD_SWISH and the slot is free; any other float unary op, or one whose
    slot is taken, becomes an epilogue step of its own (longer chains:
    test_fusion_chain.py). One launch fewer per fused op, the CPU
    interpreter's outputs."""
    # The counts include the output's conversion, which the GPU set skips
    # for an output a conv stores itself (tests/test_output_direct.py).
    monkeypatch.setenv("TFLITE_GPU_BHWC_OUTPUT", "0")
    rng = np.random.default_rng(9)
    mb = ModelBuilder()
    h, w = 6, 9
    x = mb.add_input([1, h, w, c])
    y = _conv(mb, rng, x, c, c, (h, w), act=act)
    ops = {"relu": "RELU", "relu6": "RELU6", "relu_n1_to_1": "RELU_N1_TO_1", "hard_swish": "HARD_SWISH",
           "logistic": "LOGISTIC", "tanh": "TANH"}
    for step in chain:
        out = mb.add_tensor([1, h, w, c])
        if step == "leaky_relu":
            mb.add_op("LEAKY_RELU", [y], [out], dict(alpha=0.3))
        elif step in ("gelu", "gelu_tanh"):
            mb.add_op("GELU", [y], [out], dict(approximate=step == "gelu_tanh"), version=2)
        elif step == "add":
            mb.add_op("ADD", [y, x], [out], dict(fused_activation="NONE"))
        elif step == "prelu":
            alpha = mb.add_tensor([c], data=rng.uniform(0.05, 0.5, [c]).astype(np.float32))
            mb.add_op("PRELU", [y, alpha], [out])
        else:
            mb.add_op(ops.get(step, step.upper()), [y], [out])
        y = out
    mb.mark_output(y)
    model = mb.build()
    inputs = [rng.standard_normal([1, h, w, c]).astype(np.float32) * 3]
    expected = run_cpu(model, inputs)
    options = dict(execution="persistent") if kernel_set == "persistent" else dict(kernel_set=kernel_set)
    outputs, stats = _run_delegate(model, inputs, **options)
    assert stats["cpu_nodes"] == 0
    if kernel_set == "persistent":  # the unary steps' bodies are in the VM program: one launch
        d = tflite_gpu.load_delegate(log_level="silent", **options)
        it = interpreters.make(model, delegate=d)
        (part,) = _capi.delegate_partitions(d._get_native_delegate_pointer())
        del it
        assert (part["execution"], part["launches"]) == ("persistent", 1), part
    # The GPU set reads an input only the conv reads as it is (no
    # conversion: fuse.c keep_inputs_bhwc); the ADD reads it too.
    bhwc = kernel_set == "gpu" and "add" not in chain
    assert stats["dispatches"] == dispatches - bhwc, stats
    want = expected[0]
    # LOG, SQRT and RSQRT of |v| turn the conv's rounding (reordered sums,
    # ~1e-6 of its scale; the CPU interpreters differ in it too) into an
    # error of that over |v| (over 2 sqrt|v|, times |v|^-1.5 / 2), large
    # where v nears 0 (c=16 draws such a v): 1e-3 there, 1e-4 elsewhere.
    tol = 1e-3 if {"log", "sqrt", "rsqrt"} & set(chain) else 1e-4
    assert_close(outputs[0], want, rtol_l2=tol, atol=tol * max(1.0, float(np.abs(want).max())))


# 16 channels: whole 16-channel blocks, the CPU set's wide store.
@pytest.mark.parametrize("kernel_set,c", [(k, c) for k in ("cpu", "gpu", "persistent", "fp16") for c in (5, 17)] +
                         [("cpu", 16), ("persistent", 16)])
@pytest.mark.parametrize("chain,depthwise,dispatches", [
    (("mul", "add"), False, 3),          # conv(RELU) -> MUL -> ADD (batch norm after the activation): one step
    (("add1",), False, 3),               # ADD of a scalar
    (("sub", "mul"), False, 3),          # (conv - c) * c: one step, conv * a + b with b = -c * a
    (("mul", "add", "mul"), False, 3),   # a second multiplier: a second affine step, a chain
    (("rmul", "add", "abs"), False, 3),  # c * conv, + c, ABS: an affine step and a unary one
    (("mul", "add"), True, 3),           # after a depthwise
    (("rsub",), False, 3),               # c - conv: an EPI_BINARY step, v second
    (("prelu", "mul"), False, 3),        # two steps with constants: a chain
])
def test_constant_binary_after_conv_is_an_affine_step(chain, depthwise, dispatches, c, kernel_set, monkeypatch):
    """A MUL, ADD or SUB (the conv's output first) by a constant per channel
    or a scalar becomes an epilogue step v * a + b with the op's
    activation, a MUL then an ADD one step; more steps, or more than one
    with constants, run as a chain (EPI_CHAIN). One launch fewer per fused
    op, the CPU interpreter's outputs."""
    monkeypatch.setenv("TFLITE_GPU_BHWC_OUTPUT", "0")
    rng = np.random.default_rng(c)
    mb = ModelBuilder()
    h, w = 7, 5
    x = mb.add_input([1, h, w, c])
    y = _conv(mb, rng, x, c, c, (h, w), depthwise=depthwise, act="RELU")
    for step in chain:
        out = mb.add_tensor([1, h, w, c])
        const = mb.add_tensor([1] if step == "add1" else [c], data=rng.uniform(-2, 2, [1 if step == "add1" else c])
                              .astype(np.float32))
        if step in ("mul", "rmul"):
            mb.add_op("MUL", [y, const] if step == "mul" else [const, y], [out], dict(fused_activation="NONE"))
        elif step in ("add", "add1"):
            mb.add_op("ADD", [y, const], [out], dict(fused_activation="RELU6" if step == "add1" else "NONE"))
        elif step in ("sub", "rsub"):
            mb.add_op("SUB", [y, const] if step == "sub" else [const, y], [out], dict(fused_activation="NONE"))
        elif step == "prelu":
            mb.add_op("PRELU", [y, const], [out])
        else:
            mb.add_op(step.upper(), [y], [out])
        y = out
    mb.mark_output(y)
    model = mb.build()
    inputs = [rng.standard_normal([1, h, w, c]).astype(np.float32) * 3]
    expected = run_cpu(model, inputs)
    options = {"persistent": dict(execution="persistent"),
               "fp16": dict(is_precision_loss_allowed=1, kernel_set="cpu")}.get(kernel_set, dict(kernel_set=kernel_set))
    outputs, stats = _run_delegate(model, inputs, **options)
    assert stats["cpu_nodes"] == 0
    # The GPU set reads x as it is where a conv (not a depthwise) reads it alone.
    assert stats["dispatches"] == dispatches - (kernel_set == "gpu" and not depthwise), stats
    want = expected[0]
    # FP32: only the order of the arithmetic differs (1e-5). FP16: half storage of
    # the input and the output, check's FP16 tolerance (1e-2).
    tol = 1e-2 if kernel_set == "fp16" else 1e-5
    assert_close(outputs[0], want, rtol_l2=tol, atol=tol * max(1.0, float(np.abs(want).max())))


@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("c", [5, 8, 17, 20])
@pytest.mark.parametrize("order", [("prelu", "add"), ("add", "prelu")])
def test_epilogue_fused_into_register_tiled_conv(order, c, k):
    """conv (k x k, c -> c) -> PRELU / ADD(x): the epilogue runs inside the
    conv's 8- or 16-channel blocks, full (8, 20 = 16 + 4) and partial (5, 17)."""
    rng = np.random.default_rng(17 + c + k)
    mb = ModelBuilder()
    h, w = 7, 9
    x = mb.add_input([2, h, w, c])
    wt = mb.add_tensor([c, k, k, c], data=rng.standard_normal([c, k, k, c]).astype(np.float32))
    b = mb.add_tensor([c], data=rng.standard_normal([c]).astype(np.float32))
    y = mb.add_tensor([2, h, w, c])
    mb.add_op("CONV_2D", [x, wt, b], [y], dict(padding="SAME", stride_w=1, stride_h=1, fused_activation="NONE"))
    for step in order:
        out = mb.add_tensor([2, h, w, c])
        if step == "prelu":
            alpha = mb.add_tensor([c], data=rng.uniform(0.05, 0.5, [c]).astype(np.float32))
            mb.add_op("PRELU", [y, alpha], [out])
        else:
            mb.add_op("ADD", [y, x], [out], dict(fused_activation="RELU6"))
        y = out
    mb.mark_output(y)
    model = mb.build()
    inputs = [rng.standard_normal([2, h, w, c]).astype(np.float32)]
    expected = run_cpu(model, inputs)
    outputs, stats = _run_delegate(model, inputs)
    got = outputs[0]
    assert stats["dispatches"] == 3, stats  # conv with both steps fused, and the two conversions
    assert_close(got, expected[0], rtol_l2=1e-4, atol=1e-4 * max(1.0, float(np.abs(expected[0]).max())))


@pytest.mark.parametrize("style", ["keras", "plain"])
def test_layer_norm_statistics_fused(style):
    """MEAN -> SQUARED_DIFFERENCE -> MEAN -> ADD(eps) -> RSQRT runs as one
    kernel: four launches fewer than the same graph ending in SQRT (which
    the pattern does not match), with the CPU's result (the op sweep's
    layernorm cases check more shapes)."""
    from op_cases.layer_norm import layer_norm_graph

    shape = [2, 3, 5, 17]
    runs = {}
    for last in ("RSQRT", "SQRT"):
        rng = np.random.default_rng(23)
        mb = ModelBuilder()
        x = mb.add_input(shape)
        mb.mark_output(layer_norm_graph(mb, rng, x, shape, 1e-3, style, last_op=last))
        model = mb.build()
        inputs = [rng.standard_normal(shape).astype(np.float32)]
        (got,), stats = _run_delegate(model, inputs)
        (want,) = run_cpu(model, inputs)
        assert stats["cpu_nodes"] == 0
        assert_close(got, want, rtol_l2=1e-4, atol=1e-4 * max(1.0, float(np.abs(want).max())))
        runs[last] = stats["dispatches"]
    assert runs["RSQRT"] == runs["SQRT"] - 4, runs


@pytest.mark.parametrize("kernel_set", ["cpu", "gpu"])
@pytest.mark.parametrize("shortcut_first", [True, False])
@pytest.mark.parametrize("cin,cout", [(5, 12), (8, 8), (3, 17)])
def test_shortcut_after_the_conv_is_fused(cin, cout, shortcut_first, kernel_set, monkeypatch):
    """A BlazeBlock stride-2 block: x -> depthwise (stride 2) -> 1x1 ->
    ADD(., PAD_c(MAX_POOL(x))) -> PRELU, with the shortcut's nodes placed
    after the conv path (as the MediaPipe files order them) or before.
    Either way the ADD becomes the 1x1's residual epilogue: the shortcut's
    nodes move ahead of the conv (fuse.c hoist_residuals), so both orders
    launch the same kernels."""
    monkeypatch.setenv("TFLITE_GPU_BHWC_OUTPUT", "0")  # counts with the output's conversion
    rng = np.random.default_rng(cin * 10 + cout)
    mb = ModelBuilder()
    h, w = 10, 13
    oh, ow = h // 2, (w + 1) // 2
    x = mb.add_input([1, h, w, cin])

    def shortcut():
        pooled = mb.add_tensor([1, oh, ow, cin])
        mb.add_op("MAX_POOL_2D", [x], [pooled], dict(padding="SAME", stride_w=2, stride_h=2, filter_w=2,
                                                     filter_h=2))
        if cin == cout:
            return pooled
        paddings = mb.add_tensor([4, 2], dtype=np.int32,
                                 data=np.array([[0, 0], [0, 0], [0, 0], [0, cout - cin]], np.int32))
        padded = mb.add_tensor([1, oh, ow, cout])
        mb.add_op("PAD", [pooled, paddings], [padded])
        return padded

    s = shortcut() if shortcut_first else None
    dwt = mb.add_tensor([1, 3, 3, cin], data=rng.standard_normal([1, 3, 3, cin]).astype(np.float32))
    dwb = mb.add_tensor([cin], data=rng.standard_normal([cin]).astype(np.float32))
    mid = mb.add_tensor([1, oh, ow, cin])
    mb.add_op("DEPTHWISE_CONV_2D", [x, dwt, dwb], [mid],
              dict(padding="SAME", stride_w=2, stride_h=2, depth_multiplier=1))
    pwt = mb.add_tensor([cout, 1, 1, cin], data=rng.standard_normal([cout, 1, 1, cin]).astype(np.float32))
    pwb = mb.add_tensor([cout], data=rng.standard_normal([cout]).astype(np.float32))
    y = mb.add_tensor([1, oh, ow, cout])
    mb.add_op("CONV_2D", [mid, pwt, pwb], [y], dict(padding="VALID", stride_w=1, stride_h=1))
    if not shortcut_first:
        s = shortcut()
    z = mb.add_tensor([1, oh, ow, cout])
    mb.add_op("ADD", [y, s], [z], dict(fused_activation="NONE"))
    alpha = mb.add_tensor([cout], data=rng.uniform(0.05, 0.5, [cout]).astype(np.float32))
    out = mb.add_tensor([1, oh, ow, cout])
    mb.add_op("PRELU", [z, alpha], [out])
    mb.mark_output(out)
    model = mb.build()
    inputs = [rng.standard_normal([1, h, w, cin]).astype(np.float32)]
    (want,) = run_cpu(model, inputs)
    (got,), stats = _run_delegate(model, inputs, kernel_set=kernel_set)
    assert stats["cpu_nodes"] == 0
    # input and output conversions, the depthwise and the 1x1 with ADD and
    # PReLU fused, which reads the residual through the pool (fuse.c
    # max2_pool_of); the GPU set runs both convs in one launch
    assert stats["dispatches"] == (3 if kernel_set == "gpu" else 4), stats
    assert_close(got, want, rtol_l2=1e-4, atol=1e-4 * max(1.0, float(np.abs(want).max())))


def _fc_head(logistic, fc_output=False, seed=21):
    """x [1, 37] -> FULLY_CONNECTED to 5 [-> LOGISTIC]: hand_landmark's
    presence and handedness heads. fc_output: the FC's output is read back
    too."""
    rng = np.random.default_rng(seed)
    mb = ModelBuilder()
    x = mb.add_input([1, 37])
    w = mb.add_tensor([5, 37], data=(rng.standard_normal([5, 37]) / 6).astype(np.float32))
    b = mb.add_tensor([5], data=rng.standard_normal([5]).astype(np.float32))
    y = mb.add_tensor([1, 5])
    mb.add_op("FULLY_CONNECTED", [x, w, b], [y])
    if logistic:
        z = mb.add_tensor([1, 5])
        mb.add_op("LOGISTIC", [y], [z])
        mb.mark_output(z)
    if fc_output or not logistic:
        mb.mark_output(y)
    return mb.build(), [rng.standard_normal([1, 37]).astype(np.float32)]


@pytest.mark.parametrize("kernel_set", ["cpu", "gpu"])
def test_logistic_after_fully_connected_is_its_activation(kernel_set):
    """The LOGISTIC becomes the FC's activation in both kernel sets: as many
    launches as the FC alone, and the CPU interpreter's values (1e-5: one
    dot product of 37, then the same sigmoid)."""
    plain, plain_in = _fc_head(logistic=False)
    _, alone = _run_delegate(plain, plain_in, kernel_set=kernel_set)
    # Read back too, the FC's output keeps the LOGISTIC a launch of its own.
    for fc_output, more in ((False, 0), (True, 1)):
        model, inputs = _fc_head(logistic=True, fc_output=fc_output)
        got, stats = _run_delegate(model, inputs, kernel_set=kernel_set)
        assert stats["cpu_nodes"] == 0
        assert stats["dispatches"] == alone["dispatches"] + more, (stats, alone)
        for g, w in zip(got, run_cpu(model, inputs)):
            assert_close(g, w, rtol_l2=1e-5, atol=1e-5)


@pytest.mark.parametrize("kernel_set", ["cpu", "gpu", "persistent"])
@pytest.mark.parametrize("after,fused", [("LOGISTIC", True), ("RELU6", True), ("HARD_SWISH", True), ("ABS", False)])
def test_activation_after_transpose_conv_is_its_activation(after, fused, kernel_set, monkeypatch):
    """An activation after a TRANSPOSE_CONV (selfie_segmentation's mask:
    then LOGISTIC) becomes its activation, a launch fewer; any other unary
    op stays a node (the kernel takes no epilogue steps). The CPU
    interpreter's values: 1e-5 (the same sums in another order, then the
    same activation)."""
    monkeypatch.setenv("TFLITE_GPU_BHWC_OUTPUT", "0")
    rng = np.random.default_rng(4)
    mb = ModelBuilder()
    c, cin, h, w = 5, 3, 5, 7
    x = mb.add_input([1, h, w, cin])
    shape = mb.add_tensor([4], np.int32, data=np.array([1, 2 * h, 2 * w, c], np.int32))
    wt = mb.add_tensor([c, 3, 3, cin], data=rng.standard_normal((c, 3, 3, cin)).astype(np.float32))
    b = mb.add_tensor([c], data=rng.standard_normal(c).astype(np.float32))
    y = mb.add_tensor([1, 2 * h, 2 * w, c])
    mb.add_op("TRANSPOSE_CONV", [shape, wt, x, b], [y], dict(padding="SAME", stride_w=2, stride_h=2), version=3)
    z = mb.add_tensor([1, 2 * h, 2 * w, c])
    mb.add_op(after, [y], [z])
    mb.mark_output(z)
    model = mb.build()
    inputs = [rng.standard_normal((1, h, w, cin)).astype(np.float32)]
    options = {"execution": "persistent"} if kernel_set == "persistent" else {"kernel_set": kernel_set}
    got, stats = _run_delegate(model, inputs, **options)
    # The transpose conv, the input's and the output's conversions, and the unfused op.
    assert (stats["cpu_nodes"], stats["dispatches"]) == (0, 3 + (not fused)), stats
    want = run_cpu(model, inputs)[0]
    assert_close(got[0], want, rtol_l2=1e-5, atol=1e-5 * max(1.0, float(np.abs(want).max())))
