"""What `tflite-gpu check` and its bisect (check_bisect.py) share, below
both: the tolerances and why, the seeded inputs, the relative L2, and
loading and applying the delegate with its failures told apart."""
from __future__ import annotations

import numpy as np

from . import _capi, interpreters, load_delegate
from . import inputs as model_inputs

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
# close to the reference as another correct FP32 implementation is. 3, not
# 2: the reference (the builtin kernels) can be the outlier of the three. On
# an AVX2 host, pose_landmark_full's segmentation logits (seed 3): XNNPACK
# 7.2e-5 from builtin (8.7e-5 at worst over the inputs), the delegate 4.1e-5
# from XNNPACK but 1.83e-4 from builtin, 2.1x the disagreement.
NOISE_FACTOR = 3.0
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


def random_inputs(details, seed: int) -> list:
    """Seeded inputs, never zeros (inputs.make without a model's plan):
    floats uniform in [-1, 1) (the range image models are trained on,
    [0, 1] or [-1, 1]), quantized int8/uint8 over their whole range, other
    ints small. check and bench use the model's plan (ids in range)."""
    return model_inputs.make([], details, seed)


def _quant_scale(det) -> float:
    """The per-tensor scale of a tensor detail, 0 when not quantized."""
    q = det.get("quantization") or (0.0, 0)
    return float(q[0])


def rel_l2(actual, expected) -> float:
    a, e = np.asarray(actual, np.float64), np.asarray(expected, np.float64)
    if not e.size:
        return 0.0
    return float(np.linalg.norm(a - e) / max(np.linalg.norm(e), 1e-30))


class DelegateLoadError(ValueError):
    """load_delegate refused: a bad option, or no OpenCL device."""


class KernelBuildError(RuntimeError):
    """The device's OpenCL compiler rejected one of the library's kernels
    while the delegate was applied to a model: a failure of tflite-gpu on
    that device (and driver), not of the model. The library's message names
    the device, driver, kernel file and the compiler's first errors."""

    def __init__(self, library_message: str):
        super().__init__("tflite-gpu could not build its kernels on this device (a failure of tflite-gpu, not of "
                         f"the model): {library_message}")


def load(options: dict):
    try:
        return load_delegate(**options)
    except ValueError as e:
        raise DelegateLoadError(str(e)) from e


def kernel_build_failure(delegate) -> KernelBuildError | None:
    """A KernelBuildError when the delegate's last Prepare failed because
    the device's compiler rejected a kernel (the library says so), else None."""
    failure = _capi.delegate_failure(delegate._get_native_delegate_pointer())
    return KernelBuildError(failure["message"]) if failure and failure["kind"] == "kernel-build" else None


def apply_delegate(source, delegate, **kwargs):
    """interpreters.make(source, delegate=delegate, **kwargs), with a
    failure to apply the delegate because a kernel did not build raised as
    KernelBuildError (any other failure as it came)."""
    try:
        return interpreters.make(source, delegate=delegate, **kwargs)
    except (RuntimeError, ValueError) as e:
        failure = kernel_build_failure(delegate)
        if failure is not None:
            raise failure from e
        raise
