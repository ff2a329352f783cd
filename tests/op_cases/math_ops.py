"""Reductions, SOFTMAX / LOG_SOFTMAX, CUMSUM, BATCH_MATMUL, LSTM, ARG_MAX / ARG_MIN,
L2_NORMALIZATION (math_cases, also run in FP16)."""

import itertools

import numpy as np

from ._common import Case, _const, _emit, _input, _normal, _shape_id
from .elementwise import _operand, _output

# -- MEAN / SUM / REDUCE_MAX / REDUCE_MIN / REDUCE_PROD ----------------------

_REDUCE_PREFIX = {"MEAN": "mean", "SUM": "sum", "REDUCE_MAX": "rmax", "REDUCE_MIN": "rmin",
                  "REDUCE_PROD": "rprod"}


def _reduce_case(shape, axes, keep_dims, op="MEAN"):
    rank = len(shape)
    reduced = tuple(sorted({a % rank for a in axes}))
    out_shape = list(np.mean(np.empty(shape), axis=reduced, keepdims=keep_dims).shape)

    def build(mb, rng, cpu):
        inputs = []
        x = _input(mb, rng, shape, inputs)
        axes_t = mb.add_tensor([len(axes)], np.int32, data=np.asarray(axes, np.int32))
        _emit(mb, op, [x, axes_t], out_shape, dict(keep_dims=keep_dims), cpu)
        return inputs

    axes_id = "_".join(map(str, axes))
    return Case(f"{_REDUCE_PREFIX[op]}-{_shape_id(shape)}-axes{axes_id}-keep{int(keep_dims)}", build)


def _mean_case(shape, axes, keep_dims):
    return _reduce_case(shape, axes, keep_dims, "MEAN")


def mean_cases():
    cases = []
    for keep in (True, False):
        cases += [
            _mean_case([1, 7, 7, 17], [1, 2], keep),     # spatial, as the MediaPipe models use it
            _mean_case([2, 5, 9, 3], [1, 2], keep),
            _mean_case([1, 7, 7, 1152], [1, 2], keep),   # hand_landmark's size
            _mean_case([1, 13, 11, 1], [2, 1], keep),
            _mean_case([1, 7, 9, 5], [3], keep),         # channels
            _mean_case([2, 7, 9, 17], [-1], keep),
            _mean_case([1, 7, 9, 5], [1], keep),         # one spatial axis
            _mean_case([2, 7, 9, 5], [2], keep),
            _mean_case([2, 5, 5, 8], [0], keep),         # batch
            _mean_case([2, 7, 9, 5], [1, 2, 3], keep),   # everything but the batch
            _mean_case([2, 3, 4, 5], [0, 1, 2, 3], keep),  # everything (a scalar without keep_dims)
            _mean_case([1, 7, 9, 5], [1, -3], keep),     # a repeated axis counts once
            _mean_case([7, 9, 5], [0, 1], keep),         # rank 3
            _mean_case([7, 9, 5], [2], keep),
            _mean_case([6, 17], [1], keep),              # rank 2
            _mean_case([6, 17], [0], keep),
        ]
    return cases


def reduce_cases():
    """SUM, REDUCE_MAX, REDUCE_MIN and REDUCE_PROD share MEAN's kernel; each
    gets every axis kind. Channel counts 1, 3, 5, 17 leave padded lanes in
    the last slice, which must not leak into a max/min/product. Products
    run over at most ~20 values so they stay far from over/underflow."""
    cases = []
    for op in ("SUM", "REDUCE_MAX", "REDUCE_MIN"):
        for keep in (True, False):
            cases += [
                _reduce_case([2, 7, 9, 5], [1, 2], keep, op),
                _reduce_case([1, 7, 9, 3], [-1], keep, op),      # channels with 1 padded lane
                _reduce_case([2, 5, 3, 17], [3], keep, op),
                _reduce_case([2, 5, 3, 1], [3], keep, op),
                _reduce_case([2, 5, 9, 5], [0], keep, op),       # batch
                _reduce_case([2, 3, 4, 5], [0, 1, 2, 3], keep, op),
                _reduce_case([2, 7, 9, 5], [-2, 3], keep, op),
                _reduce_case([9, 5], [0], keep, op),             # rank 2
                _reduce_case([5, 7, 3], [-1, 0], keep, op),      # rank 3
                _reduce_case([17], [0], keep, op),               # rank 1
            ]
    for keep in (True, False):
        cases += [
            _reduce_case([2, 3, 4, 5], [1], keep, "REDUCE_PROD"),
            _reduce_case([2, 3, 4, 5], [-1], keep, "REDUCE_PROD"),
            _reduce_case([1, 5, 7, 17], [3], keep, "REDUCE_PROD"),
            _reduce_case([2, 3, 4, 3], [0, 2], keep, "REDUCE_PROD"),
            _reduce_case([2, 3, 3, 3], [1, 2, 3], keep, "REDUCE_PROD"),
            _reduce_case([7, 5], [0], keep, "REDUCE_PROD"),
        ]
    return cases


