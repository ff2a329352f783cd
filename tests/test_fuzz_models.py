"""Model-file fuzzing of the CLI (tests/fuzz/fuzz_models.py): seeded
mutations of MediaPipe models through the verifier and through
`python -m tflite_gpu check --json`; the only acceptable outcomes are a
result, or exit 4 with one strict JSON error and a one-line message.

The short run (every test run, about a minute) uses a fixed seed and fixed
counts, so it sees the same mutants every time. A long run:
TFLITE_GPU_FUZZ_MODELS_SECONDS=1800 [TFLITE_GPU_FUZZ_SEED=7] (each stage
runs that long, on two more models: sparse weights and custom options).
Findings are recipes; keep them in tests/fuzz/regressions/model_mutations.json,
replayed below."""
from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
FUZZ = ROOT / "tests" / "fuzz"
# Mutants that crashed the CLI or the delegate, among them 7 of
# face_detection_full_range_sparse's CSR arrays that the CPU runs and the
# delegate crashed on (exit 5) before DENSIFY was checked when nodes are chosen.
REGRESSIONS = FUZZ / "regressions" / "model_mutations.json"
LONG_MODELS = ("hand_recrop,face_detection_short_range,iris_landmark,face_detection_full_range_sparse,"
               "selfie_segmentation")


def _fuzz(*args, timeout):
    p = subprocess.run([sys.executable, str(FUZZ / "fuzz_models.py"), *args], capture_output=True, text=True,
                       timeout=timeout)
    assert p.stdout.strip(), p.stderr[-3000:]
    return p, json.loads(p.stdout.strip().splitlines()[-1])


def test_model_fuzz_run(tmp_path):
    seconds = os.environ.get("TFLITE_GPU_FUZZ_MODELS_SECONDS")
    seed = os.environ.get("TFLITE_GPU_FUZZ_SEED", "1")
    if seconds:
        args = ["--seconds", seconds, "--models", LONG_MODELS]
        timeout = 2 * float(seconds) + 900
    else:
        args = ["--verifier-mutants", "600", "--cli-mutants", "40"]
        timeout = 900
    p, summary = _fuzz("--seed", seed, "--out", str(tmp_path), *args, timeout=timeout)
    assert not summary["findings"], json.dumps(summary["findings"], indent=1)
    assert p.returncode == 0, p.stderr[-3000:]
    # The run reached both the verifier's refusals and the interpreters.
    assert summary["verifier"]["accepted"] > 0 and summary["verifier"]["rejected"] > 0, summary
    assert summary["cli"].get("clean", 0) > 0 and summary["cli"].get("model", 0) > 0, summary


def test_model_mutation_regressions():
    recipes = json.loads(REGRESSIONS.read_text())
    assert recipes, "no regression recipes"
    p, summary = _fuzz("--replay", str(REGRESSIONS), timeout=900)
    assert not summary["findings"], json.dumps(summary["findings"], indent=1)
    assert p.returncode == 0
