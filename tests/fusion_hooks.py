"""Shared by the fusion-pass tests: a model through the delegate with a
pass on and then off (its test hook set to "0", or for a pass the policy
switches, "policy:FIELD", that field), both against the CPU interpreter.

Tolerance: FP32 1e-4 of the output's scale (the fused kernels take the same
float operations in another order); FP16 storage 1e-2 relative L2 and of
the scale, as check's FP16 tolerance (half rounding of each stored
activation, about 5e-4 relative, through a few stored tensors)."""
import numpy as np

from conftest import assert_close, run_cpu, set_policy, set_policy
from test_fusion import _run_delegate


def switch(monkeypatch, hook, on):
    """A pass's switch: a test hook's variable, or "policy:FIELD"."""
    if hook.startswith("policy:"):
        set_policy(monkeypatch, **{hook[len("policy:"):]: on})
    else:
        monkeypatch.setenv(hook, on)


def launches_saved(monkeypatch, hook, model, inputs, fp16=False, keep_off=(), **options):
    """Launches per invoke the pass behind `hook` saves (off minus on),
    after checking both runs against the CPU interpreter. keep_off: other
    switches held off in both runs, so that only this pass differs."""
    for other in keep_off:
        switch(monkeypatch, other, "0")
    if fp16:
        options["is_precision_loss_allowed"] = 1
    want = run_cpu(model, inputs)
    tol = 1e-2 if fp16 else 1e-4
    launches = []
    for on in ("1", "0"):
        switch(monkeypatch, hook, on)
        got, stats = _run_delegate(model, inputs, **options)
        assert stats["cpu_nodes"] == 0, stats
        for g, w in zip(got, want):
            assert_close(g, w, rtol_l2=tol, atol=tol * max(1.0, float(np.abs(w).max())))
        launches.append(stats["dispatches"])
    return launches[1] - launches[0]


# (mode, fp16) pairs of the fusions every kernel set and VM mode takes: the
# GPU set in both precisions, the CPU set, and the VM's fine bodies (the
# ones it runs on a GPU) in FP32, where a fused op is a phase fewer.
ALL_MODES = [("gpu", False), ("gpu", True), ("cpu", False), ("persistent-fine", False)]
ALL_MODE_IDS = [f"{m}-{'fp16' if h else 'fp32'}" for m, h in ALL_MODES]


def mode_options(monkeypatch, mode):
    """Delegate options for a mode of ALL_MODES (persistent-fine sets the
    policy's vm_fine=1)."""
    if mode == "persistent-fine":
        set_policy(monkeypatch, vm_fine="1")
        return {"execution": "persistent"}
    return {"kernel_set": mode}