# -- SOFTMAX / LOG_SOFTMAX ------------------------------------------------------

def _softmax_case(shape, beta=1.0, scale=1.0, op="SOFTMAX"):
    """scale multiplies the normal inputs: 1000 gives |x| in the thousands,
    where exp overflows unless the max is subtracted first."""
    options = dict(beta=beta) if op == "SOFTMAX" else {}

    def build(mb, rng, cpu):
        inputs = [_normal(rng, shape) * np.float32(scale)]
        x = mb.add_input(shape)
        _emit(mb, op, [x], shape, options, cpu)
        return inputs

    name = "softmax" if op == "SOFTMAX" else "logsoftmax"
    beta_id = f"-b{beta:g}" if op == "SOFTMAX" else ""
    return Case(f"{name}-{_shape_id(shape)}{beta_id}-x{scale:g}", build)


def softmax_cases():
    shapes = ([1, 7, 9, 5], [2, 5, 3, 17], [2, 3, 5, 1], [1, 1, 1, 1001], [6, 17], [2, 3], [5, 7, 3], [13])
    cases = [_softmax_case(s, beta) for s in shapes for beta in (1.0, 0.5)]
    cases += [_softmax_case(s, beta, 1000.0) for s in ([2, 5, 3, 17], [6, 5]) for beta in (1.0, 0.5)]
    # A negative beta only at a moderate scale: the CPU subtracts max(x), not
    # max(beta * x), and overflows to NaN at |x| ~ 100 (the delegate does not).
    cases += [_softmax_case([2, 4, 3, 5], 2.5, 10.0), _softmax_case([3, 9], -0.7, 10.0)]
    cases += [_softmax_case(s, op="LOG_SOFTMAX") for s in ([1, 7, 9, 5], [2, 5, 3, 17], [6, 1], [5, 7, 3])]
    cases += [_softmax_case([2, 5, 3, 17], scale=1000.0, op="LOG_SOFTMAX")]
    return cases


# -- CUMSUM --------------------------------------------------------------------

def _cumsum_case(shape, axis, exclusive=False, reverse=False):
    def build(mb, rng, cpu):
        inputs = []
        x = _input(mb, rng, shape, inputs)
        axis_t = mb.add_tensor([], np.int32, data=np.int32(axis))
        _emit(mb, "CUMSUM", [x, axis_t], shape, dict(exclusive=exclusive, reverse=reverse), cpu)
        return inputs

    flags = ("-excl" if exclusive else "") + ("-rev" if reverse else "")
    return Case(f"cumsum-{_shape_id(shape)}-axis{axis}{flags}", build)


def cumsum_cases():
    cases = []
    for exclusive, reverse in itertools.product((False, True), (False, True)):
        cases += [_cumsum_case([2, 7, 9, 5], axis, exclusive, reverse) for axis in (0, 1, 2, 3)]
        cases += [_cumsum_case([2, 5, 3, 17], -1, exclusive, reverse),
                  _cumsum_case([1, 3, 4, 3], -3, exclusive, reverse),
                  _cumsum_case([6, 17], 0, exclusive, reverse),
                  _cumsum_case([5, 7, 3], -1, exclusive, reverse),
                  _cumsum_case([13], 0, exclusive, reverse)]
    return cases


# -- BATCH_MATMUL ----------------------------------------------------------------

def _bmm_case(a_shape, b_shape, adj_x=False, adj_y=False, b_const=False):
    def t(shape, adj):  # the operand's shape as multiplied
        return list(shape[:-2]) + ([shape[-1], shape[-2]] if adj else [shape[-2], shape[-1]])

    out_shape = list(np.matmul(np.zeros(t(a_shape, adj_x)), np.zeros(t(b_shape, adj_y))).shape)

    def build(mb, rng, cpu):
        inputs = []
        a = _input(mb, rng, a_shape, inputs)
        b = _const(mb, rng, b_shape) if b_const else _input(mb, rng, b_shape, inputs)
        _emit(mb, "BATCH_MATMUL", [a, b], out_shape, dict(adj_x=adj_x, adj_y=adj_y), cpu)
        return inputs

    flags = ("-adjx" if adj_x else "") + ("-adjy" if adj_y else "") + ("-const" if b_const else "")
    return Case(f"bmm-{_shape_id(a_shape)}-{_shape_id(b_shape)}{flags}", build)


