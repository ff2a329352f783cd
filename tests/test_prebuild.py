"""The policy's build_threads=N (cl_program.c gpu_device_prebuild): a
partition's programs compiled on N threads at once before its kernels are
made. The same programs as one at a time, each built once, results right.
(Whether it shortens the first result is the driver's: PoCL and Intel's CPU
runtime compile one program at a time whatever the threads.)"""
import re

import pytest

from cli_run import run_cli, strict_json


def _builds(threads):
    p = run_cli("check", "face_detection_short_range", "--no-cache", "--json", "--opt", "kernel_set=cpu",
                env={"TFLITE_GPU_BUILD_LOG": "1", "TFLITE_GPU_POLICY": f"build_threads={threads}"})
    assert p.returncode == 0, p.stderr[-3000:]
    assert strict_json(p.stdout)[0]["passed"]
    return re.findall(r"tflite-gpu build (\S+ \[[^\]]*\])", p.stderr)


@pytest.mark.parametrize("threads", [4])
def test_programs_built_on_threads_are_the_ones_built_in_turn(threads):
    alone, together = _builds(1), _builds(threads)
    assert len(alone) >= 3, alone  # more than one program to build at once
    assert sorted(together) == sorted(alone) and len(set(together)) == len(together), (alone, together)
