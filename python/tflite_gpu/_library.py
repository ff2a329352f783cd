"""Where libgpu_delegate.so lives."""
from __future__ import annotations

import os
import pathlib

_HERE = pathlib.Path(__file__).resolve().parent


class LibraryNotFound(FileNotFoundError):
    """libgpu_delegate.so is missing (the CLI exits with 3)."""


def library_path() -> str:
    """Absolute path of libgpu_delegate.so.

    $TFLITE_GPU_LIBRARY wins (a sanitizer or debug build); then the copy
    installed inside this package; then a source tree's build/ directory.
    """
    env = os.environ.get("TFLITE_GPU_LIBRARY")
    if env:
        p = pathlib.Path(env).resolve()
        if not p.is_file():
            raise LibraryNotFound(f"TFLITE_GPU_LIBRARY={env} does not exist")
        return str(p)
    for candidate in (_HERE / "libgpu_delegate.so", _HERE.parent.parent / "build" / "libgpu_delegate.so"):
        if candidate.is_file():
            return str(candidate)
    raise LibraryNotFound("libgpu_delegate.so not found: install the package with `pip install .` "
                          "or build it with `make -C delegate_c`")
