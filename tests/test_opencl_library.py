"""TFLITE_GPU_OPENCL_LIBRARY names the only OpenCL library tried (issue 13):
one that cannot be loaded, or is not an OpenCL loader, fails with an error
naming it, never a silent fall back to the system's loader."""
from __future__ import annotations

import ctypes.util
import os
import subprocess
import sys

import pytest

import tflite_gpu

CODE = ("import tflite_gpu\n"
        "try:\n"
        "    tflite_gpu.load_delegate(log_level='silent')\n"
        "    print('LOADED')\n"
        "except ValueError as e:\n"
        "    print('VALUE_ERROR', e)\n")


def _load_with(library):
    env = dict(os.environ, TFLITE_GPU_LIBRARY=tflite_gpu.library_path(), TFLITE_GPU_OPENCL_LIBRARY=library)
    r = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_nonexistent_library_is_named():
    out = _load_with("/nonexistent/libOpenCL.so")
    assert "VALUE_ERROR" in out, out
    assert "TFLITE_GPU_OPENCL_LIBRARY=/nonexistent/libOpenCL.so could not be loaded" in out, out
    assert "No such file" in out, out


def test_file_that_is_not_a_library_is_named(tmp_path):
    fake = tmp_path / "libOpenCL.so"
    fake.write_text("not an ELF file")
    out = _load_with(str(fake))
    assert f"TFLITE_GPU_OPENCL_LIBRARY={fake} could not be loaded" in out, out


@pytest.mark.skipif(ctypes.util.find_library("m") is None, reason="no libm to stand in for a non-OpenCL library")
def test_library_without_opencl_symbols_is_named():
    libm = ctypes.util.find_library("m")
    out = _load_with(libm)
    assert f"TFLITE_GPU_OPENCL_LIBRARY={libm}: OpenCL library lacks the symbol clGetPlatformIDs" in out, out
