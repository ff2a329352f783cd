"""Runs one model in this (child) process and prints one JSON line, so a
crash kills only the child. Used by tests/test_sparse_mutations.py.

  sparse_child.py cpu|gpu MODEL OUT.npz

cpu: the stock builtin kernels alone. gpu: the delegate, with the same
builtin kernels (no XNNPACK) for whatever stays on the CPU. The JSON holds,
for gpu, each DENSIFY node's placement and reason."""
import json
import sys

import numpy as np

import tflite_gpu
from tflite_gpu import _capi, interpreters


def main():
    mode, path, out = sys.argv[1], sys.argv[2], sys.argv[3]
    delegate = tflite_gpu.load_delegate(log_level="silent") if mode == "gpu" else None
    it = interpreters.make(open(path, "rb").read(), delegate=delegate, cpu="builtin")
    rng = np.random.default_rng(0)
    inputs = [rng.uniform(-1, 1, d["shape"]).astype(d["dtype"]) for d in it.get_input_details()]
    np.savez(out, *interpreters.run(it, inputs))
    report = {"ok": True}
    if delegate is not None:
        nodes = _capi.delegate_nodes(delegate._get_native_delegate_pointer())
        report["densify"] = [n for n in nodes if n["op"] == "DENSIFY"]
        report["delegated"] = sum(n["where"] == "gpu" for n in nodes)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