def batch_matmul_cases():
    cases = []
    for adj_x, adj_y in itertools.product((False, True), (False, True)):
        def sa(s):
            return s[:-2] + [s[-1], s[-2]] if adj_x else s

        def sb(s):
            return s[:-2] + [s[-1], s[-2]] if adj_y else s

        for b_const in (False, True):
            cases += [
                _bmm_case(sa([7, 5]), sb([5, 3]), adj_x, adj_y, b_const),            # rank 2
                _bmm_case(sa([2, 7, 17]), sb([2, 17, 6]), adj_x, adj_y, b_const),    # rank 3
                _bmm_case(sa([2, 3, 5, 9]), sb([2, 3, 9, 1]), adj_x, adj_y, b_const),  # rank 4
                _bmm_case(sa([2, 3, 5, 9]), sb([9, 5]), adj_x, adj_y, b_const),      # RHS broadcast over both
                _bmm_case(sa([2, 1, 4, 3]), sb([1, 3, 3, 6]), adj_x, adj_y, b_const),  # both broadcast
            ]
        cases.append(_bmm_case(sa([1, 5, 6]), sb([3, 6, 4]), adj_x, adj_y))     # LHS broadcast
        cases.append(_bmm_case(sa([5, 6]), sb([3, 6, 4]), adj_x, adj_y))        # LHS of lower rank
        cases.append(_bmm_case(sa([2, 9, 13]), sb([13, 6]), adj_x, adj_y, True))  # 3 row groups, K % 4 = 1
    return cases


# -- ARG_MAX / ARG_MIN, L2_NORMALIZATION, REVERSE_V2 ------------------------------

def _arg_case(op, shape, axis, out_dtype=np.int32, kind="normal", axis_dtype=np.int32):
    """kind "ties" draws from 5 values, so most lines hold equal extremes:
    TFLite keeps the first index."""
    out_shape = [d for i, d in enumerate(shape) if i != axis % len(shape)]
    type_name = "INT64" if out_dtype == np.int64 else "INT32"

    def build(mb, rng, cpu):
        inputs = []
        x = _operand(mb, rng, shape, kind, inputs)
        a = mb.add_tensor([1], axis_dtype, data=np.asarray([axis], axis_dtype))
        _output(mb, op, [x, a], out_shape, out_dtype, dict(output_type=type_name))
        return inputs

    axis_id = "-axis_i64" if axis_dtype == np.int64 else ""
    return Case(f"{op.lower()}-{_shape_id(shape)}-axis{axis}-{type_name.lower()}-{kind}{axis_id}", build)


def _arg_into_graph_case():
    """conv -> ARG_MAX over channels -> CAST to float -> MUL: the int32
    index stays inside one partition, and leaves it as int32 too."""
    def build(mb, rng, cpu):
        inputs = []
        x = _input(mb, rng, [2, 7, 9, 3], inputs)
        c = mb.add_tensor([2, 7, 9, 5])
        mb.add_op("CONV_2D", [x, _const(mb, rng, [5, 3, 3, 3]), _const(mb, rng, [5])], [c], dict(padding="SAME"))
        idx = mb.add_tensor([2, 7, 9], np.int32)
        mb.add_op("ARG_MAX", [c, mb.add_tensor([1], np.int32, data=np.asarray([3], np.int32))], [idx])
        mb.mark_output(idx)
        f = mb.add_tensor([2, 7, 9])
        mb.add_op("CAST", [idx], [f])
        _emit(mb, "MUL", [f, _const(mb, rng, [9])], [2, 7, 9], None, cpu)
        return inputs

    return Case("arg_max-in-graph-conv-cast-mul", build)


def arg_minmax_cases():
    cases = []
    for op in ("ARG_MAX", "ARG_MIN"):
        for shape, axis in (([2, 7, 9, 3], 3), ([2, 7, 9, 3], 1), ([2, 7, 9, 3], -2), ([3, 5, 2, 6], 0),
                            ([1, 5, 5, 17], -1), ([3, 17], 0), ([17], 0), ([2, 3, 5], 1), ([3, 4, 5], -3),
                            ([2, 5, 1], -1)):
            cases.append(_arg_case(op, shape, axis))
        for shape, axis in (([2, 7, 9, 5], -1), ([2, 7, 9, 5], 2), ([5, 3, 17], 0)):
            cases.append(_arg_case(op, shape, axis, kind="ties"))
        cases += [_arg_case(op, [2, 5, 7, 3], 2, np.int64), _arg_case(op, [3, 17], -1, np.int64, "ties"),
                  _arg_case(op, [2, 9, 5], -2, axis_dtype=np.int64)]
    return cases + [_arg_into_graph_case()]


