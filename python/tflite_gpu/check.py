"""Conformance check: one model on the stock CPU interpreter and through the
delegate, on the same seeded random inputs, compared output by output.

A model the CPU interpreter cannot run (MediaPipe's custom ops have no
kernels in the stock runtime) has no CPU reference. It is then checked
against the delegate itself in the other precision (FP32 against FP16
storage, within the FP16 tolerance), for finite outputs, and for
determinism (two invokes give identical outputs); the result says so.

Quantized outputs (int8/uint8, or float outputs of a DEQUANTIZE of one)
are compared in quantization steps instead of relative L2."""
from __future__ import annotations

import dataclasses
import pathlib

import numpy as np

from . import _capi, load_delegate, runtime

# FP32: both sides compute in float32 and differ only in summation order;
# 1e-4 relative L2 leaves room for that on deep models and still catches
# any wrong index or weight. FP16 storage rounds every activation to an
# 11-bit mantissa (relative error ~5e-4 per step, compounding over layers).
FP32_RTOL_L2 = 1e-4
FP16_RTOL_L2 = 1e-2
# Some outputs are so ill-conditioned that the CPU's own two FP32 paths
# (XNNPACK and the builtin kernels) disagree by more than 1e-4 (for example
# pose_landmark_full's near-zero sigmoid output). There the bound becomes
# NOISE_FACTOR times that measured disagreement: the delegate must be as
# close to the reference as another correct FP32 implementation is.
NOISE_FACTOR = 2.0
# An output whose values are all tiny (a saturated sigmoid, ~1e-14) can
# differ by 1e-3 relative while agreeing to 1e-17 absolute. Differences
# below float32's spacing at 1.0 (1.2e-7) are not meaningful for such
# outputs, so an output also passes when max abs error <= ABS_FLOOR.
ABS_FLOOR = 1e-7
# Without a CPU reference, FP32 is compared with FP16 storage. An output of
# small values (a saturated sigmoid: selfie_segmentation's mask is ~1e-7
# almost everywhere on random inputs) then differs by a few % relative
# while agreeing to well below half's spacing at 1.0 (2^-10); such an
# output also passes when max abs error <= FP16_ABS_FLOOR.
FP16_ABS_FLOOR = 2.0 ** -10
# Quantized outputs (int8/uint8, and float outputs of a DEQUANTIZE of one)
# are compared in quantization steps: the delegate computes in float and
# rounds once per op output onto the model's grid, the CPU's integer kernels
# requantize with fixed-point multipliers and lookup tables, so both land on
# the same grid point or a neighbour. >= 99% within 1 step, all within 2.
STEP_WITHIN_1 = 0.99
STEP_MAX = 2
# Other float outputs of a model with quantized tensors (dynamic-range
# "hybrid" models: int8 weights, float activations): the CPU's hybrid
# kernels quantize each activation row to int8 on the fly (about 1/127 of
# its range per value), the delegate uses the float activation.
QUANT_RTOL_L2 = 2e-2


@dataclasses.dataclass
class OutputResult:
    name: str
    shape: tuple
    rel_l2: float
    max_abs: float
    tolerance: float
    cpu_noise: float  # relative L2 between XNNPACK and the builtin kernels
    abs_floor: float = ABS_FLOOR  # max abs error that passes whatever the relative L2
    # Quantized outputs: the quantization step (0: not compared in steps),
    # the share of elements within 1 step and the largest difference.
    step: float = 0.0
    within_1_step: float = 1.0
    max_steps: float = 0.0

    @property
    def passed(self) -> bool:
        if self.step > 0:
            return self.within_1_step >= STEP_WITHIN_1 and self.max_steps <= STEP_MAX
        if not np.isfinite(self.rel_l2) or not np.isfinite(self.max_abs):
            return False
        return self.rel_l2 <= self.tolerance or self.max_abs <= self.abs_floor


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

    @property
    def passed(self) -> bool:
        return all(o.passed for o in self.outputs) and self.deterministic is not False

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["passed"] = self.passed
        for o, src in zip(d["outputs"], self.outputs):
            o["passed"] = src.passed
        return d


def random_inputs(details, seed: int) -> list:
    """Seeded inputs, never zeros: floats uniform in [-1, 1) (the range image
    models are trained on, [0, 1] or [-1, 1]), quantized int8/uint8 over
    their whole range, other ints small."""
    rng = np.random.default_rng(seed)
    out = []
    for det in details:
        shape, dtype = det["shape"], np.dtype(det["dtype"])
        if np.issubdtype(dtype, np.floating):
            out.append(rng.uniform(-1.0, 1.0, shape).astype(dtype))
        elif dtype == np.bool_:
            out.append(rng.integers(0, 2, shape).astype(dtype))
        elif dtype in (np.int8, np.uint8) and _quant_scale(det) > 0:
            info = np.iinfo(dtype)
            out.append(rng.integers(info.min, info.max + 1, shape).astype(dtype))
        else:
            info = np.iinfo(dtype)
            out.append(rng.integers(max(info.min, -100), min(info.max, 100) + 1, shape).astype(dtype))
    return out


