"""Conformance check: one model on the stock CPU interpreter and through the
delegate, on the same seeded random inputs, compared output by output."""
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


@dataclasses.dataclass
class OutputResult:
    name: str
    shape: tuple
    rel_l2: float
    max_abs: float
    tolerance: float
    cpu_noise: float  # relative L2 between XNNPACK and the builtin kernels

    @property
    def passed(self) -> bool:
        if not np.isfinite(self.rel_l2) or not np.isfinite(self.max_abs):
            return False
        return self.rel_l2 <= self.tolerance or self.max_abs <= ABS_FLOOR


@dataclasses.dataclass
class CheckResult:
    model: str
    device: dict
    delegated_nodes: int
    cpu_nodes: int
    partitions: int
    outputs: list
    kernel_cache: dict | None = None  # hits/misses/writes/rejected with serialization_dir, else None

    @property
    def passed(self) -> bool:
        return all(o.passed for o in self.outputs)

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["passed"] = self.passed
        for o, src in zip(d["outputs"], self.outputs):
            o["passed"] = src.passed
        return d


def random_inputs(details, seed: int) -> list:
    """Seeded inputs, never zeros: floats uniform in [-1, 1) (the range image
    models are trained on, [0, 1] or [-1, 1]), small ints."""
    rng = np.random.default_rng(seed)
    out = []
    for det in details:
        shape, dtype = det["shape"], np.dtype(det["dtype"])
        if np.issubdtype(dtype, np.floating):
            out.append(rng.uniform(-1.0, 1.0, shape).astype(dtype))
        elif dtype == np.bool_:
            out.append(rng.integers(0, 2, shape).astype(dtype))
        else:
            info = np.iinfo(dtype)
            out.append(rng.integers(max(info.min, -100), min(info.max, 100) + 1, shape).astype(dtype))
    return out


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

    Raises RuntimeError when the CPU interpreter itself cannot run the model
    (for example MediaPipe custom ops): there is nothing to compare with.
    """
    options = dict(options or {})
    mod = runtime()
    path = str(pathlib.Path(model))
    try:
        cpu = mod.Interpreter(model_path=path,
                              experimental_op_resolver_type=mod.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
        cpu.allocate_tensors()
    except (RuntimeError, ValueError) as e:
        raise RuntimeError(f"the CPU interpreter cannot run {path}, so there is nothing to compare with: {e}") from e
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
    outputs = []
    for det, a, e, floor in zip(cpu.get_output_details(), actual, expected, noise):
        max_abs = float(np.abs(a.astype(np.float64) - e).max()) if e.size else 0.0
        tol = base if rtol_l2 is not None else max(base, NOISE_FACTOR * floor)
        outputs.append(OutputResult(det["name"], tuple(int(s) for s in e.shape), _rel_l2(a, e), max_abs, tol, floor))
    del gpu
    return CheckResult(path, device, stats["delegated_nodes"], stats["cpu_nodes"], stats["partitions"], outputs, cache)


def format_result(r: CheckResult) -> str:
    lines = [
        f"model: {r.model}",
        f"device: {r.device['name']} ({r.device['platform']}), {r.device['precision'].upper()}",
        f"nodes: {r.delegated_nodes} delegated, {r.cpu_nodes} on the CPU, {r.partitions} partition(s)",
    ]
    if r.kernel_cache is not None:
        c = r.kernel_cache
        lines.append(f"kernel cache: {c['hits']} partition(s) loaded, {c['misses']} compiled, {c['writes']} file(s) "
                     f"written, {c['rejected']} rejected")
    for o in r.outputs:
        verdict = "PASS" if o.passed else "FAIL"
        lines.append(f"  {verdict} {o.name} {list(o.shape)}: relative L2 {o.rel_l2:.3g} (tolerance {o.tolerance:.3g}), "
                     f"max abs {o.max_abs:.3g}, CPU XNNPACK vs builtin {o.cpu_noise:.2g}")
    lines.append("PASS" if r.passed else "FAIL")
    return "\n".join(lines)
