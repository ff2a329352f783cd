"""Standalone C unit tests under tests/c/, compiled with sanitizers and run."""
import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
C_TESTS = sorted((ROOT / "tests" / "c").glob("test_*.c"))
# Each C test lists the library sources it needs on its first line, as paths
# from delegate_c/: /* uses: util/log.c cl/target.c */
SANITIZE = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-fno-sanitize-recover=all"]


def _sources(test):
    first = test.read_text().splitlines()[0]
    if "uses:" not in first:
        return []
    names = first.split("uses:", 1)[1].replace("*/", "").split()
    paths = [ROOT / "delegate_c" / n for n in names]  # paths from delegate_c/: "util/log.c"
    missing = [str(p) for p in paths if not p.is_file()]
    assert not missing, f"{test.name} uses sources that do not exist: {missing}"
    return [str(p) for p in paths]


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
@pytest.mark.parametrize("test", C_TESTS, ids=[t.stem for t in C_TESTS])
def test_c_unit(test, tmp_path):
    exe = tmp_path / test.stem
    cmd = ["gcc", "-std=c11", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-Werror", "-g", *SANITIZE,
           "-I", str(ROOT / "delegate_c"), "-I", str(ROOT / "delegate_c" / "include"),
           "-I", str(ROOT / "opencl_kernels"), str(test), *_sources(test), "-o",
           str(exe), "-lm"]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
