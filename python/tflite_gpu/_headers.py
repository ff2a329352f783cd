"""The C headers the package reads at import, so that nothing in them is
copied by hand: the cffi declarations (_capi.py) and the library version
(__version__). An installed package carries them in tflite_gpu/include/
(setup.py copies them there); a source tree reads delegate_c/include/."""
from __future__ import annotations

import pathlib
import re

_HERE = pathlib.Path(__file__).resolve().parent
# The headers setup.py ships in the package.
HEADERS = ("gpu_delegate.h", "gpu_delegate_introspection.h", "version.h")
_DIRS = (_HERE / "include", _HERE.parent.parent / "delegate_c" / "include")


def header_text(name: str) -> str:
    for d in _DIRS:
        p = d / name
        if p.is_file():
            return p.read_text()
    raise FileNotFoundError(f"{name} not found in {' or '.join(str(d) for d in _DIRS)}: "
                            "install the package with `pip install .`")


def cdef(name: str) -> str:
    """The declarations between the header's /* cffi-begin */ and
    /* cffi-end */ markers, as cffi's cdef takes them: preprocessor lines
    (with their continuations) and the TFLITE_GPU_EXPORT macro dropped."""
    text = header_text(name)
    try:
        region = text.split("/* cffi-begin */", 1)[1].split("/* cffi-end */", 1)[0]
    except IndexError:
        raise ValueError(f"{name} has no /* cffi-begin */ ... /* cffi-end */ region") from None
    region = region.replace("\\\n", " ")
    lines = [line for line in region.splitlines() if not line.lstrip().startswith("#")]
    return re.sub(r"\bTFLITE_GPU_EXPORT\b", "", "\n".join(lines))


def version() -> str:
    """TFLITE_GPU_VERSION of version.h: the one place the version is written."""
    m = re.search(r'^#define TFLITE_GPU_VERSION "([^"]+)"', header_text("version.h"), flags=re.M)
    if not m:
        raise ValueError("version.h has no TFLITE_GPU_VERSION line")
    return m.group(1)
