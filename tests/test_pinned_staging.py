"""Pinned host staging (delegate_c/runtime/pinned_staging.c): on GPUs each input
and output goes through a mapped CL_MEM_ALLOC_HOST_PTR buffer, so the
driver's DMA reads and writes it without a pageable bounce. PoCL is a CPU
device, where it is off; policy pinned_staging=1 turns it on here so
the path runs: every output must be the CPU interpreter's on every invoke
(an output copied out of the wrong buffer, or before the wait, shows as
the previous invoke's values), each boundary adds exactly one buffer, and
all of them go with the delegate."""
import gc

import numpy as np
import pytest

import tflite_gpu
from conftest import assert_close, run_cpu, test_options, set_policy
from tflite_gpu import _capi, interpreters
from tflite_gpu.model_builder import ModelBuilder

IMAGE, VECTOR = [2, 5, 7, 3], [1, 17]


def _model(rng):
    """Two inputs, three outputs: an image through a 3x3 conv (converted
    from PHWC4 on the way out), a [1, 17] vector read back from its own
    buffer (executor.c phwc4_is_bhwc), and an int32 ARG_MAX (typed)."""
    mb = ModelBuilder()
    x = mb.add_input(IMAGE)
    v = mb.add_input(VECTOR)
    w = mb.add_tensor([5, 3, 3, 3], data=rng.standard_normal([5, 3, 3, 3]).astype(np.float32) * 0.3)
    b = mb.add_tensor([5], data=rng.standard_normal([5]).astype(np.float32))
    y = mb.add_tensor(IMAGE[:3] + [5])
    mb.add_op("CONV_2D", [x, w, b], [y], dict(padding="SAME", stride_w=1, stride_h=1, fused_activation="RELU"))
    c = mb.add_tensor(VECTOR, data=rng.standard_normal(VECTOR).astype(np.float32))
    s = mb.add_tensor(VECTOR)
    mb.add_op("MUL", [v, c], [s], dict(fused_activation="NONE"))
    t = mb.add_tensor(VECTOR)
    mb.add_op("TANH", [s], [t])
    axis = mb.add_tensor([1], np.int32, data=np.array([3], np.int32))
    a = mb.add_tensor(IMAGE[:3], np.int32)
    mb.add_op("ARG_MAX", [y, axis], [a], dict(output_type="INT32"))
    for out in (y, t, a):
        mb.mark_output(out)
    return mb.build()


def _inputs(rng):
    return [rng.standard_normal(IMAGE).astype(np.float32), rng.standard_normal(VECTOR).astype(np.float32)]


@pytest.mark.parametrize("fp16", [False, True], ids=["fp32", "fp16"])
@pytest.mark.parametrize("kernel_set", ["cpu", "gpu"])
def test_pinned_staging_matches_cpu_on_every_invoke(monkeypatch, kernel_set, fp16):
    rng = np.random.default_rng(28)
    model = _model(rng)
    feeds = [_inputs(rng) for _ in range(3)]
    wants = [run_cpu(model, f) for f in feeds]
    options = test_options(kernel_set=kernel_set)
    if fp16:
        options["is_precision_loss_allowed"] = 1
    gc.collect()
    base = _capi.debug_counters()["live_buffers"]
    live = {}
    for pinned in ("0", "1"):
        set_policy(monkeypatch, pinned_staging=pinned)
        d = tflite_gpu.load_delegate(**options)
        it = interpreters.make(model, delegate=d)
        stats = _capi.delegate_stats(d._get_native_delegate_pointer())
        assert stats["cpu_nodes"] == 0 and stats["partitions"] == 1, stats
        live[pinned] = _capi.debug_counters()["live_buffers"]
        for feed, want in zip(feeds, wants):
            got = interpreters.run(it, feed)
            # FP32: a conv of 27 taps and a tanh, float32 either way;
            # FP16: inputs, weights and results rounded to half (2^-11 each).
            tol = 4e-3 if fp16 else 1e-5
            for g, w in zip(got[:2], want[:2]):
                assert_close(g, w, rtol_l2=tol, atol=tol * max(1.0, float(np.abs(w).max())))
            if not fp16:  # half rounding may flip a near tie
                np.testing.assert_array_equal(got[2], want[2])
        del it, d
        gc.collect()
        assert _capi.debug_counters()["live_buffers"] == base, "a staging buffer outlived its delegate"
    # One pinned buffer per boundary tensor: 2 inputs and 3 outputs.
    assert live["1"] - live["0"] == 5, live
