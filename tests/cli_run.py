"""Shared pieces of the CLI tests: the CLI in a subprocess, and its --json
output read strictly (no NaN or Infinity)."""
import json
import os
import subprocess
import sys

import numpy as np


def run_cli(*args, env=None, timeout=600):
    """`python -m tflite_gpu ARGS` with env added to this process's; its
    stderr must hold no Python traceback, whatever the exit code."""
    p = subprocess.run([sys.executable, "-m", "tflite_gpu", *map(str, args)], capture_output=True, text=True,
                       env=dict(os.environ, **(env or {})), timeout=timeout)
    assert "Traceback" not in p.stderr, p.stderr
    return p


def strict_json(text):
    def refuse(name):
        raise AssertionError(f"{name} in JSON output")
    return json.loads(text, parse_constant=refuse)


def tiny_conv_model(path):
    """A one-CONV_2D model (5x5x3 -> 5x5x2, all-ones weights) written to
    path: the smallest model every delegate configuration runs."""
    from tflite_gpu.model_builder import ModelBuilder

    mb = ModelBuilder()
    x = mb.add_input([1, 5, 5, 3])
    w = mb.add_tensor([2, 3, 3, 3], data=np.ones((2, 3, 3, 3), np.float32))
    b = mb.add_tensor([2], data=np.zeros(2, np.float32))
    y = mb.add_tensor([1, 5, 5, 2])
    mb.add_op("CONV_2D", [x, w, b], [y], dict(padding="SAME"))
    mb.mark_output(y)
    path.write_bytes(mb.build())
    return path
