"""The benchmark's configurations and their interpreters: CPU XNNPACK, CPU
builtin kernels, the delegate in FP32 and in FP16 (see bench's module doc)."""
from __future__ import annotations

import contextlib
import os
import sys
import tempfile

from . import interpreters, load_delegate
from . import inputs as model_inputs
from .check import apply_delegate

CONFIGS = ("xnnpack", "builtin", "fp32", "fp16")
CPU_CONFIGS = ("xnnpack", "builtin")
DELEGATE_CONFIGS = ("fp32", "fp16")
LABELS = {
    "xnnpack": "CPU XNNPACK",
    "builtin": "CPU builtin",
    "fp32": "delegate FP32",
    "fp16": "delegate FP16",
}
DEFAULT_WARMUP = 3
DEFAULT_ITERATIONS = 30
DEFAULT_TOP = 10


def default_threads() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def delegate_options(config: str, extra: dict | None = None) -> dict:
    opts = {"log_level": "silent"}
    opts.update(extra or {})
    opts.pop("is_precision_loss_allowed", None)  # set last: it wins over any spelling in extra
    opts["is_precision_loss_allowed"] = "1" if config == "fp16" else "0"
    return opts


def make_interpreter(model_path, config: str, threads: int, extra_options: dict | None = None):
    """(interpreter, delegate or None) for one configuration, tensors allocated."""
    if config in CPU_CONFIGS:
        return interpreters.make(model_path, cpu=config, threads=threads), None
    if config in DELEGATE_CONFIGS:
        # check.apply_delegate: kernels the device's compiler rejects raise check.KernelBuildError
        delegate = load_delegate(**delegate_options(config, extra_options))
        return apply_delegate(model_path, delegate, threads=threads), delegate
    raise ValueError(f"unknown configuration {config!r} (one of {', '.join(CONFIGS)})")


def _set_inputs(it, seed: int, plan=()):
    """The inputs of one run: the model's plan (inputs.plan: the user's
    arrays, ids in range), seeded."""
    interpreters.set_inputs(it, model_inputs.make(list(plan), it.get_input_details(), seed))


def _short_error(e: BaseException | str) -> str:
    """The informative lines of an error, on one line (at most 1000 characters)."""
    from .errors import reason

    text = reason(e)
    return text if len(text) <= 1000 else text[:997] + "..."


def _phase_name(config: str, what: str) -> str:
    """isolate phase names: "cpu:..." while a CPU configuration runs, "delegate:..." while the delegate does."""
    return f"{'delegate' if config in DELEGATE_CONFIGS else 'cpu'}:{config} {what}"


# The runtime's line on creating its XNNPACK delegate: written by the benchmark's child to the terminal the
# parent draws its progress bar on, it would break the bar (every other line is kept).
_RUNTIME_INFO = "INFO: Created TensorFlow Lite XNNPACK delegate"


@contextlib.contextmanager
def runtime_info_kept_out():
    """fd 2 into a file while interpreters are made, then written back
    without the runtime's XNNPACK INFO line."""
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):
        yield
        return
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            yield
        finally:
            with contextlib.suppress(OSError, ValueError):
                sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            kept = [ln for ln in tmp.read().decode(errors="replace").splitlines(keepends=True)
                    if not ln.startswith(_RUNTIME_INFO)]
            if kept:
                sys.stderr.write("".join(kept))
                sys.stderr.flush()
