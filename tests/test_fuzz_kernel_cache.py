"""A short libFuzzer run over the kernel-cache reader kc_parse
(tests/fuzz/fuzz_kernel_cache.c), seeded with valid cache files written by
kc_serialize. TFLITE_GPU_FUZZ_SECONDS (default 20) sets its length; the
deterministic truncation and byte-flip cases are in tests/c/test_kernel_cache.c."""
from __future__ import annotations

import os
import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
HARNESS = ROOT / "tests" / "fuzz" / "fuzz_kernel_cache.c"
CLANG = os.environ.get("CLANG") or shutil.which("clang") or shutil.which("clang-15")
FLAGS = ["-std=c11", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-Werror", "-g", "-O1", "-I", str(ROOT / "delegate_c"),
         "-I", str(ROOT / "delegate_c" / "include")]
SOURCES = [str(HARNESS), str(ROOT / "delegate_c" / "cl" / "kernel_cache.c")]


@pytest.mark.skipif(not CLANG, reason="libFuzzer needs clang (set CLANG=, or apt-get install clang)")
def test_kernel_cache_reader_libfuzzer_short_run(tmp_path):
    seeds, fuzz = tmp_path / "seeds", tmp_path / "fuzz_kernel_cache"
    subprocess.run([CLANG, *FLAGS, "-DKC_FUZZ_WRITE_SEEDS", *SOURCES, "-o", str(seeds)], check=True)
    subprocess.run([CLANG, *FLAGS, "-fsanitize=fuzzer,address,undefined", "-fno-sanitize-recover=undefined",
                    *SOURCES, "-o", str(fuzz)], check=True)
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    subprocess.run([str(seeds), str(corpus)], check=True)
    assert len(list(corpus.iterdir())) == 4
    seconds = int(os.environ.get("TFLITE_GPU_FUZZ_SECONDS", "20"))
    p = subprocess.run([str(fuzz), f"-max_total_time={seconds}", "-max_len=4096", "-seed=1",
                        f"-artifact_prefix={tmp_path}/", str(corpus)],
                       capture_output=True, text=True, timeout=seconds + 120)
    crashes = [f.name for f in tmp_path.iterdir() if f.name.startswith(("crash-", "leak-", "timeout-", "oom-"))]
    assert p.returncode == 0 and not crashes, (crashes, p.stderr[-3000:])
    assert "Done" in p.stderr, p.stderr[-2000:]
