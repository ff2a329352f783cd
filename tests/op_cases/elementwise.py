"""ADD / MUL, PRELU / RELU and the activations, elementwise math, comparisons, CAST,
SELECT, ADD_N and small elementwise graphs."""

import numpy as np

from ._common import ACTIVATIONS, CHANNELS, Case, SPATIAL, _const, _emit, _input, _normal, _shape_id

# -- ADD / MUL ---------------------------------------------------------------

def _binary_case(op, a_shape, b_shape, b_const, act="NONE", const_first=False):
    out_shape = list(np.broadcast_shapes(tuple(a_shape), tuple(b_shape)))

    def build(mb, rng, cpu):
        inputs = []
        a = _input(mb, rng, a_shape, inputs)
        b = _const(mb, rng, b_shape) if b_const else _input(mb, rng, b_shape, inputs)
        _emit(mb, op, [b, a] if const_first else [a, b], out_shape,
              dict(fused_activation=act), cpu)
        return inputs

    kind = "const" if b_const else "input"
    order = "-constfirst" if const_first else ""
    return Case(f"{op.lower()}-{_shape_id(a_shape)}-{kind}{_shape_id(b_shape)}{order}-{act}", build)


def binary_cases(op):
    cases = []
    for i, c in enumerate(CHANNELS):
        n = 1 + i % 2
        h, w = SPATIAL[i % len(SPATIAL)]
        act = ACTIVATIONS[i % len(ACTIVATIONS)]
        x = [n, h, w, c]
        cases += [
            _binary_case(op, x, x, False, act),                       # same shape
            _binary_case(op, x, [c], True, act),                      # channel vector
            _binary_case(op, x, [1, 1, 1, c], True, act),             # [1,1,1,C]
            _binary_case(op, x, [], True, act),                       # scalar
            _binary_case(op, x, [n, 1, 1, c], False, act),            # per-channel runtime
            _binary_case(op, x, [n, h, w, 1], False, act),            # per-pixel runtime
        ]
    cases += [
        _binary_case(op, [1, 7, 9, 5], [5], True, const_first=True),
        _binary_case(op, [1, 7, 9, 5], [1, 7, 9, 5], True),          # full-size constant
        _binary_case(op, [3, 17], [3, 17], False),                    # rank 2
        _binary_case(op, [3, 17], [17], True),
        _binary_case(op, [7, 9, 5], [7, 9, 5], False),                # rank 3
        _binary_case(op, [7, 9, 5], [5], True),
        _binary_case(op, [7, 9, 5], [1, 1, 5], False),
    ]
    cases += [_binary_case(op, [1, 5, 5, 8], [1, 5, 5, 8], False, act) for act in ACTIVATIONS]
    return cases


# -- PRELU / RELU --------------------------------------------------------------

def _prelu_case(shape, alpha_shape):
    def build(mb, rng, cpu):
        inputs = []
        x = _input(mb, rng, shape, inputs)
        alpha = _const(mb, rng, alpha_shape)
        _emit(mb, "PRELU", [x, alpha], shape, cpu=cpu)
        return inputs

    return Case(f"prelu-{_shape_id(shape)}-alpha{_shape_id(alpha_shape)}", build)


def prelu_cases():
    cases = []
    for i, c in enumerate((1, 3, 17)):
        h, w = SPATIAL[i % len(SPATIAL)]
        shape = [1 + i % 2, h, w, c]
        cases += [_prelu_case(shape, a) for a in ([c], [1, 1, c], [h, w, c])]
    return cases


def _unary_case(op, shape):
    def build(mb, rng, cpu):
        inputs = []
        x = _input(mb, rng, shape, inputs)
        _emit(mb, op, [x], shape, cpu=cpu)
        return inputs

    return Case(f"{op.lower()}-{_shape_id(shape)}", build)


def relu_cases():
    return [_unary_case("RELU", s) for s in ([1, 7, 9, 3], [2, 5, 5, 17], [1, 1, 1, 8], [3, 17], [7, 9, 5])]


def activation_op_cases():
    shapes = ([1, 7, 9, 3], [2, 5, 5, 17], [1, 1, 1, 5], [3, 17])
    return [_unary_case(op, s) for op in ("LOGISTIC", "HARD_SWISH") for s in shapes]


