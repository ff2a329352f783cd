"""OpenCL faults: with the library built with make FAULT_INJECTION=1, the Nth
call of each kind (context/queue creation, program build, buffer
allocation, kernel enqueue, data transfer) fails in turn. Creating the
delegate then fails with ValueError (load_delegate); applying it to a model
fails the interpreter's construction (the runtime restores its CPU graph and
raises RuntimeError with our message); an invoke fails with RuntimeError
naming the op and kernel; a failed build prints its build log; nothing
leaks and the process stays healthy (a fresh delegate afterwards matches
the CPU). Runs in a subprocess (tests/support/fault_child.py) against a
build with both FAULT_INJECTION=1 and SANITIZE=1."""
from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

from library_builds import asan_library

ROOT = pathlib.Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def fault_run():
    from test_sanitizers import _sanitizer_runtime
    # The ASan/UBSan build: every error path is checked for memory errors too.
    env = dict(os.environ, TFLITE_GPU_LIBRARY=str(asan_library()),
               LD_PRELOAD=" ".join(_sanitizer_runtime(n) for n in ("libasan.so", "libubsan.so")),
               ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:abort_on_error=1",
               UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1")
    p = subprocess.run([sys.executable, str(ROOT / "tests" / "support" / "fault_child.py"), str(ROOT / "tests")],
                       env=env, capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr[-4000:]
    return json.loads(p.stdout.strip().splitlines()[-1]), p.stderr


def _failures(records):
    return [r for r in records if r["stage"] != "none"]


def test_the_library_has_the_switch(fault_run):
    assert fault_run[0]["fault_injection"] == 1


@pytest.mark.parametrize("kind", ["create", "build", "alloc", "enqueue", "transfer"])
def test_every_fault_is_a_clean_error_and_the_process_stays_healthy(fault_run, kind):
    records = fault_run[0][kind]
    assert records[-1]["stage"] == "none" and records[-1]["ok"], records[-1]  # ran out of faults: correct
    fails = _failures(records)
    assert fails, f"no {kind} call was ever made"
    for r in records:
        assert r.get("healthy_after", True), r
    for r in fails:
        if r["stage"] == "create":
            assert r["type"] == "ValueError", r
        elif r["stage"] == "apply":
            assert r["type"] == "RuntimeError" and "TfLiteGpuDelegate Init" in r["msg"], r
        else:
            assert r["stage"] == "invoke" and r["type"] == "RuntimeError", r
            assert "TfLiteGpuDelegate Invoke" in r["msg"], r


def test_invoke_faults_name_the_op_and_kernel(fault_run):
    fails = _failures(fault_run[0]["enqueue"])
    assert all(r["stage"] == "invoke" for r in fails)
    msgs = " | ".join(r["msg"] for r in fails)
    assert "enqueueing kernel conv2d" in msgs and "for CONV_2D (node" in msgs, msgs
    assert "for boundary" in msgs  # the layout conversions at the partition's edges
    transfer = [r["msg"] for r in _failures(fault_run[0]["transfer"])]
    assert any("writing input" in m for m in transfer) and any("reading output" in m for m in transfer), transfer


def test_a_failed_build_prints_its_build_log(fault_run):
    stderr = fault_run[1]
    # The whole log on stderr, and the compiler's first errors in the message.
    assert "tflite-gpu: build log of " in stderr and "injected_fault_unknown_type" in stderr, stderr[-3000:]
    assert "first errors: " in stderr and "rejected kernel file" in stderr, stderr[-3000:]


def test_no_opencl_object_leaks_on_error_paths(fault_run):
    assert fault_run[0]["live_leaked"] == 0
