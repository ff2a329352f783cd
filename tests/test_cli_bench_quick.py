"""bench's short runs and its honesty about them (issue: a CLI that says
what ran): --quick, the warning when a median or p90 rests on fewer than 5
samples, the runtime's XNNPACK INFO line kept out of the progress bar, and
an output file whose folder does not exist refused before anything runs."""
from __future__ import annotations

import json

from cli_run import run_cli, tiny_conv_model
from tflite_gpu import cli, cli_bench

FEW = "rest on 2 timed invoke(s), fewer than 5"
CPU_ONLY = ["--configs", "xnnpack", "--no-progress", "--json", "-"]  # no OpenCL build: quick to run


def _bench(capsys, *args):
    rc = cli.main(["bench", *map(str, args)])
    cap = capsys.readouterr()
    return rc, json.loads(cap.out), cap.err


def test_quick_is_short_and_skips_the_first_result_processes(tmp_path, capsys):
    rc, report, err = _bench(capsys, tiny_conv_model(tmp_path / "conv.tflite"), "--quick", *CPU_ONLY)
    s = report["settings"]
    assert rc == 0 and (s["warmup"], s["iterations"]) == (cli_bench.QUICK_WARMUP, cli_bench.QUICK_ITERATIONS), s
    assert s["first_result"] == [] and s["warm_first_result"] is False
    assert report["models"][0]["configs"]["xnnpack"]["iterations"] == cli_bench.QUICK_ITERATIONS
    assert "fewer than 5" not in err, err  # enough samples for a median and p90
    # --iterations still wins over --quick.
    rc, report, err = _bench(capsys, tmp_path / "conv.tflite", "--quick", "--iterations", "2", *CPU_ONLY)
    assert rc == 0 and report["settings"]["iterations"] == 2


def test_help_points_at_quick():
    p = run_cli("bench", "--help")
    assert p.returncode == 0 and "--quick" in p.stdout and "no time-to-first-result" in " ".join(p.stdout.split())


def test_few_samples_are_warned_about(tmp_path, capsys):
    rc, _, err = _bench(capsys, tiny_conv_model(tmp_path / "conv.tflite"), "--iterations", "2", "--warmup", "0",
                        "--no-first-result", *CPU_ONLY)
    assert rc == 0 and err.count(FEW) == 1 and "CPU XNNPACK" in err, err
    rows = {"models": [{"configs": {"fp32": {"median_ms": 1.0, "iterations": 30}}}]}
    assert cli_bench.few_samples(rows) is None


def test_the_runtime_info_line_stays_out_of_the_progress_bar(tmp_path):
    p = run_cli("bench", tiny_conv_model(tmp_path / "conv.tflite"), "--configs", "xnnpack", "--quick")
    assert p.returncode == 0, p.stderr
    assert "bench:" in p.stderr  # the bar was drawn
    assert "Created TensorFlow Lite XNNPACK delegate" not in p.stderr, p.stderr


def test_an_output_folder_that_does_not_exist_is_refused_first(tmp_path):
    for flag in ("--json", "--markdown"):
        target = tmp_path / "no_such_folder" / "report.out"
        p = run_cli("bench", "nosuch", flag, target, "--no-progress")  # the model is not even looked at
        assert p.returncode == 2, (flag, p.stderr)
        lines = p.stderr.strip().splitlines()
        assert lines == [f"tflite-gpu bench: {flag} {target}: the folder {target.parent} does not exist"], lines
        assert not target.parent.exists()
