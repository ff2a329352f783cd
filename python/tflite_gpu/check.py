"""Conformance check: one model on the stock CPU interpreter and through the
delegate, on the same seeded random inputs, compared output by output.

A model the CPU interpreter cannot run (MediaPipe's custom ops have no
kernels in the stock runtime) has no CPU reference. It is then checked
against the delegate itself in the other precision (FP32 against FP16
storage, within the FP16 tolerance), for finite outputs, and for
determinism (two invokes give identical outputs); the result says so.

Quantized outputs (int8/uint8, or float outputs of a DEQUANTIZE of one)
are compared in quantization steps instead of relative L2.

Outputs with NaN or infinities pass only when the delegate has the same
non-finite values in the same places as the reference; the finite values
are then compared as usual. A model of which the delegate takes no node is
reported as such ("nothing delegated"), never as a failure of the delegate.

The model is verified (verify.py) and its memory needs checked
(resources.py) before any interpreter sees it. The CLI runs check_model in
a child process (isolated_check), so a crash of the CPU interpreter or of
the delegate is reported with the stage it happened in."""
from __future__ import annotations

import dataclasses
import pathlib

import numpy as np

from . import _capi, interpreters, isolate, resolved, resources, verify
from . import inputs as model_inputs
from ._output import display
# The shared base, also this module's API (bench, explain and the tests import them from here).
from .check_base import (ABS_FLOOR, FP16_ABS_FLOOR, FP16_RTOL_L2, FP32_RTOL_L2, NOISE_FACTOR,  # noqa: F401
                         QUANT_RTOL_L2, STEP_MAX, STEP_WITHIN_1, DelegateLoadError, KernelBuildError, _quant_scale,
                         apply_delegate, kernel_build_failure, load, random_inputs)
from .check_base import rel_l2 as _rel_l2
from .interpreters import model_source  # noqa: F401 - also this module's API (bench, explain)

@dataclasses.dataclass
class OutputResult:
    name: str
    shape: tuple
    rel_l2: float  # over the elements finite on both sides
    max_abs: float
    tolerance: float
    cpu_noise: float  # relative L2 between XNNPACK and the builtin kernels
    abs_floor: float = ABS_FLOOR  # max abs error that passes whatever the relative L2
    # Quantized outputs: the quantization step (0: not compared in steps),
    # the share of elements within 1 step and the largest difference.
    step: float = 0.0
    within_1_step: float = 1.0
    max_steps: float = 0.0
    # Where the tolerance comes from: "FP32", "FP16" (the precision the
    # delegate resolved), "CPU noise", "quantized model" or "--tolerance".
    tolerance_from: str = "FP32"
    nonfinite: int = 0  # NaN and infinities in the reference
    nonfinite_mismatch: int = 0  # elements non-finite on one side only, or different non-finite values
    # Whose non-finite values the delegate's equal in full: "reference" (the builtin kernels), or "xnnpack"
    # where the builtin kernels differ (they saturate to +-3.4e38 where XNNPACK gives NaN); "" when none.
    nonfinite_matched: str = ""
    invoke: int = 1  # the invoke (1-based; the last one repeats the first input) whose comparison this is: the worst

    @property
    def passed(self) -> bool:
        return self.passed_by is not None

    @property
    def passed_by(self):
        """The rule that passed the output: "quantization steps", "relative
        L2", "max abs floor"; None when it failed."""
        if self.nonfinite_mismatch:
            return None
        if self.step > 0:
            ok = self.within_1_step >= STEP_WITHIN_1 and self.max_steps <= STEP_MAX
            return "quantization steps" if ok else None
        if not np.isfinite(self.rel_l2) or not np.isfinite(self.max_abs):
            return None
        if self.rel_l2 <= self.tolerance:
            return "relative L2"
        if self.max_abs <= self.abs_floor:
            return "max abs floor"
        return None


