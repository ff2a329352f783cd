"""The inputs `check` and `bench` feed a model: the user's own arrays
(--inputs FILE.npz by input name, --input NAME=FILE.npy), checked against
the model's inputs before anything runs, and seeded random ones for the
rest. Integer inputs that reach an op's indices (GATHER, GATHER_ND,
EMBEDDING_LOOKUP, ONE_HOT, through RESHAPE, SQUEEZE, EXPAND_DIMS and CAST)
are drawn inside the table they index: random ids in [-100, 100] are
meaningless there, and the CPU interpreter refuses negative ones.

    plan = inputs.plan(model_bytes, user=[{"name": "ids", "file": "ids.npy"}])
    arrays = inputs.make(plan, interpreter.get_input_details(), seed)
"""
from __future__ import annotations

import dataclasses
import os
import zipfile

import numpy as np

from . import verify
from ._output import display

# Ops that hand their input 0 on element for element (flat order kept):
# an id traced through them is still an id.
PASS_THROUGH = ("RESHAPE", "SQUEEZE", "EXPAND_DIMS", "CAST")
# (op, the input position that holds the ids)
ID_READERS = {"GATHER": 1, "GATHER_ND": 1, "EMBEDDING_LOOKUP": 0, "ONE_HOT": 0}
_NUMPY = {"FLOAT32": np.float32, "FLOAT16": np.float16, "FLOAT64": np.float64, "INT8": np.int8, "UINT8": np.uint8,
          "INT16": np.int16, "UINT16": np.uint16, "INT32": np.int32, "UINT32": np.uint32, "INT64": np.int64,
          "UINT64": np.uint64, "BOOL": np.bool_}
UNTRACED_RANGE = (-100, 100)


class InputsError(ValueError):
    """User data that does not fit the model's inputs (or cannot be read):
    the message names the file, the input and what is wrong."""


@dataclasses.dataclass
class Input:
    """How one model input is filled. how: "user" (the user's array, the
    same on every invoke), "uniform" (floats in [-1, 1)), "quantized" (an
    int8/uint8 input's whole range), "bool", "ids" (integers in [0, high),
    per element when high is an array: GATHER_ND's columns) or "untraced"
    (an integer input that reaches no op's indices: [-100, 100])."""
    name: str
    shape: tuple
    dtype: str
    how: str
    detail: str = ""
    high: object = None  # "ids": an int, or an array of the input's size
    data: object = None  # "user": the array, already cast to dtype

    def to_dict(self) -> dict:
        return {"name": self.name, "shape": list(self.shape), "dtype": self.dtype, "how": self.how,
                "detail": self.detail}


def plan(data: bytes, user: list | None = None) -> list:
    """One Input per model input (subgraph 0's, in order). user: entries
    {"name", "file", "key"} as user_entries() gives them."""
    info, model = verify.verify_decoded(data)  # the decoded table: op options, buffers, quantization
    g = info.subgraphs[0]
    given = load_user(user or [], [g.tensors[t] for t in g.inputs])
    ids = _trace_ids(model, g)
    out = []
    for pos, t in enumerate(g.inputs):
        tensor = g.tensors[t]
        dtype = np.dtype(_NUMPY.get(tensor.type, np.float32)).name
        base = dict(name=tensor.name, shape=tuple(tensor.shape), dtype=dtype)
        if pos in given:
            arr, note = given[pos]
            out.append(Input(**base, how="user", detail=note, data=arr))
        elif t in ids and np.issubdtype(np.dtype(dtype), np.integer):
            high, why = ids[t]
            if np.ndim(high) == 0:
                detail = f"ids in [0, {int(high)}) for {why}"
            else:
                detail = f"ids in [0, {int(np.min(high))}..{int(np.max(high))}) per column for {why}"
            out.append(Input(**base, how="ids", detail=detail, high=high))
        elif np.issubdtype(np.dtype(dtype), np.floating):
            out.append(Input(**base, how="uniform", detail="random in [-1, 1)"))
        elif dtype == "bool":
            out.append(Input(**base, how="bool", detail="random true/false"))
        elif dtype in ("int8", "uint8") and _quantized(model, t):
            out.append(Input(**base, how="quantized", detail=f"random over {dtype}'s whole range"))
        else:
            lo, hi = UNTRACED_RANGE
            out.append(Input(**base, how="untraced", detail=f"random in [{lo}, {hi}]: reaches no GATHER, GATHER_ND, "
                                                            "EMBEDDING_LOOKUP or ONE_HOT indices"))
    return out


