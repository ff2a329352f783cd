"""Threads and lifetime: interpreters with their own delegates invoking at
once, invokes from another thread, one delegate shared by two interpreters,
create/apply/invoke/destroy cycles without leaks (resident memory and live
OpenCL objects, counted by the library's own test hooks), both destruction
orders, and no host allocation per invoke after warm-up."""
from __future__ import annotations

import gc
import os
import threading

import numpy as np
import pytest

import tflite_gpu
from tflite_gpu import _capi
from tflite_gpu.model_builder import ModelBuilder

from conftest import assert_close
from test_resize import C_IN, _chain_model, _interp, _run

SHAPE = [1, 9, 7, C_IN]
# 300 by default (each cycle builds its programs again: about 45 s on PoCL on
# 2 cores); with the 5 MiB bound below a leak of 17 KiB a cycle fails it, and
# the live OpenCL object count catches a single leaked object.
# TFLITE_GPU_LIFETIME_CYCLES=N for a longer (or a quick local) run.
CYCLES = int(os.environ.get("TFLITE_GPU_LIFETIME_CYCLES", "300"))
# Under AddressSanitizer freed blocks sit in its quarantine (256 MiB by
# default) instead of being reused, so resident memory grows by design;
# there the CL object counts are the leak check, and valgrind's run is the
# byte-level one.
UNDER_ASAN = "libasan" in os.environ.get("LD_PRELOAD", "")
MODEL = _chain_model()


def _inputs(n):
    rng = np.random.default_rng(21)
    return [rng.uniform(-1, 1, SHAPE).astype(np.float32) for _ in range(n)]


def _reference(xs):
    cpu = _interp(MODEL)
    cpu.allocate_tensors()
    return [_run(cpu, x) for x in xs]


def _gpu(delegate=None):
    it = _interp(MODEL, delegate or tflite_gpu.load_delegate(log_level="silent"))
    it.allocate_tensors()
    return it


def _assert_all_close(got, want):
    for g, e in zip(got, want):
        assert_close(g, e)


