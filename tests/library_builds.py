"""The library's test builds (ASan, fault injection, allocation counting)
in their own directories beside the checkout. tools/run_tests.sh runs the
two runtimes' passes side by side, and both build the same directories: a
lock per directory makes the second `make` wait for the first (and then
find nothing to do) instead of linking into a half-written one."""
from __future__ import annotations

import fcntl
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def build_library(build_dir, *variables, capture=False):
    """make -C delegate_c BUILD=build_dir VARIABLES..., one make at a time
    per directory; returns build_dir/libgpu_delegate.so."""
    build_dir = pathlib.Path(build_dir)
    build_dir.mkdir(parents=True, exist_ok=True)
    with open(build_dir / ".make.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        subprocess.run(["make", "-s", "-C", str(ROOT / "delegate_c"), *variables, f"BUILD={build_dir}",
                        f"PYTHON={sys.executable}", "-j2"], check=True, capture_output=capture, text=True)
    return build_dir / "libgpu_delegate.so"
