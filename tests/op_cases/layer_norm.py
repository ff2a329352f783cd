"""Layer norms as converters write them (issue 14): the delegate fuses
MEAN -> SQUARED_DIFFERENCE -> MEAN -> ADD(eps) -> RSQRT into one statistics
kernel (delegate_c/passes/fuse_layer_norm.c) and must still give the CPU's
result; test_fusion.py checks that the fusion happens."""

import numpy as np

from ._common import Case, _const, _input


def _node(mb, op, inputs, shape, options=None):
    out = mb.add_tensor(shape)
    mb.add_op(op, inputs, [out], options)
    return out


def _act():
    return dict(fused_activation="NONE")


def layer_norm_graph(mb, rng, x, shape, eps, style, last_op="RSQRT"):
    """Appends a layer norm of x over its last axis. style "keras":
    TF's LayerNormalization (scale and shift folded as the converter
    writes them); "plain": (x - mean) * rstd, no scale or shift. last_op
    other than RSQRT breaks the pattern (for the fusion's control case)."""
    stat_shape = list(shape[:-1]) + [1]
    axis = mb.add_tensor([1], np.int32, data=np.asarray([-1], np.int32))
    mean = _node(mb, "MEAN", [x, axis], stat_shape, dict(keep_dims=True))
    sq = _node(mb, "SQUARED_DIFFERENCE", [x, mean], shape)
    var = _node(mb, "MEAN", [sq, axis], stat_shape, dict(keep_dims=True))
    var_eps = _node(mb, "ADD", [var, mb.add_tensor([], data=np.float32(eps))], stat_shape, _act())
    rstd = _node(mb, last_op, [var_eps], stat_shape)
    if style == "plain":
        centred = _node(mb, "SUB", [x, mean], shape, _act())
        return _node(mb, "MUL", [centred, rstd], shape, _act())
    c = shape[-1:]
    gamma = mb.add_tensor(c, data=(1.0 + 0.5 * rng.standard_normal(c)).astype(np.float32))
    scale = _node(mb, "MUL", [rstd, gamma], shape, _act())
    scaled_x = _node(mb, "MUL", [x, scale], shape, _act())
    scaled_mean = _node(mb, "MUL", [mean, scale], shape, _act())
    shift = _node(mb, "SUB", [_const(mb, rng, c), scaled_mean], shape, _act())
    return _node(mb, "ADD", [scaled_x, shift], shape, _act())


def _case(shape, style, eps=1e-3, offset=0.0):
    def build(mb, rng, cpu):
        inputs = []
        x = _input(mb, rng, shape, inputs)
        if offset:  # rows far from zero mean: the two-pass variance must hold
            inputs[0] += np.float32(offset)
        mb.mark_output(layer_norm_graph(mb, rng, x, shape, eps, style))
        return inputs
    tag = f"-off{offset:g}" if offset else ""
    return Case(f"layernorm-{style}-{'x'.join(map(str, shape))}-eps{eps:g}{tag}", build)


def layer_norm_cases():
    cases = [_case([2, 3, 5, c], "keras") for c in (1, 3, 5, 17)]
    cases += [_case([3, 7, 17], "keras", eps=1e-5), _case([5, 16], "keras", eps=1e-6, offset=100.0)]
    cases += [_case([1, 9, 5], "plain"), _case([2, 4, 3, 17], "plain", eps=1e-5)]
    return cases
