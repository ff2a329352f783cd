"""Short fuzz runs on every test run (about a minute in all); the longer
runs are in README ("Robustness"). Crashing inputs go to
tests/fuzz/regressions/, which test_fuzz_regressions.py replays."""
from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
FUZZ = ROOT / "tests" / "fuzz"
HAS_CLANG = bool(os.environ.get("CLANG") or shutil.which("clang") or shutil.which("clang-15"))


@pytest.mark.skipif(not HAS_CLANG, reason="libFuzzer needs clang (tools/setup.sh installs it)")
def test_option_parser_libfuzzer_short_run(tmp_path):
    subprocess.run([str(FUZZ / "build.sh")], check=True)
    corpus = tmp_path / "corpus"
    shutil.copytree(FUZZ / "corpus" / "options", corpus)
    p = subprocess.run([str(ROOT / "build-fuzz" / "fuzz_options"), "-max_total_time=20", "-max_len=512",
                        f"-artifact_prefix={tmp_path}/", str(corpus)], capture_output=True, text=True, timeout=300)
    crashes = [f.name for f in tmp_path.iterdir() if f.name.startswith(("crash-", "leak-", "timeout-", "oom-"))]
    assert p.returncode == 0 and not crashes, (crashes, p.stderr[-3000:])
    assert "Done" in p.stderr, p.stderr[-2000:]


def test_graph_check_mutation_fuzz_short_run(tmp_path):
    import tflite_gpu
    env = dict(os.environ, TFLITE_GPU_LIBRARY=tflite_gpu.library_path())
    p = subprocess.run([sys.executable, str(FUZZ / "fuzz_graph.py"), "--seconds", "35", "--seed",
                        os.environ.get("TFLITE_GPU_FUZZ_SEED", "1"), "--out", str(tmp_path)],
                       env=env, capture_output=True, text=True, timeout=600)
    summary = json.loads(p.stdout.strip().splitlines()[-1])
    assert not summary["crashes"], summary["crashes"]
    assert p.returncode == 0, p.stderr[-3000:]
    # The run must have reached the delegate with mutants the CPU accepts.
    assert summary["ok"] + summary["gpu-refused"] > 0, summary