@dataclasses.dataclass
class CheckResult:
    model: str
    device: dict
    delegated_nodes: int
    cpu_nodes: int
    partitions: int
    outputs: list
    # What the outputs were compared with: "cpu" (the stock interpreter's
    # builtin kernels), or "delegate-fp32" / "delegate-fp16" when the CPU
    # cannot run the model (cpu_error says why).
    reference: str = "cpu"
    cpu_error: str | None = None
    deterministic: bool | None = None  # checked when there is no CPU reference
    kernel_cache: dict | None = None  # hits/misses/writes/rejected with serialization_dir, else None
    # Each invoke: {"invoke", "seed", "repeat_of", "passed", "failed": [output names], "matches_invoke"}:
    # the invokes on inputs of seeds seed, seed + 1, ..., then the first input again (repeat_of 1).
    # matches_invoke: a failing invoke whose outputs pass against that other invoke's reference (it
    # computed on another invoke's input: a result that depends on an earlier invoke).
    invokes: list = dataclasses.field(default_factory=list)
    bisect: dict | None = None  # check --bisect: the first node that differs (check_bisect.py), or nothing_to_find
    # Each partition's policy as built: {field: {"value", "source"}} (source: rule, measured, option
    # or override), so a result says which execution mode and choices were checked.
    policies: list = dataclasses.field(default_factory=list)
    # How each partition ran on the last invoke, from the library's run report (_capi.delegate_runs):
    # {"partition", "execution" (kernels, stepped or persistent), "launches", "fallback" (why, "" if none)}.
    runs: list = dataclasses.field(default_factory=list)
    # Each model input and how it was filled (inputs.Input.to_dict): the user's file, or generated
    # (random floats, ids inside the table they index, ...), the same plan on every invoke.
    inputs: list = dataclasses.field(default_factory=list)

    @property
    def nothing_delegated(self) -> bool:
        """The delegate took no node: the outputs are the CPU's own and say
        nothing about the delegate."""
        return self.delegated_nodes == 0

    @property
    def passed(self) -> bool:
        if self.nothing_delegated:
            return True
        return (all(o.passed for o in self.outputs) and self.deterministic is not False
                and all(i["passed"] for i in self.invokes))

    @property
    def verdict(self) -> str:
        if self.nothing_delegated:
            return "NOT DELEGATED"
        return "PASS" if self.passed else "FAIL"

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["model"] = display(self.model)
        d["passed"], d["verdict"] = self.passed, self.verdict
        for o, src in zip(d["outputs"], self.outputs):
            o["passed"], o["passed_by"] = src.passed, src.passed_by
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "CheckResult":
        names = {f.name for f in dataclasses.fields(cls)}
        out_names = {f.name for f in dataclasses.fields(OutputResult)}
        kw = {k: v for k, v in d.items() if k in names}
        kw["outputs"] = [OutputResult(**{k: (tuple(v) if k == "shape" else v) for k, v in o.items() if k in out_names})
                         for o in d["outputs"]]
        return cls(**kw)


def _quant_info(path) -> tuple:
    """(does the model hold int8/uint8 quantized tensors, {float output
    tensor index: scale} for outputs that are a DEQUANTIZE of a per-tensor
    quantized tensor}), read from the flatbuffer. (The runtime's
    get_tensor_details() crashes on some models, so it is not used.)"""
    try:
        import tflite
        model = tflite.Model.GetRootAsModel(pathlib.Path(path).read_bytes(), 0)
        g = model.Subgraphs(0)
    except Exception:  # noqa: BLE001 - the comparison then falls back to relative L2
        return False, {}
    quant_types = (tflite.TensorType.INT8, tflite.TensorType.UINT8)

    def scale_of(tensor):
        q = tensor.Quantization()
        return float(q.Scale(0)) if q is not None and q.ScaleLength() == 1 else 0.0

    quantized = any(g.Tensors(i).Type() in quant_types and g.Tensors(i).Quantization() is not None
                    and g.Tensors(i).Quantization().ScaleLength() > 0 for i in range(g.TensorsLength()))
    steps = {}
    outputs = set(g.OutputsAsNumpy().tolist()) if g.OutputsLength() else set()
    for i in range(g.OperatorsLength() if quantized else 0):
        op = g.Operators(i)
        code = model.OperatorCodes(op.OpcodeIndex())
        builtin = max(code.BuiltinCode(), code.DeprecatedBuiltinCode())
        if builtin != tflite.BuiltinOperator.DEQUANTIZE or op.OutputsLength() != 1 or op.InputsLength() != 1:
            continue
        out, src = int(op.Outputs(0)), g.Tensors(int(op.Inputs(0)))
        if out in outputs and src.Type() in quant_types and scale_of(src) > 0:
            steps[out] = scale_of(src)
    return quantized, steps