# -- elementwise math, comparisons, CAST, SELECT, ADD_N --------------------------
#
# Each operand gets data of a kind its op is defined on. Bool and int32
# tensors cross the partition boundary as such (the delegate converts them).

def _values(rng, shape, kind):
    shape = list(shape)
    if kind == "normal":
        return _normal(rng, shape)
    if kind == "positive":   # LOG, SQRT, RSQRT inputs and POW bases
        return rng.uniform(0.1, 4.0, shape).astype(np.float32)
    if kind == "divisor":    # DIV / FLOOR_DIV / FLOOR_MOD: both signs, away from 0
        return (rng.choice([-1.0, 1.0], shape) * rng.uniform(0.5, 2.0, shape)).astype(np.float32)
    if kind == "exponent":
        return rng.uniform(-2.0, 2.0, shape).astype(np.float32)
    if kind == "wide":       # quotients and truncations spanning several integers
        return (4.0 * _normal(rng, shape)).astype(np.float32)
    if kind == "ties":       # few distinct values: comparisons meet equality often
        return (rng.integers(-2, 3, shape) * 0.5).astype(np.float32)
    if kind == "zeros":      # a third exact zeros (CAST to bool)
        return np.where(rng.random(shape) < 0.33, 0.0, _normal(rng, shape)).astype(np.float32)
    if kind == "bool":
        return rng.random(shape) < 0.5
    if kind == "int":
        return rng.integers(-1000, 1000, shape).astype(np.int32)
    if kind == "smallint":   # int32 with zeros (CAST to bool)
        return rng.integers(-2, 3, shape).astype(np.int32)
    raise ValueError(kind)


def _operand(mb, rng, shape, kind, inputs, const=False):
    data = _values(rng, shape, kind)
    if const:
        return mb.add_tensor(shape, data.dtype, data=data)
    inputs.append(data)
    return mb.add_input(shape, data.dtype)


def _output(mb, op, ins, shape, dtype=np.float32, options=None, version=1):
    out = mb.add_tensor(shape, dtype)
    mb.add_op(op, ins, [out], options, version)
    mb.mark_output(out)
    return out


UNARY_KINDS = {"ABS": "normal", "COS": "wide", "SIN": "wide", "EXP": "normal", "LOG": "positive",
               "NEG": "normal", "RSQRT": "positive", "SQRT": "positive", "SQUARE": "normal",
               "SIGN": "ties", "FLOOR": "wide", "ELU": "normal", "GELU": "wide", "LEAKY_RELU": "normal"}
UNARY_SHAPES = ([2, 7, 9, 3], [1, 5, 5, 17], [2, 3, 5, 1], [3, 4, 5], [7, 5], [17])


def _math_unary_case(op, shape, options=None, version=1, must_delegate=True):
    kind = UNARY_KINDS[op]

    def build(mb, rng, cpu):
        inputs = []
        x = _operand(mb, rng, shape, kind, inputs)
        _output(mb, op, [x], shape, options=options, version=version)
        return inputs

    opts = "".join(f"-{k}{v}" for k, v in (options or {}).items())
    return Case(f"{op.lower()}{opts}-{_shape_id(shape)}" + (f"-v{version}" if version > 1 else ""), build,
                must_delegate)


def math_unary_cases():
    cases = []
    for op in UNARY_KINDS:
        variants = [None]
        if op == "GELU":
            variants = [dict(approximate=False), dict(approximate=True)]
        if op == "LEAKY_RELU":
            variants = [dict(alpha=0.2), dict(alpha=-1.5)]
        cases += [_math_unary_case(op, s, v) for v in variants for s in UNARY_SHAPES]
    # Version 2 (the limit) where the CPU runs it too; their v2 adds int8 types.
    cases += [_math_unary_case(op, [1, 5, 5, 3], version=2) for op in ("ABS", "EXP", "RSQRT", "SIGN")]
    cases += [_math_unary_case("GELU", [2, 3, 5, 1], dict(approximate=True), version=2),
              _math_unary_case("LEAKY_RELU", [2, 3, 5, 1], dict(alpha=0.3), version=2)]
    return cases


