"""Shared pieces of the CLI tests: the CLI in a subprocess, and its --json
output read strictly (no NaN or Infinity)."""
import json
import os
import subprocess
import sys


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
