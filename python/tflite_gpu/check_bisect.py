"""`tflite-gpu check --bisect`: the first node, in execution order, whose
output differs from the CPU interpreter's, found in one prepare.

The model runs once on the CPU interpreter (builtin kernels, every tensor
kept) and once through the delegate with capture on
(tflite_gpu_delegate_capture): the same graph, fusion and kernels the user
runs, and after each launch a read-back of what it wrote. Nothing is added
to the model: making an intermediate tensor a model output changes what a
delegate computes (a tensor that is both an output and read later was
itself a source of wrong results in other delegates). Each node's output is
then compared in order: a tensor the delegate materialised (read back), or
a model output. (A CPU node's tensor is not: the runtime may reuse its
memory; a CPU node can only go wrong on what it reads, which was compared.) A tensor fusion
keeps inside one launch is never written; the answer is then that launch,
with the nodes whose outputs it hid."""
from __future__ import annotations

import numpy as np

from . import _capi, interpreters
from . import inputs as model_inputs
from .check_base import ABS_FLOOR, FP16_ABS_FLOOR, FP16_RTOL_L2, FP32_RTOL_L2, STEP_MAX, apply_delegate, load
from .check_base import rel_l2 as _rel_l2


def _model(source) -> tuple:
    """(the operators in execution order: {"node", "op", "inputs",
    "outputs"}, per tensor index: {"name", "scale", "zero"}: a scale for
    int8/uint8 tensors, else 0), read from the flatbuffer (the runtime's
    get_tensor_details() crashes on some models)."""
    import tflite

    if "model_content" in source:
        data = source["model_content"]
    else:
        with open(source["model_path"], "rb") as f:
            data = f.read()
    model = tflite.Model.GetRootAsModel(data, 0)
    g = model.Subgraphs(0)
    names = {v: k for k, v in vars(tflite.BuiltinOperator).items() if not k.startswith("_")}
    ops = []
    for i in range(g.OperatorsLength()):
        op = g.Operators(i)
        code = model.OperatorCodes(op.OpcodeIndex())
        builtin = max(code.BuiltinCode(), code.DeprecatedBuiltinCode())
        name = names.get(builtin, str(builtin))
        if name == "CUSTOM" and code.CustomCode():
            name = code.CustomCode().decode(errors="replace")
        ins = [int(t) for t in op.InputsAsNumpy() if t >= 0] if op.InputsLength() else []
        outs = [int(t) for t in op.OutputsAsNumpy() if t >= 0] if op.OutputsLength() else []
        ops.append({"node": i, "op": name, "inputs": ins, "outputs": outs})
    tensors = {}
    for i in range(g.TensorsLength()):
        t = g.Tensors(i)
        q = t.Quantization()
        quant = t.Type() in (tflite.TensorType.INT8, tflite.TensorType.UINT8) and q is not None and q.ScaleLength() == 1
        tensors[i] = {"name": (t.Name() or b"?").decode(errors="replace"),
                      "scale": float(q.Scale(0)) if quant else 0.0,
                      "zero": int(q.ZeroPoint(0)) if quant and q.ZeroPointLength() else 0}
    return ops, tensors


def _as_float(it, index, meta) -> np.ndarray | None:
    """Tensor `index` of an interpreter as float64, dequantized when it is
    int8/uint8 with a scale; None when the runtime cannot give it."""
    try:
        value = np.asarray(it.get_tensor(index))
    except (ValueError, RuntimeError):
        return None
    if value.dtype in (np.int8, np.uint8) and meta["scale"]:
        return (value.astype(np.float64) - meta["zero"]) * meta["scale"]
    return value.astype(np.float64)


def _overwritten(cpu, ops) -> set:
    """Tensors whose memory a later op of the CPU interpreter wrote (the
    runtime computes some ops in place, preserve_all_tensors or not): their
    reference is gone, so they are not compared."""
    first_writer, gone = {}, set()
    for op in ops:
        for t in op["outputs"]:
            try:
                addr = cpu.tensor(t)().ctypes.data
            except (ValueError, RuntimeError):
                continue
            if addr in first_writer:
                gone.add(first_writer[addr])
            first_writer[addr] = t
    return gone


def _differs(a, e, tol, floor, step) -> tuple:
    """(differs, relative L2, max abs) of one tensor; in quantization steps
    when `step` > 0 (the CPU's integer kernels and the delegate's float ones
    land on the same grid point or a neighbour)."""
    if a.size != e.size:
        return True, float("inf"), float("inf")
    a, e = a.reshape(-1), e.reshape(-1)
    both = np.isfinite(a) & np.isfinite(e)
    if not np.array_equal(np.isfinite(a), np.isfinite(e)):
        return True, float("nan"), float("nan")
    a, e = a[both], e[both]
    max_abs = float(np.abs(a - e).max()) if e.size else 0.0
    rel = _rel_l2(a, e)
    if step > 0:
        return max_abs / step > STEP_MAX + 0.5, rel, max_abs
    return rel > tol and max_abs > floor, rel, max_abs


