"""The host-allocation counter, a test hook kept out of release builds.

Release builds (the Makefile's and CMake's defaults, so `pip install .`)
leave malloc alone and report the count as absent (None), never as a
silent zero. `make ALLOC_COUNT=1` links alloc_count.c, which wraps
malloc/calloc/realloc; this builds such a library (tests/library_builds.py) and
runs the counter's assertions (tests/test_lifetime.py: no host allocation
per invoke after warm-up) against it in a child pytest, where they must
not skip."""
from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

from tflite_gpu import _capi
from library_builds import hooks_library

ROOT = pathlib.Path(__file__).resolve().parent.parent
COUNTED_TESTS = ["tests/test_lifetime.py::test_no_host_allocation_per_invoke"]


def _defined_symbols(lib):
    out = subprocess.run(["nm", "--defined-only", str(lib)], capture_output=True, text=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


def _build_counting_library():
    return hooks_library(capture=True)


def test_counting_build_passes_the_allocation_tests():
    lib = _build_counting_library()
    assert "__wrap_malloc" in _defined_symbols(lib)
    env = dict(os.environ, TFLITE_GPU_LIBRARY=str(lib), TFLITE_GPU_REQUIRE_ALLOC_COUNT="1")
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *COUNTED_TESTS],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    out = p.stdout + p.stderr
    assert p.returncode == 0, out[-6000:]
    assert re.search(rf"\b{len(COUNTED_TESTS)} passed", out) and "skipped" not in out, out[-3000:]


def test_library_in_use_reports_whether_it_counts():
    """The library the suite runs (a release build unless $TFLITE_GPU_LIBRARY
    names another) says None without the wrapper and a count with it."""
    counted = "__wrap_malloc" in _defined_symbols(_capi.library_path())
    host = _capi.debug_counters()["host_allocations"]
    if counted:
        assert isinstance(host, int) and host >= 0, host
    else:
        assert host is None, host
