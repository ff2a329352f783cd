"""The Case type and the graph helpers every op family uses."""

import dataclasses
import zlib
from typing import Callable

import numpy as np

from tflite_gpu.model_builder import ModelBuilder

CHANNELS = (1, 3, 5, 8, 17)
SPATIAL = ((7, 9), (5, 5), (1, 1), (13, 11))
ACTIVATIONS = ("NONE", "RELU", "RELU_N1_TO_1", "RELU6", "TANH")  # no SIGN_BIT: converters never emit it


@dataclasses.dataclass(frozen=True)
class Case:
    id: str
    build: Callable  # (ModelBuilder, np.random.Generator, cpu: bool) -> inputs
    must_delegate: bool = True  # False where refusing the op is a fair choice

    def make(self):
        """(delegate model, CPU reference model, inputs), seeded by the id."""
        models, inputs = [], None
        for cpu in (False, True):
            mb = ModelBuilder()
            rng = np.random.default_rng(zlib.crc32(self.id.encode()))
            inputs = self.build(mb, rng, cpu)
            models.append(mb.build())
        return models[0], models[1], inputs


# -- graph helpers -----------------------------------------------------------

def _normal(rng, shape):
    return rng.standard_normal(shape, dtype=np.float32)


def _const(mb, rng, shape):
    return mb.add_tensor(shape, data=_normal(rng, shape))


def _input(mb, rng, shape, inputs):
    """A runtime input with normal data (appended to `inputs`)."""
    inputs.append(_normal(rng, shape))
    return mb.add_input(shape)


def _weights(mb, rng, shape, fp16=False, dequantize_version=2):
    """A float32 weight tensor; fp16=True stores it as MediaPipe does:
    a float16 constant behind DEQUANTIZE."""
    if not fp16:
        return _const(mb, rng, shape)
    half = mb.add_tensor(shape, np.float16, data=_normal(rng, shape).astype(np.float16))
    full = mb.add_tensor(shape)
    mb.add_op("DEQUANTIZE", [half], [full], version=dequantize_version)
    return full


def _bias(mb, rng, size, present, cpu, fp16=False, dequantize_version=2):
    if present:
        return _weights(mb, rng, [size], fp16, dequantize_version)
    if cpu:  # the CPU conv kernels need a bias tensor; zeros mean "none"
        return mb.add_tensor([size], data=np.zeros(size, np.float32))
    return -1


def _emit(mb, op, inputs, out_shape, options=None, cpu=False, version=1):
    """Add `op` writing a new graph output of out_shape."""
    options = dict(options or {})
    act = options.get("fused_activation", "NONE")
    # The CPU's CONCATENATION rejects fused activations; the reference runs
    # the activation as its own op. (Fused TANH elsewhere is ignored by the
    # CPU kernels; the delegate keeps such nodes on the CPU, see test_ops.)
    unfuse = cpu and op == "CONCATENATION" and act != "NONE"
    out = mb.add_tensor(out_shape)
    if unfuse:
        mid = mb.add_tensor(out_shape)
        mb.add_op(op, inputs, [mid], dict(options, fused_activation="NONE"), version)
        mb.add_op(act, [mid], [out])  # RELU, RELU6, RELU_N1_TO_1, TANH are ops too
    else:
        mb.add_op(op, inputs, [out], options, version)
    mb.mark_output(out)
    return out


def _out_size(size, kernel, stride, dilation, padding):
    effective = (kernel - 1) * dilation + 1
    if padding == "SAME":
        return -(-size // stride)
    return (size - effective) // stride + 1


def _fits(h, w, kh, kw, dilation, padding):
    return padding == "SAME" or ((kh - 1) * dilation < h and (kw - 1) * dilation < w)


def _shape_id(shape):
    return "x".join(map(str, shape)) if len(shape) else "scalar"


# -- the table -----------------------------------------------------------------

def _unique(cases):
    """Drop repeats: with C=1 or a 1x1 image some broadcasts equal the plain case."""
    unique = {}
    for case in cases:
        unique.setdefault(case.id, case)
    return list(unique.values())
