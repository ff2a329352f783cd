"""Run a job in a child Python process, so that a crash in native code (the
stock interpreter's kernels, or the delegate) is reported, not inherited.

    result = isolate.run("check", {...}, on_message=...)

The child (python -m tflite_gpu.isolate JOB) reads its arguments as JSON on
stdin and sends JSON lines back on a pipe: {"phase": name} before each
stage (so a crash can be attributed: the CPU interpreter or the delegate),
anything else the job sends (progress), and finally {"result": ...} or
{"error": {"kind", "message"}}. Its stdout goes to the parent's stderr, so
the parent's stdout stays clean for --json. When the child dies without a
result, run() raises Crashed with the signal and the last phase.

Inside a job, phase() and send() talk to the parent; in any other process
they do nothing, so library code can call them unconditionally.
"""
from __future__ import annotations

import importlib
import json
import os
import pathlib
import signal
import subprocess
import sys
import traceback

_FD_ENV = "TFLITE_GPU_ISOLATE_FD"
JOBS = {
    "check": "tflite_gpu.check:isolated_check",
    "explain": "tflite_gpu.explain:isolated_explain",
    "tune": "tflite_gpu.cli_tune:isolated_tune",
    "bench_model": "tflite_gpu.bench:isolated_bench_model",
}
_channel = None


class Crashed(Exception):
    """The child died without a result. Phases are named "cpu..." while the
    stock CPU interpreter works and "delegate..." while the delegate does."""

    def __init__(self, phase: str | None, returncode: int):
        self.phase, self.returncode = phase, returncode
        super().__init__(f"{self.how} (while {phase or 'starting'})")

    @property
    def culprit(self):
        """"cpu", "delegate" or None (neither was running)."""
        head = (self.phase or "").split(":")[0]
        return head if head in ("cpu", "delegate") else None

    def cli_error(self, shown: str):
        """The errors.CliError that reports this crash for the model `shown`."""
        from .errors import CliError

        stage = f"stage: {self.phase}"
        if self.culprit == "cpu":
            return CliError("cpu-crashed", f"{shown}: the CPU interpreter crashed on this model: {self.how} ({stage}); "
                                           "the model is malformed in a way the verifier does not catch")
        if self.culprit == "delegate":
            return CliError("delegate-crashed", f"{shown}: the delegate crashed on this model: {self.how} ({stage}); "
                                                "this is a bug in tflite-gpu, please report it with the model")
        return CliError("internal", f"{shown}: the worker process died: {self.how} ({stage if self.phase else ''}"
                                    f"{'' if self.phase else 'while starting'}); this is a bug in tflite-gpu")

    @property
    def how(self) -> str:
        rc = self.returncode
        if rc < 0:
            try:
                name = signal.Signals(-rc).name
            except ValueError:
                name = f"signal {-rc}"
            return name + (" (killed: out of memory?)" if -rc == signal.SIGKILL else "")
        return f"exited with status {rc} without a result"


class JobError(Exception):
    """An error the job reported: its kind (errors.KINDS) and message."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


def send(message: dict) -> None:
    if _channel is not None:
        _channel.write(json.dumps(message) + "\n")
        _channel.flush()


def phase(name: str) -> None:
    send({"phase": name})


def child_env(extra: dict | None = None) -> dict:
    """The environment of a child: this package and this very library."""
    from ._library import library_path

    env = dict(os.environ)
    pkg_parent = str(pathlib.Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (pkg_parent, env.get("PYTHONPATH", "")) if p)
    env["TFLITE_GPU_LIBRARY"] = library_path()
    env.update(extra or {})
    return env


def run(job: str, args: dict, on_message=None):
    """The job's result (job: a name in JOBS, or "module:function", called
    with args as keyword arguments); JobError for an error it reported,
    Crashed when the child died without a result."""
    read_fd, write_fd = os.pipe()
    env = child_env({_FD_ENV: str(write_fd)})
    try:
        child = subprocess.Popen([sys.executable, "-m", "tflite_gpu.isolate", job], stdin=subprocess.PIPE,
                                 stdout=sys.__stderr__.fileno() if sys.__stderr__ else subprocess.DEVNULL,
                                 pass_fds=(write_fd,), env=env)
    finally:
        os.close(write_fd)
    last_phase, outcome = None, None
    try:
        try:
            child.stdin.write(json.dumps(args).encode())
            child.stdin.close()
        except BrokenPipeError:  # it died at once; the wait below says how
            pass
        with os.fdopen(read_fd, "r", encoding="utf-8") as pipe:
            for line in pipe:
                try:
                    msg = json.loads(line)
                except ValueError:
                    continue
                if "phase" in msg:
                    last_phase = msg["phase"]
                elif "result" in msg or "error" in msg:
                    outcome = msg
                elif on_message is not None:
                    on_message(msg)
        rc = child.wait()
    except BaseException:
        child.kill()
        child.wait()
        raise
    if outcome is None:
        raise Crashed(last_phase, rc)
    if "error" in outcome:
        raise JobError(outcome["error"]["kind"], outcome["error"]["message"])
    return outcome["result"]


def _child_main(job: str) -> int:
    # Run as __main__, this module is not the tflite_gpu.isolate the jobs
    # import: give that one the channel.
    from tflite_gpu import errors, isolate

    isolate._channel = os.fdopen(int(os.environ.pop(_FD_ENV)), "w", encoding="utf-8")
    send = isolate.send

    module, func = JOBS.get(job, job).split(":")  # a name, or module:function
    try:
        args = json.loads(sys.stdin.read())
        result = getattr(importlib.import_module(module), func)(**args)
        send({"result": result})
    except (errors.CliError, JobError) as e:
        send({"error": {"kind": e.kind, "message": str(e)}})
    except Exception as e:  # noqa: BLE001 - a bug in tflite_gpu itself: say so, with the traceback
        traceback.print_exc()
        send({"error": {"kind": "internal", "message": f"internal error ({type(e).__name__}: {errors.reason(e)}); "
                                                       "this is a bug in tflite-gpu, please report it"}})
    isolate._channel.close()
    return 0


if __name__ == "__main__":
    sys.exit(_child_main(sys.argv[1]))
