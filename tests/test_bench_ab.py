"""tools/bench_ab.py, the A/B the project judges a change by: each model's
B / A, the worst model beside the geomean, and --gate, which fails only
when a model is more than 5% slower in every one of (at least) two runs.

The gate's rule is tested on made-up runs (a timed test of a pass would
fail on a noisy machine); its failing mode end to end on a real slowdown
planted through a test hook: B built with -cl-opt-disable
(TFLITE_GPU_TEST_OPT_DISABLE=1), which made hand_recrop 3-5x slower on
PoCL, far past any noise."""
from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import pytest

import tflite_gpu
from tflite_gpu import models

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import bench_ab  # noqa: E402


def _run(**ratios):
    """A run where model m's B / A is ratios[m] (A 1 ms, XNNPACK 0.5 ms)."""
    return {m: {"xnnpack": 0.5, "A": 1.0, "B": r} for m, r in ratios.items()}


def test_the_worst_model_is_named_beside_the_geomean():
    run = _run(a=0.80, b=1.20, c=0.95)
    s = bench_ab.summary(run)
    assert s["worst"] == ("b", 1.20)
    assert s["b_a"] == pytest.approx((0.80 * 1.20 * 0.95) ** (1 / 3))
    assert "worst: b B/A 1.200" in bench_ab.summary_line(run)


def test_a_model_slower_in_one_run_only_passes():
    ok, text = bench_ab.gate_verdict([_run(a=1.30, b=1.00), _run(a=0.99, b=1.04)], 0.05)
    assert ok, text
    assert "closest: b" in text  # b is 1.00 and 1.04: the nearest to failing in both


def test_a_model_slower_in_both_runs_fails_and_is_named():
    ok, text = bench_ab.gate_verdict([_run(a=1.00, b=1.06), _run(a=1.30, b=1.08)], 0.05)
    assert not ok
    assert "FAIL" in text and "b (B/A 1.060, 1.080)" in text and "a (" not in text


def test_the_tolerance_is_a_strict_bound():
    assert bench_ab.gate_verdict([_run(a=1.05), _run(a=1.05)], 0.05)[0]
    assert not bench_ab.gate_verdict([_run(a=1.051), _run(a=1.051)], 0.05)[0]
    assert bench_ab.slower_in_every_run([_run(a=1.2), _run(a=1.2), _run(a=1.0)], 0.05) == []


def test_the_markdown_table_has_each_run_and_the_worst():
    text = bench_ab.markdown([_run(a=0.9, b=1.1), _run(a=1.0, b=1.2)], "old", "new")
    assert "| model | XNNPACK (ms, run 1) | old (ms, run 1) | new (ms, run 1) | B / A (run 1) |" in text
    assert "| b | 0.50 | 1.00 | 1.10 | 1.100 | 0.50 | 1.00 | 1.20 | 1.200 |" in text
    assert "| **worst** |  |  | b | **1.100** |  |  | b | **1.200** |" in text


@pytest.mark.parametrize("argv,words", [
    (["--gate", "--rounds", "3"], "--gate needs at least 2 runs of 7 rounds"),
    (["--gate", "--runs", "1"], "--gate needs at least 2 runs of 7 rounds"),
    (["--json", "/no/such/folder/ab.json"], "folder /no/such/folder does not exist"),
])
def test_bad_usage_is_refused_before_anything_runs(argv, words, capsys):
    lib = tflite_gpu.library_path()
    with pytest.raises(SystemExit) as e:
        bench_ab.main(["--a", lib, "--b", lib, *argv, "hand_recrop"])
    assert e.value.code == 2 or words in str(e.value.code)
    assert words in capsys.readouterr().err + str(e.value.code)


def test_the_gate_fails_on_a_planted_slowdown(tmp_path):
    models.fetch_models(["hand_recrop"], progress=False)
    lib = tflite_gpu.library_path()
    out = tmp_path / "ab.json"
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "bench_ab.py"), "--a", lib, "--b", lib,
                        "--env-a", "TFLITE_GPU_TEST_OPT_DISABLE=0", "--env-b", "TFLITE_GPU_TEST_OPT_DISABLE=1",
                        "--gate", "--iterations", "2", "--json", str(out), "hand_recrop"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "gate: FAIL: 1 model(s) more than 5% slower in all 2 runs: hand_recrop" in r.stdout, r.stdout
    assert r.stdout.count("worst: hand_recrop") == 2, r.stdout
    data = json.loads(out.read_text())
    assert len(data["runs"]) == 2 and data["gate"]["ok"] is False and data["rounds"] == 7
    assert all(run["hand_recrop"]["B"] > 1.05 * run["hand_recrop"]["A"] for run in data["runs"])