def make(inputs: list, details, seed: int) -> list:
    """The arrays for one invoke: the plan's, shaped and typed as the
    interpreter's input details say (a resized input keeps its plan)."""
    rng = np.random.default_rng(seed)
    out = []
    for k, det in enumerate(details):
        p = inputs[k] if k < len(inputs) else None
        shape, dtype = tuple(int(s) for s in det["shape"]), np.dtype(det["dtype"])
        if p is not None and p.how == "user" and tuple(p.data.shape) == shape:
            out.append(p.data)
        elif np.issubdtype(dtype, np.floating):
            out.append(rng.uniform(-1.0, 1.0, shape).astype(dtype))
        elif dtype == np.bool_:
            out.append(rng.integers(0, 2, shape).astype(dtype))
        elif p is not None and p.how == "ids":
            high = np.asarray(p.high)
            if high.ndim and high.size != int(np.prod(shape)):  # resized: GATHER_ND's columns repeat
                high = np.resize(high, int(np.prod(shape)))
            draw = rng.integers(0, np.maximum(high, 1), None if high.ndim else shape)
            out.append(np.asarray(draw).reshape(shape).astype(dtype))
        elif dtype in (np.int8, np.uint8) and (det.get("quantization") or (0.0, 0))[0] > 0:
            info = np.iinfo(dtype)
            out.append(rng.integers(info.min, info.max + 1, shape).astype(dtype))
        else:
            info = np.iinfo(dtype)
            lo, hi = UNTRACED_RANGE
            out.append(rng.integers(max(info.min, lo), min(info.max, hi) + 1, shape).astype(dtype))
    return out


# --------------------------------------------------------------------------
# Tracing ids


def _trace_ids(model, g) -> dict:
    """{input tensor index: (high, why)} for integer inputs that reach an
    op's indices; high: an exclusive bound (an int, or an array over the
    input's elements for GATHER_ND), the smallest over every reader."""
    ops = model["subgraphs"][0].get("operators", [])
    buffers = model.get("buffers", [])
    readers = {}
    for k, op in enumerate(g.operators):
        for pos, t in enumerate(op.inputs):
            if t >= 0:
                readers.setdefault(t, []).append((k, pos))
    found = {}
    for t in g.inputs:
        if g.tensors[t].type not in ("INT32", "INT64", "INT16", "INT8", "UINT8", "UINT16", "UINT32", "UINT64"):
            continue
        seen, todo, bounds = {t}, [t], []
        while todo:
            cur = todo.pop()
            for k, pos in readers.get(cur, []):
                op = g.operators[k]
                if op.op in PASS_THROUGH and pos == 0 and op.outputs and op.outputs[0] >= 0:
                    nxt = op.outputs[0]
                    if g.tensors[nxt].type.startswith(("INT", "UINT")) and nxt not in seen:
                        seen.add(nxt)
                        todo.append(nxt)
                elif ID_READERS.get(op.op) == pos:
                    b = _bound(op, ops[k], g, buffers, cur)
                    if b is not None:
                        bounds.append((b, f"{op.op} node {k}"))
        if bounds:
            n = g.tensors[t].elements
            high = None
            for b, _ in bounds:
                high = b if high is None else np.minimum(high, b)
            if np.ndim(high):
                high = np.resize(np.asarray(high, np.int64), n)
            whys = sorted({w for _, w in bounds})
            found[t] = (high, ", ".join(whys[:3]) + (f" and {len(whys) - 3} more" if len(whys) > 3 else ""))
    return found


def _bound(op, raw, g, buffers, indices):
    """The exclusive bound on the ids op reads (an int, or an int array
    over GATHER_ND's index columns), None when it cannot be told."""
    shape = lambda t: g.tensors[t].shape  # noqa: E731
    if op.op == "GATHER":
        params = shape(op.inputs[0])
        axis = int((raw.get("builtin_options") or {}).get("axis", 0))
        axis += len(params) if axis < 0 else 0
        return int(params[axis]) if 0 <= axis < len(params) else None
    if op.op == "EMBEDDING_LOOKUP":
        value = shape(op.inputs[1])
        return int(value[0]) if value else None
    if op.op == "GATHER_ND":
        params, idx = shape(op.inputs[0]), shape(indices)
        k = int(idx[-1]) if idx else 0
        if not 0 < k <= len(params):
            return None
        return np.asarray(params[:k], np.int64)  # column j of the ids indexes axis j
    if op.op == "ONE_HOT" and len(op.inputs) > 1:
        depth = g.tensors[op.inputs[1]]
        raw_data = buffers[depth.buffer].get("data") if depth.data_bytes and depth.buffer < len(buffers) else None
        if raw_data is None or depth.type not in ("INT32", "INT64"):
            return None
        value = np.frombuffer(bytes(raw_data), np.int32 if depth.type == "INT32" else np.int64)
        return int(value[0]) if value.size and value[0] > 0 else None
    return None


