"""tools/cl_launch_cost.py: a bare kernel launch's cost on the OpenCL device
(the floor under the delegate's host time per launch), and its section in
tools/gpu_summary.py."""
import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
TOOL = ROOT / "tools" / "cl_launch_cost.py"


def _run(*args):
    return subprocess.run([sys.executable, str(TOOL), *args], capture_output=True, text=True, timeout=300)


def test_measures_every_mode_on_the_device(tmp_path):
    r = _run("--out", str(tmp_path), "--launches", "20")
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "launch.json").read_text())
    assert doc["device"] and doc["compute_units"] >= 1
    rows = doc["rows"]
    assert [(x["work_groups"], x["mode"]) for x in rows] == [
        (g, m) for g in (1, 2 * doc["compute_units"]) for m in ("queued", "flushed", "synced")]
    for x in rows:
        assert x["work_items"] == 64 * x["work_groups"]
        assert x["launches"] == (20 if x["mode"] != "synced" else 10)
        # wall time covers the enqueue time and the device's work
        assert 0 < x["enqueue_us"] <= x["wall_us"] < 1e6, x
    md = (tmp_path / "launch.md").read_text()
    assert md in r.stdout and "| 1 | synced | 10 |" in md

    # gpu_summary.py shows it as a section of the run's summary
    s = subprocess.run([sys.executable, str(ROOT / "tools" / "gpu_summary.py"), str(tmp_path)], capture_output=True,
                       text=True, timeout=60)
    assert "## Launch cost: " + doc["device"] in s.stdout, s.stdout


def test_bad_usage_and_a_missing_loader(tmp_path):
    assert _run("--launches", "3").returncode == 2
    r = subprocess.run([sys.executable, str(TOOL), "--launches", "10"], capture_output=True, text=True, timeout=60,
                       env={"PATH": "/usr/bin:/bin", "TFLITE_GPU_OPENCL_LIBRARY": str(tmp_path / "nope.so")})
    assert r.returncode == 1 and "cl_launch_cost: " in r.stderr and "Traceback" not in r.stderr
