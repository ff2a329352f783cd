"""Runs in a subprocess against a library built with make FAULT_INJECTION=1
(TFLITE_GPU_LIBRARY points at it): fails the Nth OpenCL call of each kind
in turn, records what Python saw, and checks after every fault that a fresh
delegate in the same process still gives the CPU's results. Prints one
JSON object."""
import json
import sys

import numpy as np

import tflite_gpu
from tflite_gpu import _capi

sys.path.insert(0, sys.argv[1])  # tests/
from test_resize import C_IN, _chain_model, _interp, _run  # noqa: E402

MODEL = _chain_model()
X = np.random.default_rng(1).uniform(-1, 1, [1, 9, 7, C_IN]).astype(np.float32)
CPU = _interp(MODEL)
CPU.allocate_tensors()
WANT = _run(CPU, X)


def healthy():
    _capi.fault_inject("")
    it = _interp(MODEL, tflite_gpu.load_delegate(log_level="silent"))
    it.allocate_tensors()
    got = _run(it, X)
    return all(np.abs(g - w).max() <= 1e-4 for g, w in zip(got, WANT))


def attempt(spec, max_n):
    """Faults spec=1..max_n until a run succeeds; one record per failure."""
    records = []
    for n in range(1, max_n + 1):
        stage = "create"
        try:
            if spec == "create":
                _capi.fault_inject(f"{spec}={n}")
            delegate = tflite_gpu.load_delegate(log_level="warning")
            _capi.fault_inject(f"{spec}={n}")
            stage = "apply"
            it = _interp(MODEL, delegate)
            it.allocate_tensors()
            stage = "invoke"
            got = _run(it, X)
            _capi.fault_inject("")
            ok = all(np.abs(g - w).max() <= 1e-4 for g, w in zip(got, WANT))
            if stage == "invoke":  # the same interpreter again, faults off
                ok = ok and all(np.abs(g - w).max() <= 1e-4 for g, w in zip(_run(it, X), WANT))
            records.append(dict(n=n, stage="none", ok=ok))
            del it, delegate
            break
        except Exception as e:  # noqa: BLE001 - recorded for the parent
            _capi.fault_inject("")
            records.append(dict(n=n, stage=stage, type=type(e).__name__, msg=str(e)))
        records[-1]["healthy_after"] = healthy()
    return records


out = {"fault_injection": _capi.debug_counters()["fault_injection"]}
live0 = None
healthy()  # warm-up: programs built once in this process's PoCL cache
import gc  # noqa: E402
gc.collect()
live0 = _capi.live_cl_objects()
for kind, limit in (("create", 4), ("build", 12), ("alloc", 80), ("enqueue", 40), ("transfer", 6)):
    out[kind] = attempt(kind, limit)
gc.collect()
out["live_leaked"] = _capi.live_cl_objects() - live0
print(json.dumps(out))
