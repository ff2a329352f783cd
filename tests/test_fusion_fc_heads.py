"""FULLY_CONNECTED heads that read one source row in one launch with the GPU
kernel set (fuse_fc_heads.c, fc_gpu.cl's fc_heads_gpu): hand_landmark's
four on its pooled vector. Every case runs with the pass on and off
(TFLITE_GPU_FUSE_FC_HEADS=0) against the CPU interpreter on seeded random
data (tests/fusion_hooks.py, whose tolerance holds: each head's dot
products are fully_connected_gpu's, in the same order)."""
import numpy as np
import pytest

from fusion_hooks import launches_saved
from tflite_gpu.model_builder import ModelBuilder
from conftest import set_policy

HOOK = "TFLITE_GPU_FUSE_FC_HEADS"


def _heads(k, units, acts=None, logistic=(), rows=1, seed=0):
    """x [rows, k] -> one FULLY_CONNECTED per entry of `units` (fused
    activation acts[i]), those in `logistic` followed by a LOGISTIC; every
    head an output."""
    rng = np.random.default_rng(seed)
    mb = ModelBuilder()
    x = mb.add_input([rows, k])
    for i, n in enumerate(units):
        w = mb.add_tensor([n, k], data=(rng.standard_normal([n, k]) / np.sqrt(k)).astype(np.float32))
        b = mb.add_tensor([n], data=rng.standard_normal([n]).astype(np.float32))
        y = mb.add_tensor([rows, n])
        mb.add_op("FULLY_CONNECTED", [x, w, b], [y], dict(fused_activation=(acts or {}).get(i, "NONE")))
        if i in logistic:
            z = mb.add_tensor([rows, n])
            mb.add_op("LOGISTIC", [y], [z])
            y = z
        mb.mark_output(y)
    return mb.build(), [rng.standard_normal([rows, k]).astype(np.float32)]


@pytest.mark.parametrize("fp16", [False, True], ids=["fp32", "fp16"])
@pytest.mark.parametrize("k,units,logistic", [
    (1152, (1, 1, 63, 63), (0, 1)),  # hand_landmark_full's heads
    (37, (3, 17), ()),               # a short row (a group of 16), odd widths
    (300, (5, 1, 4), (2,)),          # a head of exactly one slice between partial ones
])
def test_heads_are_one_launch(monkeypatch, k, units, logistic, fp16):
    model, inputs = _heads(k, units, logistic=logistic, seed=k + len(units))
    assert launches_saved(monkeypatch, HOOK, model, inputs, fp16=fp16, kernel_set="gpu") == len(units) - 1


def test_each_head_keeps_its_activation(monkeypatch):
    model, inputs = _heads(64, (5, 6, 7), acts={0: "RELU", 2: "RELU6"}, logistic=(1,), seed=3)
    assert launches_saved(monkeypatch, HOOK, model, inputs, kernel_set="gpu") == 2


def test_at_most_four_heads_a_launch(monkeypatch):
    """GD_MAX_NODE_OUTPUTS heads a node: six make two launches."""
    model, inputs = _heads(40, (1, 2, 3, 4, 5, 6), seed=4)
    assert launches_saved(monkeypatch, HOOK, model, inputs, kernel_set="gpu") == 4


@pytest.mark.parametrize("rows,units", [(3, (5, 7)), (1, (9,))])
def test_several_rows_or_one_head_stay(monkeypatch, rows, units):
    """Rows past the first (a batch) keep fully_connected_gpu, as does a
    lone head."""
    model, inputs = _heads(33, units, rows=rows, seed=5 + rows)
    assert launches_saved(monkeypatch, HOOK, model, inputs, kernel_set="gpu") == 0


def test_cpu_set_keeps_every_head(monkeypatch):
    model, inputs = _heads(37, (3, 17), seed=6)
    assert launches_saved(monkeypatch, HOOK, model, inputs, kernel_set="cpu") == 0


@pytest.mark.parametrize("k,units", [(1152, (1, 1, 63, 63)), (37, (3, 17))], ids=["hand-landmark", "short-row"])
def test_heads_are_one_phase_in_the_vm_on_a_gpu(monkeypatch, k, units):
    """The VM on a GPU (policy vm_fine=1) runs fc_heads_gpu as a group
    body (test_vm_group_bodies.py), groups of 64 even for a short row: the
    heads are one phase."""
    set_policy(monkeypatch, vm_fine="1")
    model, inputs = _heads(k, units, logistic=(0,), seed=k + 7)
    assert launches_saved(monkeypatch, HOOK, model, inputs, execution="persistent") == len(units) - 1
