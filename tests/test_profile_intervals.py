"""Where a launch's time goes besides its kernel (issue 36, item 1): with
TFLITE_GPU_PROFILE=1 every launch adds its QUEUED->SUBMIT and
SUBMIT->START, and every launch after the first of an invoke its gap
after the one before (START - previous END), to the delegate's profile
(_capi.delegate_launch_intervals); the per-kernel rows stay kernels only."""
from __future__ import annotations

import numpy as np

import tflite_gpu
from tflite_gpu import _capi, interpreters
from tflite_gpu.model_builder import ModelBuilder


def _chain():
    """ADD, MUL, TANH on 1x7x9x5: three launches that depend on each other."""
    mb = ModelBuilder()
    x = mb.add_input([1, 7, 9, 5])
    rng = np.random.default_rng(3)
    a = mb.add_tensor([1, 7, 9, 5], data=rng.standard_normal((1, 7, 9, 5)).astype(np.float32))
    t1, t2, t3 = (mb.add_tensor([1, 7, 9, 5]) for _ in range(3))
    mb.add_op("ADD", [x, a], [t1], dict(fused_activation="NONE"))
    mb.add_op("MUL", [t1, t1], [t2], dict(fused_activation="NONE"))
    mb.add_op("TANH", [t2], [t3])
    mb.mark_output(t3)
    return mb.build(), rng.standard_normal((1, 7, 9, 5)).astype(np.float32)


def test_every_launch_adds_its_intervals(monkeypatch):
    model, x = _chain()
    monkeypatch.setenv("TFLITE_GPU_PROFILE", "1")
    d = tflite_gpu.load_delegate(log_level="silent", kernel_set="cpu")
    it = interpreters.make(model, delegate=d)
    ptr = d._get_native_delegate_pointer()
    before_k = sum(r["calls"] for r in _capi.delegate_profile(ptr))
    before = _capi.delegate_launch_intervals(ptr)
    invokes = 3
    for _ in range(invokes):
        interpreters.run(it, [x])
    rows = _capi.delegate_profile(ptr)
    assert rows and not any(r["kernel"].startswith("@") for r in rows)
    launches = sum(r["calls"] for r in rows) - before_k
    assert launches >= 2 * invokes  # the partition has more than one launch
    after = _capi.delegate_launch_intervals(ptr)
    assert set(after) == {"queued_to_submit", "submit_to_start", "gap"}

    def grew(name):
        return after[name]["count"] - before.get(name, {"count": 0})["count"]

    assert grew("queued_to_submit") == grew("submit_to_start") == launches
    assert grew("gap") == launches - invokes  # the first launch of an invoke has no launch before it
    for v in after.values():
        assert 0 <= v["total_ms"] < 60_000
    del it


def test_no_intervals_without_profiling(monkeypatch):
    model, x = _chain()
    monkeypatch.delenv("TFLITE_GPU_PROFILE", raising=False)
    d = tflite_gpu.load_delegate(log_level="silent")
    it = interpreters.make(model, delegate=d)
    interpreters.run(it, [x])
    ptr = d._get_native_delegate_pointer()
    assert _capi.delegate_launch_intervals(ptr) == {} and _capi.delegate_profile(ptr) == []
    del it