BINARY_KINDS = {"DIV": ("normal", "divisor"), "POW": ("positive", "exponent"),
                "SQUARED_DIFFERENCE": ("normal", "normal"), "FLOOR_DIV": ("wide", "divisor"),
                "FLOOR_MOD": ("wide", "divisor"), "LOGICAL_AND": ("bool", "bool")}
COMPARISONS = ("EQUAL", "NOT_EQUAL", "LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL")


def _ew_binary_case(op, a_shape, b_shape, a_const=False, b_const=False, kinds=None, act=None, version=1):
    kinds = kinds or BINARY_KINDS[op]
    out_shape = list(np.broadcast_shapes(tuple(a_shape), tuple(b_shape)))
    out_dtype = np.bool_ if op in COMPARISONS or op == "LOGICAL_AND" else np.float32
    options = dict(fused_activation=act) if act else None

    def build(mb, rng, cpu):
        inputs = []
        a = _operand(mb, rng, a_shape, kinds[0], inputs, a_const)
        b = _operand(mb, rng, b_shape, kinds[1], inputs, b_const)
        _output(mb, op, [a, b], out_shape, out_dtype, options, version)
        return inputs

    name = lambda shape, const: ("const" if const else "input") + _shape_id(shape)  # noqa: E731
    return Case(f"{op.lower()}-{name(a_shape, a_const)}-{name(b_shape, b_const)}-{'_'.join(kinds)}"
                + (f"-{act}" if act else "") + (f"-v{version}" if version > 1 else ""), build)


def ew_binary_cases(op):
    """Same shapes, constant and runtime broadcasts of either operand, ranks 1-4."""
    cases = []
    for i, c in enumerate((1, 3, 5, 17)):
        n = 1 + i % 2
        h, w = SPATIAL[i % len(SPATIAL)]
        x = [n, h, w, c]
        kinds = None
        if op in COMPARISONS:  # ties first: equality must really be exercised
            kinds = ("ties", "ties") if i % 2 == 0 else ("normal", "normal")
        cases += [
            _ew_binary_case(op, x, x, kinds=kinds),                       # same shape
            _ew_binary_case(op, x, [c], b_const=True, kinds=kinds),       # channel vector constant
            _ew_binary_case(op, x, [], b_const=True, kinds=kinds),        # scalar constant
            _ew_binary_case(op, x, [n, 1, 1, c], kinds=kinds),            # per-channel runtime
            _ew_binary_case(op, [n, h, w, 1], x, kinds=kinds),            # first operand broadcast
        ]
    kinds = ("ties", "ties") if op in COMPARISONS else None
    cases += [
        _ew_binary_case(op, [5], [2, 3, 4, 5], kinds=kinds),                   # rank 1 against rank 4
        _ew_binary_case(op, [1, 7, 9, 5], [1, 7, 9, 5], a_const=True, kinds=kinds),  # constant first
        _ew_binary_case(op, [3, 17], [3, 17], kinds=kinds),                    # rank 2
        _ew_binary_case(op, [3, 17], [17], b_const=True, kinds=kinds),
        _ew_binary_case(op, [7, 9, 5], [1, 1, 5], kinds=kinds),                # rank 3
        _ew_binary_case(op, [2, 1, 5, 1], [1, 3, 1, 4], kinds=kinds),          # both broadcast
        _ew_binary_case(op, [17], [17], kinds=kinds),                          # rank 1
    ]
    if op == "DIV":
        cases += [_ew_binary_case(op, [1, 5, 5, 8], [1, 5, 5, 8], act=act) for act in ACTIVATIONS]
    if op not in ("POW", "LOGICAL_AND"):  # v2 (the limit) where the CPU runs it too
        cases.append(_ew_binary_case(op, [2, 3, 5, 3], [3], b_const=True, kinds=kinds, version=2))
    return cases


def _cast_case(src, dst, shape, kind):
    def build(mb, rng, cpu):
        inputs = []
        x = _operand(mb, rng, shape, kind, inputs)
        _output(mb, "CAST", [x], shape, dst)
        return inputs

    return Case(f"cast-{np.dtype(src).name}-to-{np.dtype(dst).name}-{_shape_id(shape)}", build)


