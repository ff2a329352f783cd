"""Verify a .tflite file before any interpreter sees it.

The stock runtimes read the flatbuffer without verifying it, so a truncated
or corrupted file makes them read out of bounds and crash. verify_file()
and verify_bytes() check, in pure Python and without trusting one byte:

* the flatbuffer's structure, as flatbuffers' own C++ Verifier does: the
  "TFL3" identifier, every table and vtable, offset, vector and string
  inside the buffer and aligned, strings terminated, union members of their
  declared type (layouts from the `tflite` package, see _fbs.py);
* what refers to what: operator codes valid, opcode, tensor, buffer and
  subgraph indices in range; every tensor written by at most one operator,
  and never a constant, a subgraph input or the operator's own input;
* the data: shapes not negative, each constant's buffer exactly as large as
  its shape and type need, quantization parameters the runtime can read,
  convolution and pooling strides and dilations >= 1.

They return a ModelInfo (tensors and operators of every subgraph) or raise
ModelError saying what is wrong and where.
"""
from __future__ import annotations

import dataclasses
import os
import stat
import struct

import numpy as np

from . import _fbs
from ._output import display

# Bytes per element of each tflite.TensorType (None: variable or opaque).
# INT4 constants are packed two to a byte.
ITEM_BYTES = {"FLOAT32": 4, "FLOAT16": 2, "INT32": 4, "UINT8": 1, "INT64": 8, "STRING": None, "BOOL": 1,
              "INT16": 2, "COMPLEX64": 8, "INT8": 1, "FLOAT64": 8, "COMPLEX128": 16, "UINT64": 8,
              "RESOURCE": None, "VARIANT": None, "UINT32": 4, "UINT16": 2, "INT4": 1, "BFLOAT16": 2}
# Options whose stride and dilation fields divide: 0 crashes the stock kernels.
_STRIDED_OPTIONS = ("Conv2DOptions", "DepthwiseConv2DOptions", "Conv3DOptions", "Pool2DOptions",
                    "TransposeConvOptions")

_U16, _I32, _U32 = struct.Struct("<H"), struct.Struct("<i"), struct.Struct("<I")


class ModelError(Exception):
    """The file is not a TFLite model any interpreter can safely be given."""


class Truncated(ModelError):
    """The flatbuffer reaches past the end of the file (a file cut short,
    or a corrupt offset)."""


