"""Runs one model in this (child) process and prints one JSON line, so a
crash kills only the child. Used by tests/test_sparse_mutations.py.

  sparse_child.py cpu|gpu MODEL OUT.npz

cpu: the stock builtin kernels alone. gpu: the delegate, with the same
builtin kernels (no XNNPACK) for whatever stays on the CPU.

Two JSON lines, each flushed: {"stage": "prepared", ...} once the
interpreter is built and its tensors allocated (for gpu: each DENSIFY
node's placement and reason), then {"stage": "done"} after the invoke. A
child that dies between them died in the invoke, where a malformed DENSIFY
left on the CPU may write out of bounds (the stock kernel does not check)."""
import json
import sys

import numpy as np

import tflite_gpu
from tflite_gpu import _capi, interpreters


def main():
    mode, path, out = sys.argv[1], sys.argv[2], sys.argv[3]
    delegate = tflite_gpu.load_delegate(log_level="silent") if mode == "gpu" else None
    it = interpreters.make(open(path, "rb").read(), delegate=delegate, cpu="builtin")
    report = {"stage": "prepared"}
    if delegate is not None:
        nodes = _capi.delegate_nodes(delegate._get_native_delegate_pointer())
        report["densify"] = [n for n in nodes if n["op"] == "DENSIFY"]
        report["delegated"] = sum(n["where"] == "gpu" for n in nodes)
    print(json.dumps(report), flush=True)
    rng = np.random.default_rng(0)
    inputs = [rng.uniform(-1, 1, d["shape"]).astype(d["dtype"]) for d in it.get_input_details()]
    np.savez(out, *interpreters.run(it, inputs))
    print(json.dumps({"stage": "done"}), flush=True)


if __name__ == "__main__":
    main()
