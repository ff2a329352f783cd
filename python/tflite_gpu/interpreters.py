"""The one interpreter factory and the one way to run a model with given
inputs, for the CLI (check, bench, explain and their child processes) and
the tests.

    it = interpreters.make("m.tflite")                       # CPU, XNNPACK
    it = interpreters.make("m.tflite", cpu="builtin")        # CPU, builtin kernels only
    it = interpreters.make("m.tflite", delegate=d)           # through the delegate
    outs = interpreters.run(it, inputs)

Either runtime (tflite_runtime or ai_edge_litert, see tflite_gpu.runtime).
"""
from __future__ import annotations

import pathlib

import numpy as np

from . import runtime

CPU_KINDS = ("xnnpack", "builtin")


def model_source(model) -> dict:
    """Interpreter keyword arguments for a model: model_content for bytes,
    model_path for a file, or its bytes (model_content) when the name cannot
    be passed to the runtime (a name that is not UTF-8). A dict is taken as
    already made."""
    if isinstance(model, dict):
        return model
    if isinstance(model, (bytes, bytearray)):
        return {"model_content": bytes(model)}
    s = str(model)
    try:
        s.encode("utf-8")
        return {"model_path": s}
    except UnicodeEncodeError:
        return {"model_content": pathlib.Path(model).read_bytes()}


def make(model, *, delegate=None, cpu: str = "xnnpack", threads: int | None = None, allocate: bool = True,
         preserve_all_tensors: bool = False):
    """An interpreter for `model` (a path, .tflite bytes or model_source's
    dict): through `delegate` when given; `cpu` picks the CPU kernels of the
    nodes it leaves (all nodes without one): XNNPACK ("xnnpack", the
    runtime's default) or the builtin kernels only ("builtin"). Tensors
    allocated unless allocate=False; preserve_all_tensors keeps every
    intermediate tensor readable after an invoke (no memory reuse: check
    --bisect)."""
    mod = runtime()
    kwargs = dict(model_source(model))
    if threads is not None:
        kwargs["num_threads"] = threads
    if cpu not in CPU_KINDS:
        raise ValueError(f"unknown CPU kind {cpu!r} (one of {', '.join(CPU_KINDS)})")
    if delegate is not None:
        kwargs["experimental_delegates"] = [delegate]
    if preserve_all_tensors:
        kwargs["experimental_preserve_all_tensors"] = True
    if cpu == "builtin":
        kwargs["experimental_op_resolver_type"] = mod.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES
    it = mod.Interpreter(**kwargs)
    if allocate:
        it.allocate_tensors()
    return it


def set_inputs(it, inputs) -> None:
    """Sets the interpreter's inputs, in input order, each as the input's dtype."""
    for det, x in zip(it.get_input_details(), inputs):
        it.set_tensor(det["index"], np.asarray(x, dtype=det["dtype"]))


def run(it, inputs) -> list:
    """Sets `inputs`, invokes once and returns copies of the outputs."""
    set_inputs(it, inputs)
    it.invoke()
    return [it.get_tensor(det["index"]).copy() for det in it.get_output_details()]


def run_model(model, inputs, *, delegate=None, cpu: str = "xnnpack", threads: int | None = None) -> list:
    """The outputs of one run of `model` with `inputs` (see make, run)."""
    return run(make(model, delegate=delegate, cpu=cpu, threads=threads), inputs)