def _run_threads(targets):
    errors = []

    def wrap(fn):
        def body():
            try:
                fn()
            except BaseException as e:  # reported in the main thread
                errors.append(e)
        return body

    threads = [threading.Thread(target=wrap(t)) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def test_eight_threads_each_with_its_own_delegate():
    xs = _inputs(8)
    want = _reference(xs)
    interpreters = [_gpu() for _ in range(8)]
    start = threading.Barrier(8)

    def worker(i):
        def body():
            start.wait()  # all invoke at once
            for _ in range(5):
                _assert_all_close(_run(interpreters[i], xs[i]), want[i])
        return body

    _run_threads([worker(i) for i in range(8)])


def test_invoke_from_a_thread_other_than_the_creating_one():
    xs = _inputs(2)
    want = _reference(xs)
    it = _gpu()
    _run_threads([lambda: _assert_all_close(_run(it, xs[0]), want[0])])
    _assert_all_close(_run(it, xs[1]), want[1])  # and back on the creating thread


def test_one_delegate_shared_by_two_interpreters():
    """Supported: each partition kernel owns its plan and buffers; the
    delegate's device (context, queue, programs) is shared and its mutex
    serialises the queue."""
    xs = _inputs(4)
    want = _reference(xs)
    delegate = tflite_gpu.load_delegate(log_level="silent")
    a, b = _gpu(delegate), _gpu(delegate)
    _assert_all_close(_run(a, xs[0]), want[0])
    _assert_all_close(_run(b, xs[1]), want[1])

    def loop(it, i):
        def body():
            for _ in range(5):
                _assert_all_close(_run(it, xs[i]), want[i])
        return body

    _run_threads([loop(a, 2), loop(b, 3)])
    del a
    gc.collect()
    _assert_all_close(_run(b, xs[0]), want[0])  # the survivor is unaffected


def _rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def _small_model():
    """ADD of a constant then RELU6: two kernel files, so a cycle costs
    what PoCL's (cached) program builds cost, about 25 ms."""
    rng = np.random.default_rng(2)
    mb = ModelBuilder()
    x = mb.add_input([1, 5, 7, 3])
    mid, out = mb.add_tensor([1, 5, 7, 3]), mb.add_tensor([1, 5, 7, 3])
    mb.add_op("ADD", [x, mb.add_tensor([3], data=rng.standard_normal(3, dtype=np.float32))], [mid],
              dict(fused_activation="NONE"))
    mb.add_op("RELU6", [mid], [out])
    mb.mark_output(out)
    return mb.build()


def test_create_apply_invoke_destroy_cycles_leak_nothing():
    model = _small_model()
    x = np.random.default_rng(4).uniform(-4, 8, [1, 5, 7, 3]).astype(np.float32)
    cpu = _interp(model)
    cpu.allocate_tensors()
    want = _run(cpu, x)
    live_before = _capi.live_cl_objects()

    def cycle(check):
        delegate = tflite_gpu.load_delegate(log_level="silent")
        it = _interp(model, delegate)
        it.allocate_tensors()
        got = _run(it, x)
        if check:
            _assert_all_close(got, want)
        del it, delegate

    for i in range(30):  # warm-up: allocator pools, PoCL's caches
        cycle(i == 0)
    gc.collect()
    rss0 = _rss_kib()
    for i in range(CYCLES):
        cycle(i % 100 == 0)
    gc.collect()
    growth = _rss_kib() - rss0
    if not UNDER_ASAN:
        assert growth < 5 * 1024, f"resident memory grew {growth} KiB over {CYCLES} cycles"
    assert _capi.live_cl_objects() == live_before, _capi.debug_counters()


def _counters_around_invokes():
    """Debug counters before and after 20 invokes that follow a warm-up."""
    xs = _inputs(2)
    want = _reference(xs)
    it = _gpu()
    for _ in range(3):  # warm-up
        _run(it, xs[0])
    before = _capi.debug_counters()
    for i in range(20):
        it.set_tensor(it.get_input_details()[0]["index"], xs[i % 2])
        it.invoke()
    after = _capi.debug_counters()
    _assert_all_close([it.get_tensor(d["index"]) for d in it.get_output_details()], want[1])
    return before, after


def test_no_opencl_object_per_invoke():
    before, after = _counters_around_invokes()
    live = [sum(v for k, v in c.items() if k.startswith("live_")) for c in (before, after)]
    assert live[1] == live[0], (before, after)


# tests/test_alloc_count.py runs the test below against a counting build
# (make ALLOC_COUNT=1) and sets this, so that there it cannot skip.
REQUIRE_ALLOC_COUNT = os.environ.get("TFLITE_GPU_REQUIRE_ALLOC_COUNT") == "1"


def test_no_host_allocation_per_invoke():
    if _capi.debug_counters()["host_allocations"] is None:
        assert not REQUIRE_ALLOC_COUNT, "TFLITE_GPU_REQUIRE_ALLOC_COUNT=1 but the library does not count allocations"
        pytest.skip("the library does not count host allocations (release build): "
                    "tests/test_alloc_count.py runs this against a make ALLOC_COUNT=1 build")
    before, after = _counters_around_invokes()
    assert after["host_allocations"] == before["host_allocations"], (before, after)


def test_interpreter_destroyed_before_the_delegate():
    live_before = _capi.live_cl_objects()
    delegate = tflite_gpu.load_delegate(log_level="silent")
    it = _gpu(delegate)
    _run(it, _inputs(1)[0])
    del it
    gc.collect()
    del delegate
    gc.collect()
    assert _capi.live_cl_objects() == live_before


class _CDelegate:
    """A delegate made with the C API (TfLiteGpuDelegateV2Create), so the
    test decides when TfLiteGpuDelegateV2Delete runs."""

    def __init__(self):
        self.ptr = _capi.lib().TfLiteGpuDelegateV2Create(_capi.ffi.NULL)
        assert self.ptr != _capi.ffi.NULL

    def _get_native_delegate_pointer(self):
        return int(_capi.ffi.cast("uintptr_t", self.ptr))

    def delete(self):
        _capi.lib().TfLiteGpuDelegateV2Delete(self.ptr)


def test_delegate_deleted_before_the_interpreter_is_safe():
    """The partition kernels hold their own reference to the device, so the
    interpreter keeps working (and re-planning) after the delegate is gone;
    its destruction then releases everything."""
    xs = _inputs(2)
    want = _reference(xs)
    live_before = _capi.live_cl_objects()
    delegate = _CDelegate()
    it = _interp(MODEL, delegate)
    it.allocate_tensors()
    _assert_all_close(_run(it, xs[0]), want[0])
    delegate.delete()
    _assert_all_close(_run(it, xs[1]), want[1])
    it.resize_tensor_input(it.get_input_details()[0]["index"], [2] + SHAPE[1:])
    it.allocate_tensors()
    x2 = np.concatenate(xs)
    cpu = _interp(MODEL)
    cpu.resize_tensor_input(cpu.get_input_details()[0]["index"], [2] + SHAPE[1:])
    cpu.allocate_tensors()
    _assert_all_close(_run(it, x2), _run(cpu, x2))
    del it
    gc.collect()
    assert _capi.live_cl_objects() == live_before