@dataclasses.dataclass(frozen=True)
class Tensor:
    index: int
    name: str
    shape: tuple
    type: str  # tflite.TensorType name, e.g. "FLOAT32"
    buffer: int
    data_bytes: int  # bytes of constant data in its buffer (0: a runtime tensor)
    sparse: bool = False

    @property
    def elements(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    @property
    def nbytes(self) -> int:
        """Bytes the tensor takes in memory (STRING and opaque types: 0)."""
        return self.elements * (ITEM_BYTES.get(self.type) or 0)

    def describe(self) -> str:
        return f"tensor {self.index} '{self.name}' {list(self.shape)} {self.type.lower()}"


@dataclasses.dataclass(frozen=True)
class Operator:
    index: int
    op: str  # builtin name, or CUSTOM:<name>
    inputs: tuple
    outputs: tuple


@dataclasses.dataclass(frozen=True)
class Subgraph:
    tensors: tuple
    operators: tuple
    inputs: tuple
    outputs: tuple


@dataclasses.dataclass(frozen=True)
class ModelInfo:
    size: int  # bytes of the file
    subgraphs: tuple


# --------------------------------------------------------------------------
# Structure


class _Walk:
    """Checks every table, vector and string reachable from the root and
    decodes them: a table becomes {field: value} (scalars as numbers, scalar
    vectors as numpy arrays, strings as bytes, sub-tables as dicts; a union
    member's dict has its table name under "__table__")."""

    def __init__(self, buf, record=None):
        self.b, self.n, self.tables, self.record = buf, len(buf), 0, record

    def fail(self, where, what, error=ModelError):
        raise error(f"malformed flatbuffer at {where or 'the root'}: {what}")

    def _at(self, pos, size, align, where, what):
        if pos < 0 or pos + size > self.n:
            self.fail(where, f"{what} at byte {pos} runs past the end of the file ({self.n} bytes)",
                      Truncated if pos >= 0 else ModelError)
        if align > 1 and pos % align:
            self.fail(where, f"{what} at byte {pos} is not aligned to {align} bytes")

    def offset(self, pos, where):
        """The absolute position an offset field at `pos` points to."""
        self._at(pos, 4, 4, where, "offset")
        off = _U32.unpack_from(self.b, pos)[0]
        if off == 0 or off >= 1 << 31:
            self.fail(where, f"offset {off} at byte {pos} is out of range")
        if self.record is not None:
            self.record.append((where, "offset", pos, 4))
        target = pos + off
        if target >= self.n:
            self.fail(where, f"offset at byte {pos} points past the end of the file ({target} >= {self.n})",
                      Truncated)
        return target

    def vector(self, pos, elem, where, string=False):
        """The element count of the vector (or string) at pos."""
        self._at(pos, 4, 4, where, "vector length")
        count = _U32.unpack_from(self.b, pos)[0]
        if self.record is not None:
            self.record.append((where, "string" if string else "vector", pos, elem))
        end = pos + 4 + count * elem
        if end + (1 if string else 0) > self.n:
            what = "string" if string else f"vector of {count} x {elem} bytes"
            self.fail(where, f"{what} at byte {pos} runs past the end of the file ({self.n} bytes)", Truncated)
        if string and self.b[end] != 0:
            self.fail(where, f"string at byte {pos} is not terminated")
        return count

    def table(self, pos, name, where, depth=0) -> dict:
        if depth > _fbs.MAX_DEPTH:
            self.fail(where, "tables nested too deeply")
        self.tables += 1
        if self.tables > _fbs.MAX_TABLES:
            self.fail(where, f"more than {_fbs.MAX_TABLES} tables")
        self._at(pos, 4, 4, where, f"{name} table")
        vt = pos - _I32.unpack_from(self.b, pos)[0]
        self._at(vt, 4, 2, where, f"{name} vtable")
        vsize, tsize = _U16.unpack_from(self.b, vt)[0], _U16.unpack_from(self.b, vt + 2)[0]
        if vsize < 4 or vsize % 2:
            self.fail(where, f"{name} vtable at byte {vt} has a bad size {vsize}")
        self._at(vt, vsize, 2, where, f"{name} vtable")
        self._at(pos, max(tsize, 4), 1, where, f"{name} table")
        out, unions = {}, []
        for f in _fbs.fields(name):
            if f.voffset + 2 > vsize:
                continue
            fo = _U16.unpack_from(self.b, vt + f.voffset)[0]
            if not fo:
                continue
            fpos = pos + fo
            at = f"{where}.{f.key}" if where else f.key
            if f.kind == "scalar":
                self._at(fpos, f.size, f.size, at, "field")
                if self.record is not None:
                    self.record.append((at, "scalar", fpos, f.size))
                out[f.key] = struct.unpack_from(f.fmt, self.b, fpos)[0]
                continue
            target = self.offset(fpos, at)
            if f.kind == "string":
                count = self.vector(target, 1, at, string=True)
                out[f.key] = bytes(self.b[target + 4:target + 4 + count])
            elif f.kind == "vector":
                count = self.vector(target, f.size, at)
                out[f.key] = np.frombuffer(self.b, np.dtype(f.fmt), count, target + 4)
            elif f.kind == "table":
                out[f.key] = self.table(target, f.table, at, depth + 1)
            elif f.kind == "table_vector":
                out[f.key] = [self.table(self.offset(target + 4 + 4 * i, f"{at}[{i}]"), f.table, f"{at}[{i}]",
                                         depth + 1) for i in range(self.vector(target, 4, at))]
            elif f.kind == "string_vector":
                out[f.key] = [self._string(self.offset(target + 4 + 4 * i, f"{at}[{i}]"), f"{at}[{i}]")
                              for i in range(self.vector(target, 4, at))]
            elif f.kind == "union":
                unions.append((f, target, at))
        for f, target, at in unions:
            utype = out.get(f.key + "_type", 0)
            member = _fbs.union_members(f.union_enum).get(utype) if f.union_enum else None
            if member:
                out[f.key] = dict(self.table(target, member, at, depth + 1), __table__=member)
        return out

    def _string(self, pos, where) -> bytes:
        count = self.vector(pos, 1, where, string=True)
        return bytes(self.b[pos + 4:pos + 4 + count])


def layout(data) -> list:
    """(where, kind, byte position, size) of every part of a structurally
    valid model, in walk order (for fuzzers): "scalar" fields (size: their
    bytes), "offset"s (4), "vector"s and "string"s (at the position of their
    length; size: bytes per element)."""
    rec = []
    _structure(data, rec)
    return rec


def _structure(data, record=None) -> dict:
    """The decoded Model table; ModelError when the structure is broken."""
    n = len(data)
    if n == 0:
        raise ModelError("empty file (0 bytes)")
    if n < 8:
        raise ModelError(f"only {n} bytes: too short for a TFLite flatbuffer")
    ident = bytes(data[4:8])
    if ident != _fbs.FILE_IDENTIFIER:
        raise ModelError(f"no TFLite file identifier (bytes 4-7 are {ident!r}, not {_fbs.FILE_IDENTIFIER!r}); "
                         f"the file starts with {bytes(data[:16])!r}")
    w = _Walk(data, record)
    return w.table(w.offset(0, ""), "Model", "")


# --------------------------------------------------------------------------
# References and data


def _ints(table, key) -> list:
    v = table.get(key)
    return [] if v is None else v.astype(np.int64).tolist()


def _text(b) -> str:
    return b.decode("utf-8", "replace") if b else ""


def _get(table, name, key):
    """A scalar field's value, or its default when the table leaves it out."""
    if key in table:
        return table[key]
    return next(f.default for f in _fbs.fields(name) if f.key == key)


def _opcodes(model) -> list:
    builtin = _fbs.enum_names("BuiltinOperator")
    names = []
    for i, oc in enumerate(model.get("operator_codes", [])):
        code = max(int(_get(oc, "OperatorCode", "builtin_code")), int(_get(oc, "OperatorCode",
                                                                            "deprecated_builtin_code")))
        if code not in builtin:
            raise ModelError(f"operator code {i}: builtin code {code} is not a TFLite operator (schema of the tflite "
                             f"package {_fbs.SCHEMA_VERSION})")
        if builtin[code] == "CUSTOM":
            custom = _text(oc.get("custom_code"))
            if not custom:
                raise ModelError(f"operator code {i} is CUSTOM but names no custom op")
            names.append("CUSTOM:" + custom)
        else:
            names.append(builtin[code])
    return names


def _buffer_sizes(model, file_size) -> list:
    sizes = []
    for b, buf in enumerate(model.get("buffers", [])):
        size = len(buf["data"]) if "data" in buf else 0
        offset, length = int(buf.get("offset", 0)), int(buf.get("size", 0))
        if offset > 1:  # data outside the flatbuffer (models over 2 GB)
            if offset + length > file_size:
                raise Truncated(f"buffer {b}: {length} bytes at file offset {offset} run past the end of the "
                                 f"file ({file_size} bytes)")
            size = length
        sizes.append(size)
    return sizes


def _tensor(t, i, where, buffer_sizes) -> Tensor:
    types = _fbs.enum_names("TensorType")
    name = _text(t.get("name"))
    shape = tuple(_ints(t, "shape"))
    label = f"{where} tensor {i} '{name}'"
    ttype = types.get(t.get("type", 0))
    if ttype is None:
        raise ModelError(f"{label}: type {t.get('type')} is not a TFLite tensor type (schema of the tflite package "
                         f"{_fbs.SCHEMA_VERSION})")
    if any(s < 0 for s in shape):
        raise ModelError(f"{label}: negative dimension in its shape {list(shape)}")
    signature = _ints(t, "shape_signature")
    if any(s < -1 for s in signature):
        raise ModelError(f"{label}: shape signature {signature} has a dimension below -1")
    b = int(t.get("buffer", 0))
    if b >= len(buffer_sizes):
        raise ModelError(f"{label}: buffer {b}, but the model has {len(buffer_sizes)} buffers")
    data = buffer_sizes[b]
    sparse = "sparsity" in t
    tensor = Tensor(i, name, shape, ttype, b, data, sparse)
    item = ITEM_BYTES[ttype]
    if data and item and not sparse:
        need = tensor.elements * item
        ok = (need, (tensor.elements + 1) // 2) if ttype == "INT4" else (need,)
        if data not in ok:
            raise ModelError(f"{label} {list(shape)} {ttype.lower()} needs {need} bytes of data, but its "
                             f"buffer {b} holds {data}")
    q = t.get("quantization") or {}
    scales = len(q.get("scale", ()))
    if scales:
        zeros = len(q.get("zero_point", ()))
        if zeros < scales:
            raise ModelError(f"{label}: {scales} quantization scale(s) but {zeros} zero point(s)")
        dim = int(q.get("quantized_dimension", 0))
        if shape and not 0 <= dim < len(shape):
            raise ModelError(f"{label}: quantized dimension {dim} outside its rank {len(shape)}")
        if shape and scales != 1 and scales != shape[dim]:
            raise ModelError(f"{label}: {scales} quantization scales for dimension {dim} of size {shape[dim]}")
    return tensor


def _options_checks(op, label, n_subgraphs):
    opts = op.get("builtin_options")
    if not opts:
        return
    name = opts["__table__"]
    for f in _fbs.fields(name):
        if f.kind != "scalar":
            continue
        if name in _STRIDED_OPTIONS and f.name.startswith(("Stride", "Dilation")):
            value = _get(opts, name, f.key)
            if value < 1:
                raise ModelError(f"{label}: {f.key} is {value} (must be >= 1)")
        if f.name.endswith("SubgraphIndex") or (name == "CallOptions" and f.name == "Subgraph"):
            value = _get(opts, name, f.key)
            if not 0 <= value < n_subgraphs:
                raise ModelError(f"{label}: {f.key} {value}, but the model has {n_subgraphs} subgraphs")


def _subgraph(g, s, opnames, buffer_sizes, n_subgraphs) -> Subgraph:
    where = f"subgraph {s}"
    tensors = tuple(_tensor(t, i, where, buffer_sizes) for i, t in enumerate(g.get("tensors", [])))
    n = len(tensors)
    for what in ("inputs", "outputs"):
        for t in _ints(g, what):
            if not 0 <= t < n:
                raise ModelError(f"{where}: {what[:-1]} tensor {t}, but the subgraph has {n} tensors")
    ops, producer, graph_inputs = [], {}, set(_ints(g, "inputs"))
    for k, op in enumerate(g.get("operators", [])):
        code = int(op.get("opcode_index", 0))
        if code >= len(opnames):
            raise ModelError(f"{where} operator {k}: operator code {code}, but the model has {len(opnames)}")
        label = f"{where} operator {k} ({opnames[code]})"
        ins, outs = _ints(op, "inputs"), _ints(op, "outputs")
        for what, idx in (("input", ins), ("output", outs), ("intermediate", _ints(op, "intermediates"))):
            for t in idx:
                if not -1 <= t < n:
                    raise ModelError(f"{label}: {what} tensor {t}, but the subgraph has {n} tensors")
        both = set(ins) & set(outs) - {-1}
        if both:
            raise ModelError(f"{label}: writes its own input tensor {min(both)}")
        for t in outs:
            if t < 0:
                continue
            if tensors[t].data_bytes:
                raise ModelError(f"{label}: writes the constant {tensors[t].describe()}")
            if t in graph_inputs:
                raise ModelError(f"{label}: writes the subgraph's input {tensors[t].describe()}")
            if t in producer:
                raise ModelError(f"{label}: writes {tensors[t].describe()}, which operator {producer[t]} "
                                 "writes too")
            producer[t] = k
        _options_checks(op, label, n_subgraphs)
        ops.append(Operator(k, opnames[code], tuple(ins), tuple(outs)))
    return Subgraph(tensors, tuple(ops), tuple(_ints(g, "inputs")), tuple(_ints(g, "outputs")))


def verify_bytes(data) -> ModelInfo:
    """ModelInfo of a model's bytes, or ModelError saying what is wrong."""
    return verify_decoded(data)[0]


def verify_decoded(data) -> tuple:
    """(verify_bytes' ModelInfo, the decoded Model table: op options,
    buffers, quantization as dicts) from one walk of the flatbuffer."""
    model = _structure(data)
    graphs = model.get("subgraphs", [])
    if not graphs:
        raise ModelError("the model has no subgraph")
    opnames = _opcodes(model)
    sizes = _buffer_sizes(model, len(data))
    subgraphs = tuple(_subgraph(g, s, opnames, sizes, len(graphs)) for s, g in enumerate(graphs))
    for i, m in enumerate(model.get("metadata", [])):
        if int(m.get("buffer", 0)) >= len(sizes):
            raise ModelError(f"metadata {i}: buffer {m.get('buffer')}, but the model has {len(sizes)} buffers")
    for b in _ints(model, "metadata_buffer"):
        if not 0 <= b < len(sizes):
            raise ModelError(f"metadata buffer {b}, but the model has {len(sizes)} buffers")
    for i, sig in enumerate(model.get("signature_defs", [])):
        s = int(sig.get("subgraph_index", 0))
        if s >= len(subgraphs):
            raise ModelError(f"signature {i}: subgraph {s}, but the model has {len(subgraphs)}")
        for what in ("inputs", "outputs"):
            for m in sig.get(what, []):
                t = int(m.get("tensor_index", 0))
                if t >= len(subgraphs[s].tensors):
                    raise ModelError(f"signature {i} {what}: tensor {t}, but subgraph {s} has "
                                     f"{len(subgraphs[s].tensors)} tensors")
    return ModelInfo(len(data), subgraphs), model


def read_model(path) -> bytes:
    """The bytes of a model file; ModelError naming the file when it is not
    a readable, non-empty regular file."""
    shown = display(path)
    try:
        st = os.stat(path)
    except OSError as e:
        raise ModelError(f"{shown}: {e.strerror}") from e
    if stat.S_ISDIR(st.st_mode):
        raise ModelError(f"{shown}: is a directory, not a .tflite model file")
    if not stat.S_ISREG(st.st_mode):
        raise ModelError(f"{shown}: not a regular file (a device, pipe or socket), not a .tflite model file")
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise ModelError(f"{shown}: cannot be read: {e.strerror}") from e
    if not data:
        raise ModelError(f"{shown}: empty file (0 bytes), not a TFLite model")
    return data


def verify_file(path) -> ModelInfo:
    """verify_bytes() of a file; the error message starts with the file's name."""
    data = read_model(path)
    try:
        return verify_bytes(data)
    except Truncated as e:
        raise Truncated(f"{display(path)}: not a valid TFLite model, the file looks truncated (its {len(data)} "
                        f"bytes are fewer than its flatbuffer says): {e}") from None
    except ModelError as e:
        raise ModelError(f"{display(path)}: not a valid TFLite model: {e}") from None
