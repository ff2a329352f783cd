"""Sanitizers and PoCL's other work-group method, on every test run.

* ASan + UBSan: the library built with `make SANITIZE=1` and the test hooks
  (tests/library_builds.py) runs the op (every fifth, spread over every op family: the
  host code they reach is the same per family; TFLITE_GPU_ASAN_OP_TEST_EVERY
  sets the step, 1 runs them all), model, resize, lifetime, fuzz-regression and
  bad-model (size overflow, malformed sparse weights) and check --bisect
  (read-backs, launch groups, the test hooks) tests in a child
  pytest. The sanitizer runtimes are LD_PRELOADed into Python (the
  interpreter is not instrumented, so they must load first); leak detection
  is off (Python and PoCL keep memory alive at exit by design; leaks are
  valgrind's job below); the first error aborts the child.
* valgrind memcheck over create -> apply -> invoke -> destroy cycles: no
  block definitely lost whose allocation stack passes through the library
  (tests/support/valgrind.supp names only PoCL/LLVM/clang frames).
(PoCL's cbs work-group method, which exposes barrier and local-memory bugs,
runs the GPU set's op tests in the portability matrix: tools/matrix.py.)
"""
from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

from library_builds import asan_library

ROOT = pathlib.Path(__file__).resolve().parent.parent
ASAN_SUITES = ["tests/test_ops.py", "tests/test_models.py", "tests/test_resize.py", "tests/test_lifetime.py",
               "tests/test_fuzz_regressions.py", "tests/test_bad_models.py", "tests/test_sparse_mutations.py",
               "tests/test_check_bisect.py",
               # epilogue_args.c's chain buffer: constants, none (it once wrote one float past it), a runtime gate
               *(f"tests/test_fusion_chain.py::test_epilogue_chain_matches_cpu[{c}-False-cpu-5]"
                 for c in ("alphas", "nine", "gate")),
               # vm.c's float copies (an FP16 program with fp16_guard's island) and a second partition on the
               # first one's VM program
               "tests/test_fp16_guard.py::test_in_the_vm_modes_a_float_island_runs_the_float_copies",
               "tests/test_kernel_select.py::test_a_vm_partition_whose_bodies_the_first_holds_builds_no_program",
               # vm.c's group phases (their geometry words, vm_run's __local argument), side by side
               "tests/test_vm_group_bodies.py::test_group_phases_side_by_side"]


def _child_env(**extra):
    """The parent's environment (so the child imports the same tflite_gpu),
    pinned to the library the parent uses unless extra says otherwise."""
    import tflite_gpu
    env = dict(os.environ, TFLITE_GPU_LIBRARY=tflite_gpu.library_path())
    env.update(extra)
    return env


def _pytest(args, env, timeout):
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *args], cwd=ROOT,
                       env=env, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout + p.stderr


def _sanitizer_runtime(name):
    cc = os.environ.get("CC", "gcc")
    path = subprocess.run([cc, f"-print-file-name={name}"], capture_output=True, text=True).stdout.strip()
    assert os.path.isabs(path) and os.path.exists(path), f"{cc} has no {name} (install gcc's sanitizer runtimes)"
    return path


def test_op_and_model_tests_under_asan_and_ubsan():
    # ALLOC_COUNT=1: the lifetime tests' host-allocation check runs under ASan too.
    lib = asan_library()
    preload = " ".join(_sanitizer_runtime(n) for n in ("libasan.so", "libubsan.so"))
    env = _child_env(TFLITE_GPU_LIBRARY=str(lib), LD_PRELOAD=preload,
                     ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:abort_on_error=1:detect_stack_use_after_return=0",
                     UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1",
                     TFLITE_GPU_LIFETIME_CYCLES="20", TFLITE_GPU_SPARSE_SEEDS="4",
                     TFLITE_GPU_OP_TEST_EVERY=os.environ.get("TFLITE_GPU_ASAN_OP_TEST_EVERY", "5"))
    rc, out = _pytest(ASAN_SUITES, env, timeout=1800)
    assert rc == 0, out[-6000:]
    assert "AddressSanitizer" not in out and "runtime error:" not in out, out[-6000:]
    assert re.search(r"\d+ passed", out), out[-2000:]


_ALLOCATORS = re.compile(r"\b(malloc|calloc|realloc|strdup|__wrap_malloc|__wrap_calloc|__wrap_realloc)\b")


def _records_of_ours(log, pattern):
    """valgrind records matching pattern whose culprit frame is ours: the
    first frame of the first stack that is not an allocator (the code that
    allocated a lost block, or that made the bad access). Stacks that merely
    pass through us (ld.so inside dlopen inside the ICD loader) are not."""
    ours = {p.name for p in (ROOT / "delegate_c").rglob("*.c") if p.name != "alloc_count.c"}
    bad = []
    for r in re.split(r"==\d+== \n", log):
        if not re.search(pattern, r):
            continue
        frames = re.findall(r"==\d+==\s+(?:at|by) 0x[0-9A-Fa-f]+: (.*)", r)
        culprit = next((f for f in frames if not _ALLOCATORS.match(f.split(" (")[0])), "")
        if "libgpu_delegate.so" in culprit or any(f"({n}:" in culprit for n in ours):
            bad.append(r)
    return bad


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed (tools/setup.sh installs it)")
def test_valgrind_create_run_destroy_loses_nothing_of_ours(tmp_path):
    log = tmp_path / "memcheck.txt"
    cmd = ["valgrind", "--tool=memcheck", "--leak-check=full", "--show-leak-kinds=definite",
           f"--suppressions={ROOT / 'tests' / 'support' / 'valgrind.supp'}", "--num-callers=40",
           f"--log-file={log}", sys.executable, str(ROOT / "tests" / "support" / "leak_loop.py"), "5",
           str(ROOT / "tests")]
    p = subprocess.run(cmd, cwd=ROOT, env=_child_env(PYTHONMALLOC="malloc"), capture_output=True, text=True,
                       timeout=1800)
    text = log.read_text()
    assert p.returncode == 0 and "LEAK_LOOP_OK" in p.stdout, (p.stdout[-2000:], p.stderr[-2000:], text[-3000:])
    assert "LEAK SUMMARY" in text or "no leaks are possible" in text, text[-3000:]
    bad = _records_of_ours(text, r"definitely lost in loss record")
    assert not bad, "\n".join(bad)[:8000]
    # Invalid accesses and uses of uninitialised values in our frames too.
    invalid = _records_of_ours(text, r"Invalid (read|write|free)|uninitialised value|Mismatched free")
    assert not invalid, "\n".join(invalid)[:8000]