def bisect_model(source, options: dict, seed: int, precision: str, rtol_l2: float | None = None,
                 plan: list = ()) -> dict:
    """{"first": the first differing node or None, "compared", "hidden",
    "skipped"}; {"error": why} when it cannot be bisected. plan: how
    check filled the inputs (inputs.plan); none: plain random inputs."""
    ops, meta = _model(source)
    try:
        cpu = interpreters.make(source, cpu="builtin", preserve_all_tensors=True)
    except (RuntimeError, ValueError) as e:
        return {"error": f"the CPU interpreter cannot run this model ({str(e).strip().splitlines()[0]})"}
    inputs = model_inputs.make(list(plan), cpu.get_input_details(), seed)
    interpreters.run(cpu, inputs)
    delegate = load(options)
    # Not preserve_all_tensors here: LiteRT then gives every node a partition of its own, which
    # is not the fusion the user runs. What the delegate writes comes from the read-backs.
    it = apply_delegate(source, delegate)
    ptr = delegate._get_native_delegate_pointer()
    report = _capi.delegate_nodes(ptr)
    where = {n["node"]: n["where"] for n in report}
    folded = {n["node"] for n in report if n["reason"].startswith("constant folded")}
    groups = _capi.delegate_groups(ptr)
    _capi.delegate_capture(ptr, True)
    try:
        interpreters.run(it, inputs)
        captured, complete = _capi.delegate_captured(ptr)
    finally:
        _capi.delegate_capture(ptr, False)
    on_device = {r["tensor"]: r for r in captured}  # the last read of each tensor
    # The runtime's own tensors stay readable after the invoke for the model's outputs only.
    model_outputs = set(int(det["index"]) for det in it.get_output_details())
    fp16 = precision.upper() == "FP16"
    tol = rtol_l2 if rtol_l2 is not None else (FP16_RTOL_L2 if fp16 else FP32_RTOL_L2)
    floor = FP16_ABS_FLOOR if fp16 else ABS_FLOOR
    compared = hidden = skipped = 0
    ops = [op for op in ops if op["node"] not in folded]  # constants now: nothing computes them
    overwritten = _overwritten(cpu, ops)
    for op in ops:
        gpu_node = where.get(op["node"]) == "gpu"
        for t in op["outputs"]:
            expected = None if t in overwritten else _as_float(cpu, t, meta[t])
            if gpu_node and t in on_device:
                actual = on_device[t]["data"].astype(np.float64)
            elif t in model_outputs:
                actual = _as_float(it, t, meta[t])
            elif gpu_node:
                hidden += 1
                continue
            else:  # a CPU node's tensor, which the runtime may have reused: what it read was compared
                skipped += 1
                continue
            if expected is None or actual is None:
                skipped += 1
                continue
            bad, rel, max_abs = _differs(actual, expected, tol, floor, meta[t]["scale"])
            compared += 1
            if bad:
                first = {"node": op["node"], "op": op["op"], "tensor": t, "tensor_name": meta[t]["name"],
                         "shape": list(expected.shape), "rel_l2": rel, "max_abs": max_abs, "tolerance": tol,
                         "where": "gpu" if gpu_node else "cpu"}
                if gpu_node:
                    first.update(_group_of(op["node"], t, groups, on_device, ops))
                return {"first": first, "compared": compared - 1, "hidden": hidden, "skipped": skipped,
                        "complete": complete, "seed": seed}
    return {"first": None, "compared": compared, "hidden": hidden, "skipped": skipped, "complete": complete,
            "seed": seed}


def _group_of(node, tensor, groups, on_device, ops) -> dict:
    """The launch that computed `node`'s output `tensor`, and the nodes it
    computes whose outputs were never written (fusion hid them)."""
    row = on_device.get(tensor)
    g = next((x for x in groups if row and x["partition"] == row["partition"] and x["node"] == row["node"]), None)
    if g is None:
        g = next((x for x in groups if node in x["members"]), None)
    if g is None:
        return {"group": None, "hidden": []}
    outputs = {op["node"]: op["outputs"] for op in ops}
    hidden = [m for m in g["members"] if m != node and not any(t in on_device for t in outputs.get(m, []))]
    return {"group": {k: g[k] for k in ("partition", "tflite_node", "members", "kernels")}, "hidden": sorted(hidden)}