def _nonfinite(actual, expected) -> tuple:
    """(non-finite elements of the reference, elements whose non-finite
    values differ: NaN or an infinity on one side only or of the other sign),
    and the mask of the elements finite on both sides."""
    fa, fe = np.isfinite(actual), np.isfinite(expected)
    both = fa & fe
    same = (actual == expected) | (np.isnan(actual) & np.isnan(expected))
    return int((~fe).sum()), int((~both & ~same).sum()), both


def _compare(det, actual, expected, tol, noise, dequantize_steps, tol_from="FP32",
             abs_floor=ABS_FLOOR, other=None) -> OutputResult:
    """One output: in quantization steps for quantized outputs (int8/uint8,
    or a DEQUANTIZE of one), else relative L2 and max abs, over the elements
    that are finite on both sides. The non-finite ones must equal the
    reference's, or all of other's (the CPU's second implementation,
    XNNPACK): two correct CPU kernels can disagree there."""
    name, shape = det["name"], tuple(int(s) for s in expected.shape)
    a64, e64 = actual.astype(np.float64), expected.astype(np.float64)
    nonfinite, mismatch, both = _nonfinite(a64, e64)
    matched = "reference" if nonfinite and not mismatch else ""
    if mismatch and other is not None and other.shape == actual.shape:
        other_nonfinite, other_mismatch, _ = _nonfinite(a64, other.astype(np.float64))
        if other_nonfinite and not other_mismatch:
            nonfinite, mismatch, matched = other_nonfinite, 0, "xnnpack"
    if nonfinite or mismatch:
        a64, e64 = a64[both], e64[both]
    max_abs = float(np.abs(a64 - e64).max()) if e64.size else 0.0
    common = dict(tolerance_from=tol_from, nonfinite=nonfinite, nonfinite_mismatch=mismatch, abs_floor=abs_floor,
                  nonfinite_matched=matched)
    if np.dtype(det["dtype"]) in (np.int8, np.uint8) and _quant_scale(det) > 0:
        step, steps = _quant_scale(det), np.abs(a64 - e64)
        max_abs *= step
    elif det.get("index") in dequantize_steps:
        step = dequantize_steps[det["index"]]
        steps = np.rint(np.abs(a64 - e64) / step)
    else:
        return OutputResult(name, shape, _rel_l2(a64, e64), max_abs, tol, noise, **common)
    within = float((steps <= 1).mean()) if steps.size else 1.0
    return OutputResult(name, shape, _rel_l2(a64, e64), max_abs, tol, noise, step=step, within_1_step=within,
                        max_steps=float(steps.max()) if steps.size else 0.0, **common)


DEFAULT_INVOKES = 3