def cast_cases():
    f32, i32, b = np.float32, np.int32, np.bool_
    combos = [(f32, i32, "wide"), (i32, f32, "int"), (f32, b, "zeros"), (b, f32, "bool"),
              (i32, b, "smallint"), (b, i32, "bool"), (f32, f32, "normal"), (i32, i32, "int"),
              (b, b, "bool")]
    shapes = ([2, 7, 9, 3], [1, 5, 5, 17], [3, 17], [5])
    return [_cast_case(s, d, shape, kind) for s, d, kind in combos for shape in shapes]


def _select_case(op, c_shape, x_shape, y_shape, consts=(), version=1, must_delegate=True):
    if op == "SELECT":  # x's shape; a vector condition picks along x's first dimension
        out_shape = list(x_shape)
    else:
        out_shape = list(np.broadcast_shapes(tuple(c_shape), tuple(x_shape), tuple(y_shape)))

    def build(mb, rng, cpu):
        inputs = []
        c = _operand(mb, rng, c_shape, "bool", inputs, "c" in consts)
        x = _operand(mb, rng, x_shape, "normal", inputs, "x" in consts)
        y = _operand(mb, rng, y_shape, "normal", inputs, "y" in consts)
        _output(mb, op, [c, x, y], out_shape, version=version)
        return inputs

    name = lambda t, shape: ("const" if t in consts else "") + _shape_id(shape)  # noqa: E731
    return Case(f"{op.lower()}-c{name('c', c_shape)}-x{name('x', x_shape)}-y{name('y', y_shape)}"
                + (f"-v{version}" if version > 1 else ""), build, must_delegate)


def select_cases():
    s1 = lambda *a, **k: _select_case("SELECT", *a, **k)  # noqa: E731
    s2 = lambda *a, **k: _select_case("SELECT_V2", *a, **k)  # noqa: E731
    return [
        s1([2, 7, 9, 3], [2, 7, 9, 3], [2, 7, 9, 3]),
        s1([1, 5, 5, 17], [1, 5, 5, 17], [1, 5, 5, 17], consts="c"),
        s1([2, 3, 5, 1], [2, 3, 5, 1], [2, 3, 5, 1], consts="x"),
        s1([], [2, 3, 5, 5], [2, 3, 5, 5]),                       # scalar condition
        s1([2], [2, 7, 9, 5], [2, 7, 9, 5]),                      # vector along the batch
        s1([3], [3, 17], [3, 17]),                                # ... along rank 2's rows
        s1([3], [3, 1, 17], [3, 1, 17], consts="c"),              # a constant vector
        s1([7], [7, 9, 5], [7, 9, 5], consts="y"),                # ... along rank 3's first axis
        s1([17], [17], [17]),
        s2([3], [2, 7, 9, 3], [2, 7, 9, 3]),                      # condition per channel
        s2([1, 5, 5, 1], [1, 1, 1, 17], [], consts="xy"),         # x per channel, y a scalar
        s2([2, 1, 5, 1], [1, 3, 1, 4], [4]),                      # all three broadcast
        s2([5], [7, 9, 5], [9, 1]),                               # mixed ranks
        s2([3, 17], [3, 17], [3, 17], consts="c"),
        s2([2, 3, 5, 1], [2, 3, 5, 1], [1]),
    ]


def _add_n_case(shape, n, const_index=None, repeat_first=False):
    def build(mb, rng, cpu):
        inputs = []
        ins = [_operand(mb, rng, shape, "normal", inputs, k == const_index) for k in range(n - repeat_first)]
        if repeat_first:  # x + x + ...: the same tensor twice
            ins.insert(1, ins[0])
        _output(mb, "ADD_N", ins, shape)
        return inputs

    return Case(f"add_n-{n}x{_shape_id(shape)}" + (f"-const{const_index}" if const_index is not None else "")
                + ("-repeat" if repeat_first else ""), build)


def add_n_cases():
    return [_add_n_case([2, 7, 9, 3], 2), _add_n_case([1, 5, 5, 17], 3), _add_n_case([3, 17], 5, const_index=2),
            _add_n_case([5], 2, const_index=0), _add_n_case([2, 3, 4, 1], 4),
            # > 64 graph tensors, partial sums at even indices: the tensor array
            # grows while a partial sum is added
            _add_n_case([3, 5], 70, repeat_first=True)]


def _graph_case(name, build):
    return Case(f"ewgraph-{name}", build)


