"""The CLI's exit codes and error kinds (the README's table), and how the
exceptions of the library and the runtimes map onto them."""
from __future__ import annotations

import re

EXIT_OK = 0
EXIT_CHECK_FAILED = 1
EXIT_USAGE = 2
EXIT_NO_OPENCL = 3
EXIT_MODEL = 4
EXIT_BUG = 5

# kind -> exit code. "kind" is the machine-readable word in --json errors.
KINDS = {
    "usage": EXIT_USAGE,  # a bad command, argument, option value or output path
    "no-opencl": EXIT_NO_OPENCL,  # no OpenCL library, platform or usable device
    "no-library": EXIT_NO_OPENCL,  # libgpu_delegate.so itself is missing
    "model": EXIT_MODEL,  # no such file, not a TFLite model, malformed, too large, cannot run
    "cpu-crashed": EXIT_MODEL,  # the stock CPU interpreter crashed on the model
    "delegate-crashed": EXIT_BUG,  # the delegate crashed: a bug in tflite-gpu
    # the device's OpenCL compiler rejected one of tflite-gpu's own kernels:
    # a failure of tflite-gpu on that device (and driver), not of the model
    "kernel-build": EXIT_BUG,
    "internal": EXIT_BUG,  # an unexpected error in tflite-gpu's Python code
}


# Kinds that concern the whole run, not one model: `check A B` and `bench A B`
# stop at them (a single top-level error); any other kind is one model's row.
RUN_KINDS = ("usage", "no-opencl", "no-library")


def worst(codes) -> int:
    """The exit code of a run over several models: the largest of the
    per-model codes (0 ok, 1 check failed, 4 model problem, 5 a failure of
    tflite-gpu), 0 for none. A model that could not be checked (4) outranks a
    check that failed (1), a failure of tflite-gpu (5) outranks both."""
    return max(codes, default=EXIT_OK)


class CliError(Exception):
    """A one-line message, its kind and the exit code that goes with it."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind
        self.code = KINDS[kind]
        self.message = " ".join(str(message).split()) if "\n" in str(message) else str(message)

    def to_dict(self) -> dict:
        return {"error": self.error_dict()}

    def error_dict(self) -> dict:
        """{"exit_code", "kind", "message"}: the "error" of to_dict and of a model's row."""
        return {"exit_code": self.code, "kind": self.kind, "message": self.message}

    def row(self, model: str) -> dict:
        """The row of one model of a multi-model run (check, bench) that failed."""
        return {"model": model, "error": self.error_dict()}


def opencl_error():
    """Why no OpenCL device can be used, or None when one can."""
    from . import _capi

    try:
        if not _capi.devices():
            return "no OpenCL device found"
    except (RuntimeError, OSError) as e:
        return str(e)
    return None


def delegate_error(e: Exception) -> CliError:
    """load_delegate's ValueError: no OpenCL (3) or a bad option (2)."""
    why = opencl_error()
    if why is not None:
        return CliError("no-opencl", f"no OpenCL device: {why}")
    return CliError("usage", f"bad delegate option: {reason(e)}")


def reason(e) -> str:
    """The informative part of an exception's text, on one line: the
    runtimes' "Failed to load delegate from PATH" and "See instructions"
    lines are left out (the library's own message follows them)."""
    lines = [ln.strip() for ln in str(e).strip().splitlines() if ln.strip()]
    # The library's reason may follow the path on the same line (another runtime's wording).
    lines = [re.sub(r"^Failed to load delegate from \S+\.so(\.\d+)*[:;]\s+(?=\S)", "", ln) for ln in lines]
    useful = [ln for ln in lines if not ln.startswith(("Failed to load delegate from", "See instructions"))]
    return "; ".join(useful or lines) or type(e).__name__
