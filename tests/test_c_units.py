"""Standalone C unit tests under tests/c/, compiled with sanitizers and run."""
import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
C_TESTS = sorted((ROOT / "tests" / "c").glob("test_*.c"))
# Each C test lists the library sources it needs on its first line: /* uses: a.c b.c */
SANITIZE = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-fno-sanitize-recover=all"]


def _sources(test):
    first = test.read_text().splitlines()[0]
    if "uses:" not in first:
        return []
    names = first.split("uses:", 1)[1].replace("*/", "").split()
    return [str(ROOT / "delegate_c" / n) for n in names]


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
@pytest.mark.parametrize("test", C_TESTS, ids=[t.stem for t in C_TESTS])
def test_c_unit(test, tmp_path):
    exe = tmp_path / test.stem
    cmd = ["gcc", "-std=c11", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-Werror", "-g", *SANITIZE,
           "-I", str(ROOT / "delegate_c"), "-I", str(ROOT / "opencl_kernels"), str(test), *_sources(test), "-o",
           str(exe), "-lm"]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