def _l2_norm_case(shape, scale=1.0):
    """scale 1e-8: every norm is below TFLite's epsilon (1e-6), which then
    divides instead."""
    def build(mb, rng, cpu):
        inputs = [(scale * _normal(rng, shape)).astype(np.float32)]
        x = mb.add_input(shape)
        _output(mb, "L2_NORMALIZATION", [x], shape)
        return inputs

    return Case(f"l2_norm-{_shape_id(shape)}" + (f"-scale{scale:g}" if scale != 1.0 else ""), build)


def l2_norm_cases():
    return [_l2_norm_case(s) for s in ([2, 7, 9, 3], [1, 5, 5, 17], [2, 3, 5, 1], [3, 4, 5], [7, 6], [17])] + [
        _l2_norm_case([2, 3, 5], 1e-8)]


def _lrn_case(shape, radius, bias, alpha, beta):
    def build(mb, rng, cpu):
        inputs = []
        x = _input(mb, rng, shape, inputs)
        _output(mb, "LOCAL_RESPONSE_NORMALIZATION", [x], shape,
                options=dict(radius=radius, bias=bias, alpha=alpha, beta=beta))
        return inputs

    return Case(f"lrn-{_shape_id(shape)}-r{radius}-b{bias:g}-a{alpha:g}-p{beta:g}", build)


def lrn_cases():
    """Windows cut by the channel ends (radius >= C too), beta 0.5 and 1
    (the CPU's special cases) and others."""
    return [_lrn_case([2, 7, 9, 5], 2, 1.0, 1e-1, 0.75), _lrn_case([1, 5, 5, 17], 5, 2.0, 1e-4, 0.75),
            _lrn_case([2, 3, 5, 1], 1, 1.0, 0.5, 0.5), _lrn_case([1, 4, 3, 3], 4, 0.5, 2.0, 1.0),
            _lrn_case([1, 6, 7, 8], 0, 1.0, 1.0, 0.5), _lrn_case([3, 2, 3, 16], 3, 1.5, 0.25, 1.5)]


# -- LSTM (basic kernel) ---------------------------------------------------------

def _lstm_case(batch, depth, units, outputs=(0, 1, 2, 3)):
    """TFLite's basic LSTM cell: inputs [B,I], prev activation [B,O],
    weights [4O, I+O], bias [4O], prev state [B,O]; 4 outputs (activation,
    state, and the concat and gate temporaries). `outputs` picks which are
    graph outputs."""
    shapes = [[batch, units], [batch, units], [batch, depth + units], [batch, 4 * units]]

    def build(mb, rng, cpu):
        inputs = []
        x = _input(mb, rng, [batch, depth], inputs)
        act = _input(mb, rng, [batch, units], inputs)
        w = mb.add_tensor([4 * units, depth + units],
                          data=_normal(rng, [4 * units, depth + units]) * np.float32(0.5))
        b = _const(mb, rng, [4 * units])
        state = _input(mb, rng, [batch, units], inputs)
        outs = [mb.add_tensor(shape) for shape in shapes]
        mb.add_op("LSTM", [x, act, w, b, state], outs, {}, version=2)
        for k in outputs:
            mb.mark_output(outs[k])
        return inputs

    picked = "".join(map(str, outputs))
    return Case(f"lstm-b{batch}-i{depth}-o{units}-out{picked}", build)


def lstm_cases():
    return [_lstm_case(1, 5, 3), _lstm_case(2, 3, 17), _lstm_case(2, 17, 8), _lstm_case(3, 1, 1),
            _lstm_case(2, 7, 5, outputs=(0, 1))]


def math_cases():
    """Reductions, softmax, cumsum, batch matmul, LSTM, ARG_MAX/ARG_MIN and
    L2_NORMALIZATION, LOCAL_RESPONSE_NORMALIZATION (also run in FP16)."""
    return (reduce_cases() + softmax_cases() + cumsum_cases() + batch_matmul_cases() + lstm_cases()
            + arg_minmax_cases() + l2_norm_cases() + lrn_cases())
