"""Delegate options as the library resolves them (aliases, priorities,
defaults): tflite_gpu_resolve_options in options.c, so Python never
re-derives a setting, the precision above all, from option spellings.

    resolved.options({"inference_priority1": "MIN_LATENCY"})["precision"]  # "fp16"
"""
from __future__ import annotations

import functools

import cffi

from ._library import library_path

_CDEF = """
int tflite_gpu_resolve_options(const char* const* keys, const char* const* values, int n,
                               char* buf, size_t size, char* err, size_t errlen);
"""

_ffi = cffi.FFI()
_ffi.cdef(_CDEF)

_INTS = {"is_precision_loss_allowed", "experimental_flags", "max_delegated_partitions"}


@functools.lru_cache(maxsize=None)
def _lib():
    return _ffi.dlopen(library_path())


def options(opts: dict | None = None) -> dict:
    """The resolved settings of `opts` (str values, as load_delegate passes
    them): precision ("fp16" or "fp32"), is_precision_loss_allowed,
    inference_preference, inference_priority1-3, experimental_flags,
    max_delegated_partitions, serialization (bool: the kernel cache is on),
    serialization_dir, model_token, device, kernel_set (as requested) and
    log_level. ValueError with the library's reason for options it refuses."""
    items = [(str(k).encode(), (str(v).lower() if isinstance(v, bool) else str(v)).encode())
             for k, v in (opts or {}).items()]
    keep = [_ffi.new("char[]", s) for kv in items for s in kv]  # alive through the call
    keys = _ffi.new("char*[]", keep[0::2] or 1)
    values = _ffi.new("char*[]", keep[1::2] or 1)
    err = _ffi.new("char[]", 1024)
    n = _lib().tflite_gpu_resolve_options(keys, values, len(items), _ffi.NULL, 0, err, 1024)
    if n < 0:
        raise ValueError(_ffi.string(err).decode(errors="replace"))
    buf = _ffi.new("char[]", n + 1)
    _lib().tflite_gpu_resolve_options(keys, values, len(items), buf, n + 1, err, 1024)
    out: dict = {}
    for line in _ffi.string(buf).decode(errors="replace").splitlines():
        key, _, value = line.partition("\t")
        out[key] = int(value) if key in _INTS else (value == "1" if key == "serialization" else value)
    return out


def precision(opts: dict | None = None) -> str:
    """"fp16" or "fp32": the precision a delegate with these options runs in."""
    return options(opts)["precision"]
