"""tflite-gpu: an OpenCL GPU delegate for TensorFlow Lite.

    import tflite_gpu
    delegate = tflite_gpu.load_delegate(log_level="info")
    interpreter = tflite_gpu.Interpreter("model.tflite", experimental_delegates=[delegate])
"""
from __future__ import annotations

import hashlib
import importlib
import os

from ._headers import version as _header_version
from ._library import library_path

# Written once, in delegate_c/include/version.h (the library and setup.py read it too).
__version__ = _header_version()
__all__ = ["library_path", "load_delegate", "model_token", "cache_options", "default_cache_dir", "runtime",
           "__version__"]


RUNTIMES = ("tflite_runtime", "ai_edge_litert")


def runtime():
    """The interpreter module in use: $TFLITE_GPU_RUNTIME (tflite_runtime or
    ai_edge_litert) when set, else tflite_runtime, else ai_edge_litert."""
    wanted = os.environ.get("TFLITE_GPU_RUNTIME")
    if wanted and wanted not in RUNTIMES:
        raise ValueError(f"TFLITE_GPU_RUNTIME={wanted}: choose {' or '.join(RUNTIMES)}")
    errors = []
    for name in [wanted] if wanted else RUNTIMES:
        try:
            return importlib.import_module(f"{name}.interpreter")
        except ImportError as e:
            errors.append(f"{name}: {e}")
    raise ImportError("no TensorFlow Lite runtime could be imported (" + "; ".join(errors) + "); install one: "
                      "pip install 'tflite-gpu[tflite-runtime]' (Python 3.9-3.11) or 'tflite-gpu[litert]'")


def load_delegate(**options):
    """The runtime's Delegate for libgpu_delegate.so with these options.

    Values may be str, int or bool; every key is checked by the library and
    a bad one raises ValueError naming it.
    """
    opts = {k: (str(v).lower() if isinstance(v, bool) else str(v)) for k, v in options.items()}
    # The runtime hands C strings to the library, which would see a value
    # cut at its first NUL ('info\x00silent' as 'info'): refuse it here.
    for k, v in opts.items():
        if "\x00" in k or "\x00" in v:
            raise ValueError(f"option {k[:80]!r}={v[:80]!r} contains a NUL character")
    return runtime().load_delegate(library_path(), opts)


def model_token(model) -> str:
    """A stable fingerprint of a model's bytes, for the model_token option
    (with serialization_dir it names the model in the kernel cache).

    model: a path (str or os.PathLike) or the model's bytes. Returns
    "tflite-" and 32 hex digits of the SHA-256 of the bytes: the same model
    gives the same token on every machine and run, any change a new one.
    """
    h = hashlib.sha256()
    if isinstance(model, (bytes, bytearray, memoryview)):
        h.update(model)
    elif isinstance(model, (str, os.PathLike)):
        with open(model, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    else:
        raise TypeError(f"model_token expects a path or bytes, got {type(model).__name__}")
    return "tflite-" + h.hexdigest()[:32]


def default_cache_dir(create: bool = False) -> str:
    """The per-user kernel cache directory: $TFLITE_GPU_CACHE_DIR, else
    $XDG_CACHE_HOME/tflite_gpu/kernels, else ~/.cache/tflite_gpu/kernels.

    The tflite_gpu commands use it unless told --no-cache; the library never
    caches on its own, so an application opts in with
    load_delegate(**cache_options(default_cache_dir(create=True), path)).
    create: make it (mode 0700, as the delegate refuses a directory that
    other users can write to).
    """
    d = os.environ.get("TFLITE_GPU_CACHE_DIR")
    if not d:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        d = os.path.join(base, "tflite_gpu", "kernels")
    if create:
        os.makedirs(d, mode=0o700, exist_ok=True)
    return d


def cache_options(cache_dir, model) -> dict:
    """The delegate options that turn the kernel cache on for `model` (a
    path or bytes) in `cache_dir`: serialization_dir and model_token."""
    return {"serialization_dir": str(cache_dir), "model_token": model_token(model)}


def Interpreter(*args, **kwargs):  # noqa: N802 - mirrors the runtime's class name
    return runtime().Interpreter(*args, **kwargs)
