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
from tflite_gpu import _capi


def main():
    mode, path, out = sys.argv[1], sys.argv[2], sys.argv[3]
    mod = tflite_gpu.runtime()
    kwargs = dict(model_content=open(path, "rb").read(),
                  experimental_op_resolver_type=mod.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    delegate = None
    if mode == "gpu":
        delegate = tflite_gpu.load_delegate(log_level="silent")
        kwargs["experimental_delegates"] = [delegate]
    it = mod.Interpreter(**kwargs)
    it.allocate_tensors()
    rng = np.random.default_rng(0)
    for d in it.get_input_details():
        it.set_tensor(d["index"], rng.uniform(-1, 1, d["shape"]).astype(d["dtype"]))
    it.invoke()
    np.savez(out, *[it.get_tensor(d["index"]).copy() for d in it.get_output_details()])
    report = {"ok": True}
    if delegate is not None:
        nodes = _capi.delegate_nodes(delegate._get_native_delegate_pointer())
        report["densify"] = [n for n in nodes if n["op"] == "DENSIFY"]
        report["delegated"] = sum(n["where"] == "gpu" for n in nodes)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
