"""Every input a fuzzer ever crashed on, replayed: model mutants
(tests/fuzz/regressions/models/*.tflite, through the CPU check and the
delegate) and option strings (tests/fuzz/regressions/options/*, through the
same parser entry point the harness calls, via load_delegate)."""
from __future__ import annotations

import pathlib

import numpy as np
import pytest

import tflite_gpu

ROOT = pathlib.Path(__file__).resolve().parent.parent
REG = ROOT / "tests" / "fuzz" / "regressions"
MODELS = sorted((REG / "models").glob("*.tflite"))
OPTIONS = sorted(p for p in (REG / "options").glob("*") if p.is_file() and p.name != "README")


@pytest.mark.parametrize("path", MODELS, ids=[p.name for p in MODELS])
def test_model_regression_input_does_not_crash(path):
    import sys
    sys.path.insert(0, str(ROOT / "tests" / "fuzz"))
    from fuzz_graph import run_one
    delegate = tflite_gpu.load_delegate(log_level="silent")
    assert run_one(path.read_bytes(), delegate, np.random.default_rng(0), None) in ("cpu-refused", "gpu-refused", "ok")


@pytest.mark.parametrize("path", OPTIONS, ids=[p.name for p in OPTIONS])
def test_option_regression_input_is_accepted_or_refused(path):
    opts = {}
    for line in path.read_bytes().decode("utf-8", "replace").split("\n"):
        key, _, value = line.partition("=")
        opts[key] = value
    try:
        tflite_gpu.load_delegate(**opts)
    except ValueError:
        pass