def check_model(model, options: dict | None = None, seed: int = 0, rtol_l2: float | None = None,
                invokes: int = DEFAULT_INVOKES, bisect: bool = False, user_inputs: list | None = None) -> CheckResult:
    """Runs `model` (a path) on the CPU and with the delegate; see CheckResult.

    `invokes` invokes on inputs of seeds seed, seed + 1, ..., each compared
    with the CPU interpreter on the same input, then the first input again:
    a result that depends on an earlier invoke shows as a mismatch there.
    With bisect, a failing model is also bisected to the first node whose
    output differs (check_bisect.py); a passing one's bisect says there
    was nothing to find ({"nothing_to_find": why}). user_inputs: the
    user's arrays (inputs.user_entries), the same on every invoke; the
    other inputs are generated (inputs.plan).

    When the CPU interpreter cannot run the model (for example MediaPipe
    custom ops), the reference is the delegate in the other precision; see
    the module docstring. Raises verify.ModelError for a file that is not a
    valid model or too large for this machine, DelegateLoadError (a
    ValueError) when the delegate refuses its options or finds no device,
    and RuntimeError when neither the CPU nor the delegate can run it.
    """
    options = dict(options or {})
    path = pathlib.Path(model)
    info = verify.verify_file(path)
    resources.check_fits(path, info, "check", interpreters=1, io_copies=3, delegate_options=options)
    plan = model_inputs.plan(verify.read_model(path), user_inputs)  # InputsError before anything runs
    source = model_source(path)
    isolate.phase("delegate:create")
    delegate = load(options)  # first: bad options or no device are found before any long run
    isolate.phase("cpu")
    try:
        cpu = interpreters.make(source, cpu="builtin")
    except (RuntimeError, ValueError) as e:
        r = _check_without_cpu(path, source, options, seed, rtol_l2, _first_line(e), delegate, invokes, plan)
        if bisect and r.passed:
            r.bisect = _nothing_to_find(r)
        return r
    out_details = cpu.get_output_details()
    seeds = [seed + i for i in range(max(1, invokes))]
    inputs = [model_inputs.make(plan, cpu.get_input_details(), s) for s in seeds]
    expected = [interpreters.run(cpu, x) for x in inputs]
    del cpu
    isolate.phase("cpu:xnnpack")
    try:
        xnnpack = interpreters.make(source)
        xnn = [interpreters.run(xnnpack, x) for x in inputs]
        # The CPU's own disagreement, the largest over the inputs.
        noise = np.max([[_rel_l2(a, e) if np.isfinite(e).all() and np.isfinite(a).all() else 0.0
                         for a, e in zip(outs, ref)] for outs, ref in zip(xnn, expected)], axis=0).tolist()
        del xnnpack
    except (RuntimeError, ValueError):  # XNNPACK refuses what the builtin kernels ran: no noise estimate
        noise, xnn = [0.0] * len(expected[0]), None

    isolate.phase("delegate")
    gpu = apply_delegate(source, delegate)
    stats = _capi.delegate_stats(delegate._get_native_delegate_pointer())
    device = _capi.delegate_device(delegate._get_native_delegate_pointer())
    actual = [interpreters.run(gpu, x) for x in inputs + inputs[:1]]  # then the first input again
    after = _capi.delegate_stats(delegate._get_native_delegate_pointer())  # the cache is written by the first invoke
    runs = _capi.delegate_runs(delegate._get_native_delegate_pointer())  # as the last invoke ran, not as asked
    del gpu
    cache = None
    if resolved.options(options)["serialization_dir"]:  # under any of its spellings
        cache = {k: after["cache_" + k] for k in ("hits", "misses", "writes", "rejected")}

    # The precision the library resolved from the options (priorities
    # included), not one re-derived here from their spellings.
    precision = device["precision"].upper()
    if rtol_l2 is not None:
        base, base_from = rtol_l2, "--tolerance"
    else:
        base, base_from = (FP16_RTOL_L2 if precision == "FP16" else FP32_RTOL_L2), precision
    quantized, steps = _quant_info(path)
    if quantized and rtol_l2 is None and QUANT_RTOL_L2 > base:
        base, base_from = QUANT_RTOL_L2, "quantized model"
    bounds = []
    for floor in noise:
        tol, tol_from = base, base_from
        if rtol_l2 is None and NOISE_FACTOR * floor > base:
            tol, tol_from = NOISE_FACTOR * floor, "CPU noise"
        bounds.append((tol, floor, tol_from))

    def compare(k, det, a, e, ref):
        tol, floor, tol_from = bounds[k]
        return _compare(det, a, e, tol, floor, steps, tol_from, other=xnn[ref][k] if xnn else None)

    outputs, invoke_rows = judge_invokes(out_details, actual, expected, seeds, compare)
    r = CheckResult(str(path), device, stats["delegated_nodes"], stats["cpu_nodes"], stats["partitions"],
                    outputs, kernel_cache=cache, invokes=invoke_rows, policies=stats["policies"], runs=runs,
                    inputs=[p.to_dict() for p in plan])
    if bisect and (r.passed or r.nothing_delegated):
        r.bisect = _nothing_to_find(r)
    elif bisect:
        from .check_bisect import bisect_model

        isolate.phase("bisect")
        failing = next(i for i in invoke_rows if not i["passed"])
        r.bisect = bisect_model(source, options, failing["seed"], precision, rtol_l2, plan=plan)
    return r


