"""The library's test builds (ASan, fault injection, allocation counting)
in their own directories beside the checkout: two of them, each with every
test hook, so that CI compiles the library twice for the tests and not
once per hook (an ASan build is 90 CPU-seconds). The hooks do nothing
until a test turns them on. tools/run_tests.sh runs the
two runtimes' passes side by side, and both build the same directories: a
lock per directory makes the second `make` wait for the first (and then
find nothing to do) instead of linking into a half-written one."""
from __future__ import annotations

import fcntl
import pathlib
import shutil
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
        # make does not see its variables change: a directory built with
        # other ones (an older checkout's) starts again from nothing.
        stamp, wanted = build_dir / ".make.vars", " ".join(variables)
        if (stamp.read_text() if stamp.exists() else None) != wanted:
            for p in build_dir.iterdir():
                if p.is_dir():
                    shutil.rmtree(p)
                elif p.name != ".make.lock":
                    p.unlink()
            stamp.write_text(wanted)
        subprocess.run(["make", "-s", "-C", str(ROOT / "delegate_c"), *variables, f"BUILD={build_dir}",
                        f"PYTHON={sys.executable}", "-j2"], check=True, capture_output=capture, text=True)
    return build_dir / "libgpu_delegate.so"


# ASan + UBSan (tests/test_sanitizers.py, tests/test_faults.py).
ASAN_BUILD = ROOT / "build-asan"
ASAN_VARIABLES = ("SANITIZE=1", "ALLOC_COUNT=1", "FAULT_INJECTION=1")
# No sanitizer (tests/test_alloc_count.py, tests/test_cli_rows.py).
HOOKS_BUILD = ROOT / "build-hooks"
HOOKS_VARIABLES = ("ALLOC_COUNT=1", "FAULT_INJECTION=1")


def asan_library():
    return build_library(ASAN_BUILD, *ASAN_VARIABLES)


def hooks_library(capture=False):
    return build_library(HOOKS_BUILD, *HOOKS_VARIABLES, capture=capture)
