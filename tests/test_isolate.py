"""tflite_gpu.isolate: a job in a child process; its result, its reported
errors, and a crash attributed to the stage it happened in (the CPU
interpreter: exit 4; the delegate: exit 5, a bug of ours)."""
from __future__ import annotations

import os
import pathlib

import pytest

from tflite_gpu import errors, isolate

SUPPORT = pathlib.Path(__file__).resolve().parent / "support"


@pytest.fixture(autouse=True)
def _jobs_importable(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(SUPPORT), os.environ.get("PYTHONPATH", "")]))


def test_result_and_messages():
    seen = []
    assert isolate.run("isolate_jobs:answer", {"value": 42}, on_message=seen.append) == {"value": 42}
    assert seen == [{"progress": [1, "half way"]}]


def test_reported_error_keeps_its_kind():
    with pytest.raises(isolate.JobError, match="bad thing") as e:
        isolate.run("isolate_jobs:refuse", {"kind": "model", "message": "bad thing"})
    assert e.value.kind == "model"


def test_unexpected_exception_is_internal(capfd):
    with pytest.raises(isolate.JobError, match="KeyError") as e:
        isolate.run("isolate_jobs:broken", {})
    assert e.value.kind == "internal" and "bug in tflite-gpu" in str(e.value)


@pytest.mark.parametrize("phase,sig,kind,code", [
    ("cpu", "SIGSEGV", "cpu-crashed", 4),
    ("cpu:xnnpack", "SIGABRT", "cpu-crashed", 4),
    ("delegate", "SIGSEGV", "delegate-crashed", 5),
    ("delegate:fp16 invoke", "SIGBUS", "delegate-crashed", 5),
    ("done", "SIGSEGV", "internal", 5),
])
def test_crash_is_attributed_to_its_stage(phase, sig, kind, code):
    with pytest.raises(isolate.Crashed) as e:
        isolate.run("isolate_jobs:die", {"phase": phase, "sig": sig})
    assert e.value.phase == phase and e.value.how.startswith(sig)
    err = e.value.cli_error("m.tflite")
    assert isinstance(err, errors.CliError) and err.kind == kind and err.code == code
    assert err.message.startswith("m.tflite: ") and sig in err.message and phase in err.message
