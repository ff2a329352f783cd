"""A CONV_2D that reads its source through the PRELU before it
(fuse_prelu_source.c): hand_recrop's blocks end in an ADD read by the next
block's pooled residual and by a PRELU, whose output only the next
block's 2x2 stride-2 conv reads; so the PRELU cannot be an epilogue. The
VM's fine bodies (a GPU's; policy vm_fine=1 here) run conv2d_x4_prelu,
which applies the alpha where it loads each source float4: the PRELU is no
phase of its own. The kernel sets keep it (their register-tiled convs have
no such form).

Every case runs with the fusion on and off (TFLITE_GPU_FUSE_PRELU_SOURCE=0)
against the CPU interpreter on seeded random data. Tolerance: fusion_hooks.py's
(FP32 1e-4 of the output's scale: the same products, summed as conv2d_x4
sums them; FP16 1e-2: the PRELU's output is not rounded to half before the
conv when fused)."""
import numpy as np
import pytest

from fusion_hooks import launches_saved
from tflite_gpu.model_builder import ModelBuilder
from conftest import set_policy

HOOK = "TFLITE_GPU_FUSE_PRELU_SOURCE"


def _model(c, k, stride, padding, alpha="channel", second_reader=False, seed=0):
    """x -> CONV 3x3 (RELU6) = s, an output too (a second reader: no
    epilogue); PRELU(s) -> CONV k x k (stride, padding) -> output.
    alpha: "channel" ([1, 1, c]), "scalar" ([1]) or "runtime" (an input);
    second_reader: the PRELU's output is an output too."""
    rng = np.random.default_rng(seed)
    h, w = 13, 11
    mb = ModelBuilder()
    x = mb.add_input([1, h, w, 3])
    s = mb.add_tensor([1, h, w, c])
    mb.add_op("CONV_2D", [x, mb.add_tensor([c, 3, 3, 3], data=rng.standard_normal([c, 3, 3, 3]).astype(np.float32)),
                          mb.add_tensor([c], data=rng.standard_normal([c]).astype(np.float32))], [s],
              dict(padding="SAME", stride_w=1, stride_h=1, fused_activation="NONE"))
    mb.mark_output(s)
    inputs = [rng.standard_normal([1, h, w, 3]).astype(np.float32)]
    if alpha == "runtime":
        a = mb.add_input([1, 1, c])
        inputs.append(rng.uniform(0.05, 0.5, [1, 1, c]).astype(np.float32))
    else:
        shape = [1, 1, c] if alpha == "channel" else [1]
        a = mb.add_tensor(shape, data=rng.uniform(0.05, 0.5, shape).astype(np.float32))
    p = mb.add_tensor([1, h, w, c])
    mb.add_op("PRELU", [s, a], [p])
    if second_reader:
        mb.mark_output(p)
    oh, ow = ((h - k) // stride + 1, (w - k) // stride + 1) if padding == "VALID" else (-(-h // stride), -(-w // stride))
    y = mb.add_tensor([1, oh, ow, 5])
    mb.add_op("CONV_2D", [p, mb.add_tensor([5, k, k, c], data=(rng.standard_normal([5, k, k, c]) / k).astype(np.float32)),
                          mb.add_tensor([5], data=rng.standard_normal([5]).astype(np.float32))], [y],
              dict(padding=padding, stride_w=stride, stride_h=stride, fused_activation="NONE"))
    mb.mark_output(y)
    return mb.build(), inputs


CASES = {
    "c17-2x2-s2": dict(c=17, k=2, stride=2, padding="VALID"),  # hand_recrop's downsampling conv, odd channels
    "c5-3x3-same": dict(c=5, k=3, stride=1, padding="SAME"),   # padding taps: prelu(0) = 0
    "c3-scalar": dict(c=3, k=3, stride=2, padding="SAME", alpha="scalar"),
}


# (case, execution, FP16): each case once, both modes and precisions among
# them (the VM programs they build are shared, so few compile).
RUNS = [("c17-2x2-s2", "persistent", False), ("c5-3x3-same", "stepped", False), ("c3-scalar", "persistent", True),
        ("c17-2x2-s2", "stepped", True)]


@pytest.mark.parametrize("case,execution,fp16", RUNS, ids=[f"{c}-{e}-{'fp16' if h else 'fp32'}" for c, e, h in RUNS])
def test_the_conv_applies_the_alpha_as_it_loads(monkeypatch, case, execution, fp16):
    set_policy(monkeypatch, vm_fine="1")
    model, inputs = _model(**CASES[case])
    assert launches_saved(monkeypatch, HOOK, model, inputs, fp16=fp16, execution=execution) == 1


@pytest.mark.parametrize("why", ["runtime_alpha", "second_reader", "kernel_sets"])
def test_what_stays_a_prelu(monkeypatch, why):
    """A runtime alpha, a PRELU output read elsewhere, and the kernel sets
    (no fine bodies): nothing fuses."""
    options = {"execution": "stepped"}
    if why == "kernel_sets":
        options = {"kernel_set": "gpu"}
    else:
        set_policy(monkeypatch, vm_fine="1")
    kw = {"runtime_alpha": dict(alpha="runtime"), "second_reader": dict(second_reader=True)}.get(why, {})
    model, inputs = _model(17, 2, 2, "VALID", **kw)
    assert launches_saved(monkeypatch, HOOK, model, inputs, **options) == 0