def _quant_scale(det) -> float:
    """The per-tensor scale of a tensor detail, 0 when not quantized."""
    q = det.get("quantization") or (0.0, 0)
    return float(q[0])


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


def _compare(det, actual, expected, tol, noise, dequantize_steps) -> OutputResult:
    """One output: in quantization steps for quantized outputs (int8/uint8,
    or a DEQUANTIZE of one), else relative L2 and max abs."""
    name, shape = det["name"], tuple(int(s) for s in expected.shape)
    a64, e64 = actual.astype(np.float64), expected.astype(np.float64)
    max_abs = float(np.abs(a64 - e64).max()) if expected.size else 0.0
    if np.dtype(det["dtype"]) in (np.int8, np.uint8) and _quant_scale(det) > 0:
        step, steps = _quant_scale(det), np.abs(a64 - e64)
        max_abs *= step
    elif det["index"] in dequantize_steps:
        step = dequantize_steps[det["index"]]
        steps = np.rint(np.abs(a64 - e64) / step) if np.isfinite(a64).all() else np.full(a64.shape, np.inf)
    else:
        return OutputResult(name, shape, _rel_l2(actual, expected), max_abs, tol, noise)
    within = float((steps <= 1).mean()) if steps.size else 1.0
    return OutputResult(name, shape, _rel_l2(a64, e64), max_abs, tol, noise, step=step, within_1_step=within,
                        max_steps=float(steps.max()) if steps.size else 0.0)


def _run(interpreter, inputs):
    for det, x in zip(interpreter.get_input_details(), inputs):
        interpreter.set_tensor(det["index"], x)
    interpreter.invoke()
    return [interpreter.get_tensor(det["index"]).copy() for det in interpreter.get_output_details()]


def _rel_l2(actual, expected) -> float:
    a, e = np.asarray(actual, np.float64), np.asarray(expected, np.float64)
    if not e.size:
        return 0.0
    return float(np.linalg.norm(a - e) / max(np.linalg.norm(e), 1e-30))


def _is_fp16(options: dict) -> bool:
    v = str(options.get("is_precision_loss_allowed", options.get("gpu_precision_loss_allowed", "-1"))).lower()
    return v in ("1", "true", "yes", "on")