def _g_select_of_greater(mb, rng, cpu):
    """max(x, y) as SELECT_V2(GREATER(x, y), x, y): the bool stays inside."""
    inputs = []
    x = _operand(mb, rng, [2, 5, 7, 3], "ties", inputs)
    y = _operand(mb, rng, [2, 5, 7, 3], "ties", inputs)
    c = mb.add_tensor([2, 5, 7, 3], np.bool_)
    mb.add_op("GREATER", [x, y], [c])
    _output(mb, "SELECT_V2", [c, x, y], [2, 5, 7, 3])
    return inputs


def _g_mask_by_less(mb, rng, cpu):
    """x * float(x < 0.3): CAST of an inner bool, a bool output beside it."""
    inputs = []
    x = _operand(mb, rng, [1, 6, 5, 17], "normal", inputs)
    t = mb.add_tensor([], data=np.float32(0.3))
    c = mb.add_tensor([1, 6, 5, 17], np.bool_)
    mb.add_op("LESS", [x, t], [c])
    mb.mark_output(c)
    f = mb.add_tensor([1, 6, 5, 17])
    mb.add_op("CAST", [c], [f])
    _output(mb, "MUL", [f, x], [1, 6, 5, 17], options=dict(fused_activation="NONE"))
    return inputs


def _g_between(mb, rng, cpu):
    """LOGICAL_AND(x > a, x <= b) as float, a and b per channel."""
    inputs = []
    x = _operand(mb, rng, [2, 4, 3, 5], "ties", inputs)
    a = _operand(mb, rng, [5], "ties", inputs, const=True)
    b = _operand(mb, rng, [2, 1, 1, 5], "ties", inputs)
    gt, le, both = (mb.add_tensor([2, 4, 3, 5], np.bool_) for _ in range(3))
    mb.add_op("GREATER", [x, a], [gt])
    mb.add_op("LESS_EQUAL", [x, b], [le])
    mb.add_op("LOGICAL_AND", [gt, le], [both])
    _output(mb, "CAST", [both], [2, 4, 3, 5])
    return inputs


def _g_int_input(mb, rng, cpu):
    """An int32 graph input scaled in float, truncated back to int32."""
    inputs = []
    i = _operand(mb, rng, [3, 7, 5], "int", inputs)
    f = mb.add_tensor([3, 7, 5])
    mb.add_op("CAST", [i], [f])
    s = _operand(mb, rng, [5], "normal", inputs, const=True)
    g = mb.add_tensor([3, 7, 5])
    mb.add_op("MUL", [f, s], [g], dict(fused_activation="NONE"))
    mb.mark_output(g)
    _output(mb, "CAST", [g], [3, 7, 5], np.int32)
    return inputs


def _g_math_chain(mb, rng, cpu):
    """sqrt(x)^y / (x - z)^2, floor-div and floor-mod of the result."""
    inputs = []
    shape = [2, 5, 5, 3]
    x = _operand(mb, rng, shape, "positive", inputs)
    y = _operand(mb, rng, [3], "exponent", inputs, const=True)
    r, p, d, q = (mb.add_tensor(shape) for _ in range(4))
    mb.add_op("SQRT", [x], [r])
    mb.add_op("POW", [r, y], [p])
    z = _operand(mb, rng, shape, "normal", inputs)
    mb.add_op("SQUARED_DIFFERENCE", [x, z], [d])
    mb.add_op("ADD_N", [d, p, x], [q])
    k = _operand(mb, rng, [1, 1, 1, 3], "divisor", inputs, const=True)
    _output(mb, "FLOOR_DIV", [q, k], shape)
    _output(mb, "FLOOR_MOD", [q, k], shape)
    return inputs


def elementwise_graph_cases():
    return [_graph_case(name, fn) for name, fn in (
        ("select-of-greater", _g_select_of_greater), ("mask-by-less", _g_mask_by_less),
        ("between", _g_between), ("int-input", _g_int_input), ("math-chain", _g_math_chain))]


def elementwise_cases():
    cases = math_unary_cases()
    for op in list(BINARY_KINDS) + list(COMPARISONS):
        cases += ew_binary_cases(op)
    return cases + cast_cases() + select_cases() + add_n_cases() + elementwise_graph_cases()