def _nothing_to_find(r: CheckResult) -> dict:
    """check --bisect's answer for a check that passed: no node to look for."""
    return {"nothing_to_find": "nothing delegated" if r.nothing_delegated else
            "every output agreed with the reference on every invoke"}


def judge_invokes(out_details, actual, expected, seeds, compare) -> tuple:
    """(each output's worst comparison over the invokes, the invokes' rows;
    see CheckResult.invokes). actual: the delegate's outputs of each input,
    then of the first input again; expected: the reference's of each input;
    compare(k, detail, actual, expected, ref) -> OutputResult for output k
    against the reference of invoke ref."""
    def one(run, ref):
        return [compare(k, det, a, e, ref) for k, (det, a, e) in enumerate(zip(out_details, actual[run],
                                                                                expected[ref]))]

    n = len(expected)
    per_run = [one(run, run if run < n else 0) for run in range(len(actual))]
    outputs = []
    for k in range(len(out_details)):
        run = max(range(len(per_run)), key=lambda i: (not per_run[i][k].passed, _badness(per_run[i][k])))
        worst = per_run[run][k]
        worst.invoke = run + 1
        outputs.append(worst)
    rows = []
    for run, results in enumerate(per_run):
        own = run if run < n else 0
        failed = [o.name for o in results if not o.passed]
        matches = None
        if failed:  # computed on another invoke's input? (stale buffers, state carried between invokes)
            matches = next((j + 1 for j in range(n) if j != own and all(o.passed for o in one(run, j))), None)
        rows.append({"invoke": run + 1, "seed": seeds[own], "repeat_of": 1 if run >= n else None,
                     "passed": not failed, "failed": failed, "matches_invoke": matches})
    return outputs, rows


def _badness(o: OutputResult) -> float:
    """How far an output is from its bound (for the worst of several invokes)."""
    if o.step > 0:
        return float(o.max_steps) if np.isfinite(o.max_steps) else float("inf")
    x = o.rel_l2 / max(o.tolerance, 1e-30)
    return float(x) if np.isfinite(x) else float("inf")


def _first_line(e) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def _delegate_run(source, options, inputs_for, delegate=None, repeat=False):
    """(interpreter details, outputs of each input, stats, device) of the
    model through the delegate (or a new one with these options);
    inputs_for(input details) gives the list of inputs; repeat: the first
    input once more at the end."""
    delegate = delegate or load(options)
    it = apply_delegate(source, delegate)
    stats = _capi.delegate_stats(delegate._get_native_delegate_pointer())
    device = _capi.delegate_device(delegate._get_native_delegate_pointer())
    inputs = inputs_for(it.get_input_details())
    outs = [interpreters.run(it, x) for x in inputs + (inputs[:1] if repeat else [])]
    stats = dict(stats, runs=_capi.delegate_runs(delegate._get_native_delegate_pointer()))
    details = it.get_output_details()
    del it
    return details, outs, stats, device


