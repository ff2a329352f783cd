"""Jobs for tests of tflite_gpu.isolate (run as "isolate_jobs:NAME" with
tests/support on PYTHONPATH): a child that dies in a given phase."""
import os
import signal

from tflite_gpu import isolate


def die(phase, sig="SIGSEGV"):
    isolate.phase(phase)
    os.kill(os.getpid(), getattr(signal, sig))


def answer(value):
    isolate.send({"progress": [1, "half way"]})
    return {"value": value}


def refuse(kind, message):
    from tflite_gpu.errors import CliError
    raise CliError(kind, message)


def broken():
    return {}["no such key"]
