"""The VM's profile (TFLITE_GPU_PROFILE=1, delegate_c/vm/vm_profile.c):
stepped, each phase's launch is a row of the kernel whose body it runs;
persistent, one launch runs every phase, so where the GPU has a timer
(NVIDIA) each phase stamps its start and end (vm/vm_run.cl) and its time
goes to its kernel's row, and elsewhere the launch is one row, "vm_run".
PoCL has no timer: the test clock (TFLITE_GPU_TEST_VM_CLOCK=1, every phase
1000 ns) checks the stamps' bookkeeping, per kernel row and per phase
(delegate_phase_times). hand_recrop: every dispatch a phase, so both
modes run the same phases."""
from __future__ import annotations

import pytest

import tflite_gpu
from tflite_gpu import _capi, check, interpreters, models

INVOKES = 3


def _profile(monkeypatch, execution, clock=False, more=None):
    """{kernel: (calls, total ms)} and how the last invoke ran, over INVOKES
    invokes; more: a dict that gets the delegate's phases, phase times and
    fused nodes."""
    monkeypatch.setenv("TFLITE_GPU_PROFILE", "1")
    if clock:
        monkeypatch.setenv("TFLITE_GPU_TEST_VM_CLOCK", "1")
    path = models.fetch_models(["hand_recrop"], progress=False)["hand_recrop"]
    d = tflite_gpu.load_delegate(log_level="silent", execution=execution)
    it = interpreters.make(str(path), delegate=d)
    x = check.random_inputs(it.get_input_details(), 5)
    for _ in range(INVOKES):
        interpreters.run(it, x)
    ptr = d._get_native_delegate_pointer()
    rows = {r["kernel"]: (r["calls"], r["total_ms"]) for r in _capi.delegate_profile(ptr)}
    (run,) = _capi.delegate_runs(ptr)
    (part,) = _capi.delegate_partitions(ptr)
    if more is not None:
        more.update(phases=_capi.delegate_phases(ptr), times=_capi.delegate_phase_times(ptr),
                    groups=_capi.delegate_groups(ptr))
    del it
    return rows, run, part


def test_stepped_rows_are_the_phases_kernels(monkeypatch):
    rows, run, part = _profile(monkeypatch, "stepped")
    assert run["execution"] == "stepped" and run["launches"] == part["dispatches"], run
    assert sum(c for c, _ in rows.values()) == INVOKES * part["dispatches"], rows
    assert "vm_run" not in rows and all(ms > 0 for _, ms in rows.values()), rows


def test_persistent_without_a_timer_is_one_row(monkeypatch):
    rows, run, _ = _profile(monkeypatch, "persistent")
    if run["execution"] != "persistent":
        pytest.skip(f"persistent fell back here: {run['fallback']}")
    assert list(rows) == ["vm_run"] and rows["vm_run"][0] == INVOKES, rows


def test_persistent_stamps_give_each_phase_to_its_kernel(monkeypatch):
    stepped, _, part = _profile(monkeypatch, "stepped")
    rows, run, _ = _profile(monkeypatch, "persistent", clock=True)
    if run["execution"] != "persistent":
        pytest.skip(f"persistent fell back here: {run['fallback']}")
    # The same phases as stepped's launches, kernel for kernel, each 1000 ns of the test clock.
    assert {k: c for k, (c, _) in rows.items()} == {k: c for k, (c, _) in stepped.items()}, (rows, stepped)
    for kernel, (calls, ms) in rows.items():
        assert ms == pytest.approx(calls * 0.001), (kernel, calls, ms)
    assert sum(c for c, _ in rows.values()) == INVOKES * part["dispatches"]


def test_persistent_stamps_give_each_phase_its_time(monkeypatch):
    """Per phase: its time over the profiled invokes (1000 ns each of the
    test clock), in delegate_phases' order, and its fused node, which
    delegate_groups names; without a timer: no times."""
    more = {}
    _, run, part = _profile(monkeypatch, "persistent", clock=True, more=more)
    if run["execution"] != "persistent":
        pytest.skip(f"persistent fell back here: {run['fallback']}")
    phases, times = more["phases"], more["times"]
    assert len(phases) == part["dispatches"] and set(times) == {(0, k) for k in range(len(phases))}, times
    for t in times.values():
        assert t["invokes"] == INVOKES and t["total_ms"] == pytest.approx(INVOKES * 0.001), t
    nodes = {g["node"]: g for g in more["groups"]}
    for ph in phases:
        assert ph["node"] == -1 or ph["kernel"] in nodes[ph["node"]]["kernels"], (ph, nodes.get(ph["node"]))
    assert sum(ph["node"] >= 0 for ph in phases) >= len(phases) - 2, phases  # conversions at most at the ends
    monkeypatch.delenv("TFLITE_GPU_TEST_VM_CLOCK")
    more = {}
    _profile(monkeypatch, "persistent", more=more)  # profiled, but PoCL has no timer
    assert more["times"] == {} and len(more["phases"]) == len(phases)
