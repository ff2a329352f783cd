"""tflite-gpu: an OpenCL GPU delegate for TensorFlow Lite.

    import tflite_gpu
    delegate = tflite_gpu.load_delegate(log_level="info")
    interpreter = tflite_gpu.Interpreter("model.tflite", experimental_delegates=[delegate])
"""
from __future__ import annotations

from ._library import library_path

__version__ = "0.1.0"
__all__ = ["library_path", "load_delegate", "runtime", "__version__"]


def runtime():
    """The interpreter module in use: tflite_runtime, else ai_edge_litert."""
    try:
        from tflite_runtime import interpreter as mod
    except ImportError:  # LiteRT, the runtime's successor
        from ai_edge_litert import interpreter as mod
    return mod


def load_delegate(**options):
    """The runtime's Delegate for libgpu_delegate.so with these options.

    Values may be str, int or bool; every key is checked by the library and
    a bad one raises ValueError naming it.
    """
    opts = {k: (str(v).lower() if isinstance(v, bool) else str(v)) for k, v in options.items()}
    return runtime().load_delegate(library_path(), opts)


def Interpreter(*args, **kwargs):  # noqa: N802 - mirrors the runtime's class name
    return runtime().Interpreter(*args, **kwargs)