def _check_without_cpu(path, source, options, seed, rtol_l2, cpu_error, delegate=None,
                       invokes=DEFAULT_INVOKES, plan=()) -> CheckResult:
    """The delegate as requested against the delegate in the other
    precision, within the FP16 tolerance, on each input; the first input
    again must give the first invoke's outputs exactly (determinism)."""
    seeds = [seed + i for i in range(max(1, invokes))]
    inputs_for = lambda det: [model_inputs.make(plan, det, s) for s in seeds]  # noqa: E731
    isolate.phase("delegate")
    try:
        details, actual, stats, device = _delegate_run(source, options, inputs_for, delegate=delegate, repeat=True)
    except KernelBuildError:  # tflite-gpu failed on this device: not a model neither side can run
        raise
    except RuntimeError as e:
        raise RuntimeError(f"the CPU interpreter cannot run it ({cpu_error}), and neither can the "
                           f"delegate ({_first_line(e)})") from e
    fp16 = device["precision"] == "fp16"  # as the library resolved it
    other = dict(options)
    other.pop("is_precision_loss_allowed", None)  # set last: the library applies options in order
    other["is_precision_loss_allowed"] = "0" if fp16 else "1"
    isolate.phase("delegate:other precision")
    _, expected, _, other_device = _delegate_run(source, other, inputs_for)
    if other_device["precision"] == device["precision"]:
        raise RuntimeError(f"the CPU interpreter cannot run it ({cpu_error}), and the delegate could not "
                           f"be run in a second precision to compare with (both ran {device['precision']})")
    deterministic = all(np.array_equal(a, b, equal_nan=True) if a.dtype.kind == "f" else np.array_equal(a, b)
                        for a, b in zip(actual[0], actual[-1]))
    tol, tol_from = (rtol_l2, "--tolerance") if rtol_l2 is not None else (FP16_RTOL_L2, "FP16")
    outputs, runs = judge_invokes(details, actual, expected, seeds,
                                  lambda k, det, a, e, ref: _compare(det, a, e, tol, 0.0, {}, tol_from,
                                                                     FP16_ABS_FLOOR))
    return CheckResult(str(path), device, stats["delegated_nodes"], stats["cpu_nodes"], stats["partitions"], outputs,
                       reference=f"delegate-{other_device['precision']}", cpu_error=cpu_error,
                       deterministic=deterministic, invokes=runs, policies=stats["policies"], runs=stats["runs"],
                       inputs=[p.to_dict() for p in plan])


def isolated_check(path, options, seed, rtol_l2, invokes=DEFAULT_INVOKES, bisect=False, user_inputs=None):
    """check_model in a child process (isolate.run("check", ...)): the
    result as a dict, or a CliError with the kind of the problem."""
    return as_cli_errors(path, lambda: check_model(path, options, seed=seed, rtol_l2=rtol_l2, invokes=invokes,
                                                   bisect=bisect, user_inputs=user_inputs).to_dict() | {"model": path})


def as_cli_errors(path, job):
    """job() with its failures as the CLI's errors: a bad model file, a
    delegate that cannot load, kernels the device's compiler rejects (a
    failure of tflite-gpu on that device, exit 5), a model neither side can
    run."""
    from . import errors

    try:
        return job()
    except verify.ModelError as e:
        raise errors.CliError("model", str(e)) from e
    except model_inputs.InputsError as e:
        raise errors.CliError("usage", str(e)) from e
    except DelegateLoadError as e:
        raise errors.delegate_error(e) from e
    except KernelBuildError as e:
        raise errors.CliError("kernel-build", f"{display(path)}: {e}") from e
    except (RuntimeError, ValueError) as e:
        raise errors.CliError("model", f"{display(path)}: cannot run this model: {errors.reason(e)}") from e