def _quantized(model, t) -> bool:
    q = model["subgraphs"][0]["tensors"][t].get("quantization") or {}
    return len(q.get("scale", ())) > 0


# --------------------------------------------------------------------------
# The user's data


def user_entries(npz: str | None, pairs: list | None) -> list:
    """The CLI's --inputs FILE.npz and --input NAME=FILE.npy as entries
    {"name", "file", "key"} (key: the array's name inside an .npz)."""
    entries = []
    if npz:
        entries.append({"name": None, "file": npz, "key": None})
    for pair in pairs or []:
        name, sep, path = pair.partition("=")
        if not sep or not name or not path:
            raise InputsError(f"--input {pair}: expected NAME=FILE.npy")
        entries.append({"name": name, "file": path, "key": None})
    return entries


def load_user(entries: list, tensors: list) -> dict:
    """{input position: (array cast to the input's dtype, how it was
    given)} for the user's entries; InputsError naming the file, the input
    and what does not fit (name, shape, dtype) otherwise."""
    by_name = {}
    for pos, t in enumerate(tensors):
        by_name.setdefault(t.name, pos)
    names = ", ".join(repr(t.name) for t in tensors) or "none"
    out = {}
    for e in entries:
        for name, arr, where in _arrays(e):
            if name not in by_name:
                raise InputsError(f"{where}: {name!r} is not an input of this model (its inputs: {names})")
            pos = by_name[name]
            if pos in out:
                raise InputsError(f"{where}: input {name!r} is given twice (also in {out[pos][1]})")
            t = tensors[pos]
            want = tuple(t.shape)
            if tuple(arr.shape) != want:
                raise InputsError(f"{where}: input {name!r} has shape {list(arr.shape)}; the model's input is "
                                  f"{list(want)}")
            want_dtype = np.dtype(_NUMPY.get(t.type, np.float32))
            note = f"from {where}" + (f" (cast from {arr.dtype.name})" if arr.dtype != want_dtype else "")
            out[pos] = (_cast(arr, want_dtype, name, where), note)
    return out


def _arrays(e):
    """(input name, array, "where" for messages) of one entry."""
    path = e["file"]
    shown = display(path)
    if not os.path.isfile(path):
        raise InputsError(f"{shown}: no such file")
    try:
        loaded = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as err:
        raise InputsError(f"{shown}: not a numpy .npy or .npz file: {err}") from None
    if isinstance(loaded, np.lib.npyio.NpzFile):
        with loaded:
            try:
                items = [(k, loaded[k]) for k in loaded.files]
            except (OSError, ValueError, EOFError, zipfile.BadZipFile) as err:
                raise InputsError(f"{shown}: a damaged .npz: {err}") from None
        if e.get("name") is not None:
            if len(items) != 1:
                raise InputsError(f"--input {e['name']}={shown}: an .npz of {len(items)} arrays; give one .npy, "
                                  "or the .npz with --inputs")
            return [(e["name"], items[0][1], f"--input {e['name']}={shown}")]
        return [(k, a, f"{shown}[{k!r}]") for k, a in items]
    if e.get("name") is None:
        raise InputsError(f"--inputs {shown}: a single array (.npy); --inputs takes an .npz of arrays named after "
                          "the inputs, --input NAME=FILE.npy one array")
    return [(e["name"], loaded, f"--input {e['name']}={shown}")]


def _cast(arr, want, name, where):
    """arr as dtype want where no value changes meaning: the same dtype;
    float to float (float64 to float32 rounds, said); integers that all fit;
    bool or integers to float where numpy calls it safe."""
    have = arr.dtype
    if have == want:
        return arr
    what = f"{where}: input {name!r} is {want.name}, the file's array {have.name}"
    if have.kind == "f" and want.kind == "f":
        return arr.astype(want)
    if have.kind in "iu" and want.kind in "iu":
        info = np.iinfo(want)
        if arr.size and (arr.min() < info.min or arr.max() > info.max):
            raise InputsError(f"{what}, with values outside {want.name}'s range [{info.min}, {info.max}]")
        return arr.astype(want)
    if have.kind in "biu" and want.kind == "f" and np.can_cast(have, want, "safe"):
        return arr.astype(want)
    raise InputsError(f"{what}: not converted (it would change values)")