def check_model(model, options: dict | None = None, seed: int = 0, rtol_l2: float | None = None) -> CheckResult:
    """Runs `model` (a path) on the CPU and with the delegate; see CheckResult.

    When the CPU interpreter cannot run the model (for example MediaPipe
    custom ops), the reference is the delegate in the other precision; see
    the module docstring. Raises RuntimeError when the delegate cannot run
    it either.
    """
    options = dict(options or {})
    mod = runtime()
    path = str(pathlib.Path(model))
    try:
        cpu = mod.Interpreter(model_path=path,
                              experimental_op_resolver_type=mod.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
        cpu.allocate_tensors()
    except (RuntimeError, ValueError) as e:
        return _check_without_cpu(path, options, seed, rtol_l2, _first_line(e))
    inputs = random_inputs(cpu.get_input_details(), seed)
    expected = _run(cpu, inputs)
    xnnpack = mod.Interpreter(model_path=path)
    xnnpack.allocate_tensors()
    noise = [_rel_l2(a, e) for a, e in zip(_run(xnnpack, inputs), expected)]
    del xnnpack

    delegate = load_delegate(**options)
    gpu = mod.Interpreter(model_path=path, experimental_delegates=[delegate])
    gpu.allocate_tensors()
    stats = _capi.delegate_stats(delegate._get_native_delegate_pointer())
    device = _capi.delegate_device(delegate._get_native_delegate_pointer())
    actual = _run(gpu, inputs)
    after = _capi.delegate_stats(delegate._get_native_delegate_pointer())  # the cache is written by the first invoke
    cache = None
    if options.get("serialization_dir") or options.get("delegate_serialize_dir") or options.get("serialize_dir"):
        cache = {k: after["cache_" + k] for k in ("hits", "misses", "writes", "rejected")}

    base = rtol_l2 if rtol_l2 is not None else (FP16_RTOL_L2 if _is_fp16(options) else FP32_RTOL_L2)
    quantized, steps = _quant_info(path)
    if quantized and rtol_l2 is None:
        base = max(base, QUANT_RTOL_L2)
    outputs = []
    for det, a, e, floor in zip(cpu.get_output_details(), actual, expected, noise):
        tol = base if rtol_l2 is not None else max(base, NOISE_FACTOR * floor)
        outputs.append(_compare(det, a, e, tol, floor, steps))
    del gpu
    return CheckResult(path, device, stats["delegated_nodes"], stats["cpu_nodes"], stats["partitions"], outputs,
                       kernel_cache=cache)


def _first_line(e) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def _delegate_run(path, options, inputs_for, runs=1):
    """(interpreter details, outputs of each run, stats, device) of the model
    through the delegate; inputs_for(input details) gives the inputs."""
    mod = runtime()
    delegate = load_delegate(**options)
    it = mod.Interpreter(model_path=path, experimental_delegates=[delegate])
    it.allocate_tensors()
    stats = _capi.delegate_stats(delegate._get_native_delegate_pointer())
    device = _capi.delegate_device(delegate._get_native_delegate_pointer())
    inputs = inputs_for(it.get_input_details())
    outs = [_run(it, inputs) for _ in range(runs)]
    details = it.get_output_details()
    del it
    return details, outs, stats, device


def _check_without_cpu(path, options, seed, rtol_l2, cpu_error) -> CheckResult:
    """The delegate as requested (run twice: determinism) against the
    delegate in the other precision, within the FP16 tolerance."""
    fp16 = _is_fp16(options)
    other = {k: v for k, v in options.items() if k not in ("is_precision_loss_allowed", "gpu_precision_loss_allowed",
                                                            "precision_loss_allowed")}
    other["is_precision_loss_allowed"] = "0" if fp16 else "1"
    inputs_for = lambda det: random_inputs(det, seed)  # noqa: E731
    details, (actual, again), stats, device = _delegate_run(path, options, inputs_for, runs=2)
    _, (expected,), _, _ = _delegate_run(path, other, inputs_for)
    deterministic = all(np.array_equal(a, b) for a, b in zip(actual, again))
    tol = rtol_l2 if rtol_l2 is not None else FP16_RTOL_L2
    outputs = []
    for det, a, e in zip(details, actual, expected):
        finite = bool(np.isfinite(a).all() and np.isfinite(e).all())
        max_abs = float(np.abs(a.astype(np.float64) - e).max()) if e.size else 0.0
        outputs.append(OutputResult(det["name"], tuple(int(s) for s in e.shape),
                                    _rel_l2(a, e) if finite else float("nan"), max_abs, tol, 0.0, FP16_ABS_FLOOR))
    return CheckResult(path, device, stats["delegated_nodes"], stats["cpu_nodes"], stats["partitions"], outputs,
                       reference="delegate-fp32" if fp16 else "delegate-fp16", cpu_error=cpu_error,
                       deterministic=deterministic)


def format_result(r: CheckResult) -> str:
    lines = [
        f"model: {r.model}",
        f"device: {r.device['name']} ({r.device['platform']}), {r.device['precision'].upper()}",
        f"nodes: {r.delegated_nodes} delegated, {r.cpu_nodes} on the CPU, {r.partitions} partition(s)",
    ]
    if r.reference != "cpu":
        other = r.reference.split("-")[1].upper()
        lines.append(f"reference: no CPU reference (the CPU interpreter cannot run this model: {r.cpu_error}); "
                     f"compared with the delegate in {other} instead, within the FP16 tolerance")
        lines.append(f"deterministic (two invokes identical): {'yes' if r.deterministic else 'NO'}")
    if r.kernel_cache is not None:
        c = r.kernel_cache
        lines.append(f"kernel cache: {c['hits']} partition(s) loaded, {c['misses']} compiled, {c['writes']} file(s) "
                     f"written, {c['rejected']} rejected")
    for o in r.outputs:
        verdict = "PASS" if o.passed else "FAIL"
        against = "CPU XNNPACK vs builtin " + format(o.cpu_noise, ".2g") if r.reference == "cpu" else \
            "vs delegate " + r.reference.split("-")[1].upper()
        floor = f" (passes at <= {o.abs_floor:.3g})" if o.abs_floor != ABS_FLOOR else ""
        if o.step > 0:
            lines.append(f"  {verdict} {o.name} {list(o.shape)}: quantized (step {o.step:.3g}): "
                         f"{o.within_1_step:.2%} within 1 step (>= {STEP_WITHIN_1:.0%}), max {o.max_steps:g} "
                         f"step(s) (<= {STEP_MAX}), {against}")
            if not o.passed and np.isfinite(o.max_steps):
                lines.append("    (each op agrees within 1 step; through many quantized ops these differences "
                             "can grow, see docs/quantized.md)")
            continue
        lines.append(f"  {verdict} {o.name} {list(o.shape)}: relative L2 {o.rel_l2:.3g} (tolerance {o.tolerance:.3g}), "
                     f"max abs {o.max_abs:.3g}{floor}, {against}")
    lines.append("PASS" if r.passed else "FAIL")
    return "\n".join(lines)
