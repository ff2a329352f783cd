"""tools/cl_grid_barrier.py and opencl_kernels/grid_sync.cl: the persistent
kernel's grid barrier on the OpenCL device here (PoCL in CI), its bound,
its litmus test, and its section in tools/gpu_summary.py."""
import json
import os
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
TOOL = ROOT / "tools" / "cl_grid_barrier.py"
sys.path.insert(0, str(ROOT / "tools"))
import cl_grid_barrier  # noqa: E402

SMALL = ("--phases", "50", "--launches", "20", "--litmus-phases", "12", "--words", "512", "--local-size", "32")


def _run(tmp_path, *args, env=None):
    return subprocess.run([sys.executable, str(TOOL), "--out", str(tmp_path), *args], capture_output=True, text=True,
                          timeout=300, env=env)


def test_groups_tried_run_from_one_to_twice_the_compute_units():
    assert cl_grid_barrier.groups_to_try(1) == [1, 2]
    assert cl_grid_barrier.groups_to_try(2) == [1, 2, 4]
    assert cl_grid_barrier.groups_to_try(132) == [1, 2, 4, 8, 16, 32, 64, 128, 132, 256, 264]


def test_measures_the_barrier_and_passes_the_litmus_test(tmp_path):
    t0 = time.monotonic()
    r = _run(tmp_path, *SMALL)
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads((tmp_path / "barrier.json").read_text())
    cu = doc["compute_units"]
    rows = {x["work_groups"]: x for x in doc["rows"]}
    assert sorted(rows) == cl_grid_barrier.groups_to_try(cu)
    # One group is always resident: every barrier passes, and costs something finite.
    one = rows[1]
    assert one["passed"] and one["arrivals"] == one["expected_arrivals"] == 50
    assert 0 <= one["barrier_device_us"] < 1e5 and 0 <= one["barrier_wall_us"] < 1e5
    for x in doc["rows"]:
        assert x["launch_wall_us"] > 0 and x["start_to_end_us"] >= 0
        # A grid that is not resident hits the bound and aborts, never hangs. (A run that passed saw
        # every arrival; an aborted one may too, when the last group arrived after another gave up.)
        if x["passed"]:
            assert x["arrivals"] == x["expected_arrivals"], x
    # The fence the library would use here read no stale value wherever every barrier passed (a grid
    # of more groups than compute units may abort at its first barrier, having checked nothing).
    passed = [x for x in doc["litmus"] if x["all_barriers_passed"]]
    assert passed and min(x["work_groups"] for x in doc["litmus"]) in {x["work_groups"] for x in passed}
    for x in passed:
        assert x["stale"] == 0, x
        assert x["checked"] == x["work_groups"] * x["phases"] * x["words_per_group"], x
    md = (tmp_path / "barrier.md").read_text()
    assert md in r.stdout and "| 1 | yes |" in md
    # Grids beyond the compute units time out within the bound: the whole run stays short.
    assert time.monotonic() - t0 < 120

    s = subprocess.run([sys.executable, str(ROOT / "tools" / "gpu_summary.py"), str(tmp_path)], capture_output=True,
                       text=True, timeout=60)
    assert "## Grid barrier: " + doc["device"] in s.stdout, s.stdout


def test_the_litmus_test_finds_reads_made_before_the_barrier(tmp_path):
    """With the test hook the litmus kernel reads before the barrier: stale
    values must show, the tool exits 3, and the run's summary says so."""
    env = dict(os.environ, TFLITE_GPU_TEST_LITMUS_READ_EARLY="1")
    r = _run(tmp_path, *SMALL, env=env)
    assert r.returncode == 3, r.stdout + r.stderr
    assert "STALE VALUES" in r.stderr
    doc = json.loads((tmp_path / "barrier.json").read_text())
    assert sum(x["stale"] for x in doc["litmus"]) > 0
    s = subprocess.run([sys.executable, str(ROOT / "tools" / "gpu_summary.py"), str(tmp_path)], capture_output=True,
                       text=True, timeout=60)
    assert s.returncode == 1 and "the litmus test read stale values" in s.stdout


def test_bad_usage_and_a_missing_loader(tmp_path):
    assert _run(tmp_path, "--phases", "0").returncode == 2
    r = subprocess.run([sys.executable, str(TOOL), "--phases", "5"], capture_output=True, text=True, timeout=60,
                       env={"PATH": "/usr/bin:/bin", "TFLITE_GPU_OPENCL_LIBRARY": str(tmp_path / "nope.so")})
    assert r.returncode == 1 and "cl_grid_barrier: " in r.stderr and "Traceback" not in r.stderr
