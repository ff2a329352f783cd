"""Printing that cannot fail: file names that are not UTF-8, strict JSON
(no NaN or Infinity), and a reader that stops reading (`| head -1`)."""
from __future__ import annotations

import json
import math
import os


def display(path) -> str:
    """A path as text, bytes that are not UTF-8 shown as \\xNN."""
    if isinstance(path, bytes):
        raw = path
    else:
        raw = os.fsencode(os.fspath(path))
    return raw.decode("utf-8", "backslashreplace")


def _clean_str(s: str) -> str:
    try:
        s.encode("utf-8")
        return s
    except UnicodeEncodeError:  # lone surrogates, e.g. undecodable bytes of a file name
        pass
    try:
        return s.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        return s.encode("utf-8", "backslashreplace").decode("utf-8")


def jsonable(obj):
    """obj with every non-finite float as None, tuples as lists, and strings
    made valid UTF-8, so that json.dumps(allow_nan=False) accepts it."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, str):
        return _clean_str(obj)
    if isinstance(obj, dict):
        return {_clean_str(str(k)): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if hasattr(obj, "item") and hasattr(obj, "dtype"):  # a numpy scalar
        return jsonable(obj.item())
    if isinstance(obj, os.PathLike):
        return display(obj)
    return obj


def dumps(obj, indent=2) -> str:
    """Strict JSON: parses with any JSON parser (no NaN, no Infinity)."""
    return json.dumps(jsonable(obj), indent=indent, allow_nan=False)


class SafeStream:
    """Wraps sys.stdout or sys.stderr: text that the encoding cannot carry is
    written with backslash escapes, and once the reader has gone away
    (BrokenPipeError) further output is dropped instead of raising."""

    def __init__(self, stream):
        self._stream = stream
        self.broken = False

    def write(self, text):
        if self.broken:
            return len(text)
        try:
            try:
                return self._stream.write(text)
            except UnicodeEncodeError:
                enc = getattr(self._stream, "encoding", None) or "utf-8"
                return self._stream.write(text.encode(enc, "backslashreplace").decode(enc))
        except BrokenPipeError:
            self._close()
            return len(text)

    def flush(self):
        if self.broken:
            return
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._close()

    def _close(self):
        """The reader is gone: point the descriptor at /dev/null so that the
        final flush at exit does not complain either."""
        self.broken = True
        try:
            fd = self._stream.fileno()
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, fd)
            os.close(devnull)
        except (OSError, ValueError, AttributeError):
            pass

    def __getattr__(self, name):
        return getattr(self._stream, name)
