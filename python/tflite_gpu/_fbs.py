"""The TFLite flatbuffer schema as field layouts, read from the `tflite`
package's generated accessor classes (so it follows the schema version that
package was generated from, with nothing copied here).

Each accessor is called once against a recording stand-in for its table:
which primitives it uses (Offset, Get, Vector, Indirect, String, Union) and
with what number type say the field's kind, and the object it returns says
a sub-table's class. verify.py walks a model with these layouts.
"""
from __future__ import annotations

import dataclasses
import functools
import inspect

import flatbuffers
import tflite

# Union value fields and the enum that names their member tables (the
# generated Python does not say which enum a union field uses).
UNION_ENUMS = {
    "BuiltinOptions": "BuiltinOptions",
    "BuiltinOptions2": "BuiltinOptions2",
    "Details": "QuantizationDetails",
    "ArraySegments": "SparseIndexVector",
    "ArrayIndices": "SparseIndexVector",
}
_HELPER_SUFFIXES = ("AsNumpy", "Length", "IsNone")
# A table with no fields (a 4-byte vtable at 0, the table at 4): accessors
# called on it return the schema's defaults.
_EMPTY_TABLE = bytearray(b"\x04\x00\x04\x00\x04\x00\x00\x00")


@dataclasses.dataclass(frozen=True)
class Field:
    name: str  # the accessor's name, e.g. "Shape"
    voffset: int  # the field's slot in the vtable
    kind: str  # scalar, string, table, union, vector (of scalars), table_vector
    size: int = 0  # bytes of a scalar or of one vector element
    table: str | None = None  # the class of a sub-table or of vector elements
    union_enum: str | None = None  # for unions: the enum class naming the member tables
    fmt: str = ""  # struct format of a scalar or of one element of a scalar vector
    default: int | float = 0  # a scalar's value when the table leaves it out

    @property
    def key(self) -> str:
        """The schema's own (snake_case) name: StrideW -> stride_w."""
        return _snake(self.name)


def _snake(name: str) -> str:
    return "".join("_" + c.lower() if c.isupper() and i else c.lower() for i, c in enumerate(name))


class _Recorder:
    """Stands in for flatbuffers.table.Table and records what an accessor does."""

    Bytes = bytearray(8)
    Pos = 0

    def __init__(self):
        self.calls = []

    def Offset(self, voffset):  # noqa: N802 - flatbuffers' names
        self.calls.append(("offset", voffset))
        return 4

    def Get(self, flags, off):  # noqa: N802
        self.calls.append(("get", flags))
        return 0

    def Vector(self, off):  # noqa: N802
        self.calls.append(("vector", None))
        return 16

    def Indirect(self, off):  # noqa: N802
        self.calls.append(("indirect", None))
        return 0

    def String(self, off):  # noqa: N802
        self.calls.append(("string", None))
        return b""

    def Union(self, obj, off):  # noqa: N802
        self.calls.append(("union", None))


class SchemaError(RuntimeError):
    """The tflite package's generated code does something this reader does not know."""


def _field(cls, name, method) -> Field | None:
    rec = _Recorder()
    obj = cls.__new__(cls)
    obj._tab = rec
    takes_index = len(inspect.signature(method).parameters) == 2
    result = method(obj, 0) if takes_index else method(obj)
    kinds = [c[0] for c in rec.calls]
    offsets = [c[1] for c in rec.calls if c[0] == "offset"]
    if not offsets:
        return None
    voffset = offsets[0]
    flags = next((c[1] for c in rec.calls if c[0] == "get"), None)
    sub = type(result).__name__ if result is not None and hasattr(result, "_tab") else None
    if "union" in kinds:
        return Field(name, voffset, "union", union_enum=UNION_ENUMS.get(name))
    if "vector" in kinds:
        if "indirect" in kinds and sub:
            return Field(name, voffset, "table_vector", 4, table=sub)
        if "string" in kinds:
            return Field(name, voffset, "string_vector", 4)
        if flags is not None:
            return Field(name, voffset, "vector", flags.bytewidth, fmt=flags.packer_type.format)
    elif "indirect" in kinds and sub:
        return Field(name, voffset, "table", 4, table=sub)
    elif "string" in kinds:
        return Field(name, voffset, "string", 4)
    elif flags is not None:
        return Field(name, voffset, "scalar", flags.bytewidth, fmt=flags.packer_type.format)
    raise SchemaError(f"tflite.{cls.__name__}.{name}: unrecognised accessor ({kinds})")


@functools.lru_cache(maxsize=None)
def fields(table: str) -> tuple:
    """The fields of tflite.<table>, in vtable order."""
    cls = getattr(tflite, table)
    out = {}
    for name, method in vars(cls).items():
        if (not inspect.isfunction(method) or name.startswith(("GetRootAs", "_")) or name == "Init"
                or name.endswith(_HELPER_SUFFIXES) or name.endswith("BufferHasIdentifier")):
            continue
        f = _field(cls, name, method)
        if f is not None and f.kind == "scalar":
            empty = cls()
            empty.Init(_EMPTY_TABLE, 4)
            f = dataclasses.replace(f, default=method(empty))
        if f is not None:
            out.setdefault(f.voffset, f)
    return tuple(out[k] for k in sorted(out))


@functools.lru_cache(maxsize=None)
def union_members(enum: str) -> dict:
    """{type value: table class name} of a union enum (NONE left out)."""
    e = getattr(tflite, enum)
    return {v: k for k, v in vars(e).items() if isinstance(v, int) and not k.startswith("_") and v != 0
            and hasattr(tflite, k) and hasattr(getattr(tflite, k), "Init")}


@functools.lru_cache(maxsize=None)
def enum_names(enum: str) -> dict:
    """{value: name} of a tflite enum class, e.g. enum_names("TensorType")[0] == "FLOAT32"."""
    e = getattr(tflite, enum)
    return {v: k for k, v in vars(e).items() if isinstance(v, int) and not k.startswith("_")}


FILE_IDENTIFIER = b"TFL3"
SCHEMA_VERSION = getattr(tflite, "__version__", "?")
MAX_TABLES = 1_000_000  # as flatbuffers' C++ Verifier
MAX_DEPTH = 64
assert flatbuffers.number_types.UOffsetTFlags.bytewidth == 4
