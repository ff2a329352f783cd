"""Single-op test models for test_ops.py.

Each Case holds a readable id and a `build(mb, rng, cpu)` function that writes
one small graph into a ModelBuilder and returns the runtime inputs.  It is
called twice with the same seed: once for the model the delegate runs
(cpu=False) and once for the CPU reference (cpu=True).  The two are the same
graph except where the stock CPU kernels cannot run what the delegate must:

* CONV_2D / DEPTHWISE_CONV_2D without bias (input 2 = -1): the TFLite CPU
  kernels require a float bias ("Tensor at index 2 was optional but was
  expected"), so the reference gets an explicit zero bias instead.
* Fused TANH: the CPU kernels silently ignore it (CalculateActivationRange
  only knows the RELU family), so the delegate keeps such nodes on the CPU
  and the reference is the same model. CONCATENATION on the CPU rejects any
  fused activation, so its reference runs the activation as its own op.
"""

import dataclasses
import itertools
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


# -- CONV_2D / DEPTHWISE_CONV_2D --------------------------------------------

def _conv_case(n, h, w, cin, cout, kh, kw, stride, padding, dilation, act,
               bias=True, fp16=False, dequantize_version=2, depthwise=False,
               multiplier=1):
    op = "DEPTHWISE_CONV_2D" if depthwise else "CONV_2D"
    if depthwise:
        cout = cin * multiplier
    options = dict(padding=padding, stride_w=stride, stride_h=stride,
                   dilation_w=dilation, dilation_h=dilation, fused_activation=act)
    if depthwise:
        options["depth_multiplier"] = multiplier
    w_shape = [1, kh, kw, cout] if depthwise else [cout, kh, kw, cin]
    out_shape = [n, _out_size(h, kh, stride, dilation, padding),
                 _out_size(w, kw, stride, dilation, padding), cout]

    def build(mb, rng, cpu):
        inputs = []
        x = _input(mb, rng, [n, h, w, cin], inputs)
        weights = _weights(mb, rng, w_shape, fp16, dequantize_version)
        b = _bias(mb, rng, cout, bias, cpu, fp16, dequantize_version)
        _emit(mb, op, [x, weights, b], out_shape, options, cpu)
        return inputs

    name = "dw" if depthwise else "conv"
    case_id = (f"{name}-{n}x{h}x{w}x{cin}-k{kh}x{kw}-s{stride}-{padding}-d{dilation}"
               f"-{act}-o{cout}" + ("" if bias else "-nobias")
               + (f"-fp16dq{dequantize_version}" if fp16 else ""))
    return Case(case_id, build)


KERNELS = ((1, 1), (3, 3), (5, 5), (2, 3))


def _geometry_sweep(depthwise):
    """Every kernel x stride x padding x dilation; the other parameters rotate
    through their values so each one shows up several times."""
    cases = []
    combos = itertools.product(KERNELS, (1, 2), ("SAME", "VALID"), (1, 2))
    for i, ((kh, kw), stride, padding, dilation) in enumerate(combos):
        h, w = SPATIAL[i % len(SPATIAL)]
        if not _fits(h, w, kh, kw, dilation, padding):
            h, w = SPATIAL[-1]
        cases.append(_conv_case(
            n=1 + (i // 3) % 2, h=h, w=w,
            cin=CHANNELS[i % len(CHANNELS)], cout=CHANNELS[(i + 2) % len(CHANNELS)],
            kh=kh, kw=kw, stride=stride, padding=padding, dilation=dilation,
            act=ACTIVATIONS[i % len(ACTIVATIONS)], bias=i % 3 != 2,
            depthwise=depthwise))
    return cases


def conv_cases():
    cases = _geometry_sweep(depthwise=False)
    cases += [_conv_case(1, 7, 9, 5, 8, 3, 3, 1, "SAME", 1, act) for act in ACTIVATIONS]
    cases += [_conv_case(1, 5, 5, cin, cout, 3, 3, 1, "SAME", 1, "NONE")
              for cin, cout in itertools.product(CHANNELS, CHANNELS)]
    cases += [_conv_case(n, 7, 9, 3, 8, 3, 3, s, "SAME", 1, "RELU", bias=bias)
              for n, s, bias in itertools.product((1, 2), (1, 2), (True, False))]
    cases += [_conv_case(1, 13, 11, 17, 5, k, k, s, "SAME", 1, "RELU6", fp16=True,
                         dequantize_version=v)
              for k, s, v in ((1, 1, 2), (3, 2, 3), (5, 1, 2), (3, 1, 3))]
    # Register-tiled kernels: several 16-channel output blocks with a partial
    # last one (20, 33, 70 channels), pixel planes not a multiple of the
    # 8-pixel tile, batch 2; the 1x1 GEMM path and the general one.
    cases += [_conv_case(n, h, w, cin, cout, k, k, s, pad, 1, act)
              for n, h, w, cin, cout, k, s, pad, act in (
                  (2, 7, 9, 40, 33, 1, 1, "VALID", "RELU"), (1, 5, 3, 70, 20, 1, 1, "SAME", "NONE"),
                  (1, 13, 11, 20, 70, 1, 2, "SAME", "RELU6"), (2, 13, 11, 33, 40, 3, 2, "SAME", "NONE"),
                  (1, 9, 10, 17, 36, 5, 1, "VALID", "RELU"), (1, 1, 1, 64, 48, 1, 1, "VALID", "NONE"))]
    return cases


def depthwise_cases():
    cases = _geometry_sweep(depthwise=True)
    cases += [_conv_case(1, 7, 9, 5, 0, 3, 3, 1, "SAME", 1, act, depthwise=True)
              for act in ACTIVATIONS]
    cases += [_conv_case(2, 5, 5, c, 0, 3, 3, 1, "SAME", 1, "NONE", depthwise=True)
              for c in CHANNELS]
    # depth_multiplier 2 only with one input channel, as the converter emits it
    cases += [_conv_case(1, h, w, 1, 0, k, k, s, pad, 1, "RELU", depthwise=True, multiplier=2)
              for (h, w), k, s, pad in (((7, 9), 3, 1, "SAME"), ((13, 11), 5, 2, "VALID"),
                                        ((5, 5), 3, 2, "SAME"), ((7, 9), 1, 1, "VALID"))]
    cases += [_conv_case(1, 7, 9, 8, 0, 3, 3, s, "SAME", 1, "NONE", bias=False, depthwise=True)
              for s in (1, 2)]
    cases += [_conv_case(1, 13, 11, 17, 0, 3, 3, 1, "SAME", 1, "RELU", fp16=True,
                         dequantize_version=v, depthwise=True) for v in (2, 3)]
    # Rows wide enough for the unmasked interior path of the 16-pixel
    # stride-1 kernels, with a partial last tile (width 37, 45).
    cases += [_conv_case(n, 6, w, c, 0, k, k, 1, pad, 1, act, depthwise=True)
              for n, w, c, k, pad, act in ((2, 37, 17, 3, "SAME", "RELU"), (1, 45, 8, 5, "SAME", "NONE"),
                                           (1, 37, 5, 5, "VALID", "RELU6"), (2, 45, 12, 3, "VALID", "NONE"),
                                           (2, 37, 9, 1, "SAME", "RELU"))]
    # ... and of the 8-pixel stride-2 kernels.
    cases += [_conv_case(n, 7, w, c, 0, k, k, 2, pad, 1, act, depthwise=True)
              for n, w, c, k, pad, act in ((2, 37, 17, 3, "SAME", "RELU"), (1, 40, 8, 5, "SAME", "NONE"),
                                           (1, 38, 5, 5, "VALID", "RELU6"), (1, 41, 12, 3, "VALID", "NONE"))]
    return cases


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


# -- CONCATENATION -------------------------------------------------------------

def _concat_case(shapes, axis, act="NONE"):
    rank = len(shapes[0])
    out_shape = list(shapes[0])
    out_shape[axis % rank] = sum(s[axis % rank] for s in shapes)

    def build(mb, rng, cpu):
        inputs = []
        ins = [_input(mb, rng, s, inputs) for s in shapes]
        _emit(mb, "CONCATENATION", ins, out_shape, dict(axis=axis, fused_activation=act), cpu)
        return inputs

    parts = "+".join(_shape_id(s) for s in shapes)
    return Case(f"concat-axis{axis}-{parts}-{act}", build)


def _with_dim(shape, axis, size):
    shape = list(shape)
    shape[axis] = size
    return shape


def concat_cases():
    cases = []
    for i, split in enumerate(((3, 5), (4, 4, 1), (17, 2), (1, 1), (8, 8, 8), (5, 3))):
        n = 1 + i % 2
        h, w = SPATIAL[i % len(SPATIAL)]
        cases.append(_concat_case([[n, h, w, c] for c in split], 3))
    for axis in (1, 2):
        for sizes in ((3, 4), (1, 5, 2)):
            base = [2, 7, 9, 5]
            cases.append(_concat_case([_with_dim(base, axis, s) for s in sizes], axis))
    cases += [
        _concat_case([[1, 5, 5, 3], [1, 5, 5, 8]], -1),
        _concat_case([[1, 3, 9, 3], [1, 4, 9, 3]], -3),
        _concat_case([[3, 4], [3, 17]], 1),                   # rank 2
        _concat_case([[3, 4], [5, 4]], 0),
        _concat_case([[2, 4], [2, 3]], -1),
        _concat_case([[7, 9, 3], [7, 9, 5]], 2),              # rank 3
        _concat_case([[7, 4, 3], [7, 5, 3]], 1),
        _concat_case([[7, 4, 3], [7, 5, 3]], -2),
    ]
    cases += [_concat_case([[1, 7, 9, 3], [1, 7, 9, 5]], 3, act) for act in ACTIVATIONS[1:]]
    return cases


# -- MAX_POOL_2D / AVERAGE_POOL_2D -------------------------------------------

def _pool_case(n, h, w, c, fh, fw, stride, padding, act, op="MAX_POOL_2D"):
    out_shape = [n, _out_size(h, fh, stride, 1, padding), _out_size(w, fw, stride, 1, padding), c]
    options = dict(padding=padding, stride_w=stride, stride_h=stride,
                   filter_w=fw, filter_h=fh, fused_activation=act)

    def build(mb, rng, cpu):
        inputs = []
        x = _input(mb, rng, [n, h, w, c], inputs)
        _emit(mb, op, [x], out_shape, options, cpu)
        return inputs

    name = "maxpool" if op == "MAX_POOL_2D" else "avgpool"
    return Case(f"{name}-{n}x{h}x{w}x{c}-f{fh}x{fw}-s{stride}-{padding}-{act}", build)


def maxpool_cases():
    cases = []
    combos = itertools.product(((2, 2), (3, 3)), (1, 2), ("SAME", "VALID"))
    for i, ((fh, fw), stride, padding) in enumerate(combos):
        h, w = ((7, 9), (5, 5), (13, 11))[i % 3]
        cases.append(_pool_case(1 + i % 2, h, w, CHANNELS[i % len(CHANNELS)],
                                fh, fw, stride, padding, "NONE"))
    cases += [_pool_case(1, 7, 9, 8, 3, 3, 2, "SAME", act) for act in ACTIVATIONS[1:]]
    cases += [_pool_case(1, 8, 8, 3, 2, 3, 2, "VALID", "NONE"),  # non-square filter
              _pool_case(2, 1, 1, 17, 2, 2, 2, "SAME", "NONE")]
    return cases


def avgpool_cases():
    """SAME padding divides by the in-bounds taps only, as the CPU does."""
    cases = []
    combos = itertools.product(((2, 2), (3, 3)), (1, 2), ("SAME", "VALID"))
    for i, ((fh, fw), stride, padding) in enumerate(combos):
        h, w = ((7, 9), (5, 5), (13, 11))[i % 3]
        cases.append(_pool_case(1 + i % 2, h, w, CHANNELS[(i + 1) % len(CHANNELS)],
                                fh, fw, stride, padding, "NONE", op="AVERAGE_POOL_2D"))
    cases += [_pool_case(1, 7, 9, 5, 3, 3, 2, "SAME", act, op="AVERAGE_POOL_2D")
              for act in ACTIVATIONS[1:]]
    cases += [_pool_case(2, 7, 7, 17, 7, 7, 1, "VALID", "NONE", op="AVERAGE_POOL_2D")]  # global
    return cases


# -- PAD ---------------------------------------------------------------------

def _pad_case(shape, paddings, must_delegate=True):
    paddings = np.asarray(paddings, np.int32)
    out_shape = [d + int(p.sum()) for d, p in zip(shape, paddings)]

    def build(mb, rng, cpu):
        inputs = []
        x = _input(mb, rng, shape, inputs)
        pads = mb.add_tensor(paddings.shape, np.int32, data=paddings)
        _emit(mb, "PAD", [x, pads], out_shape, cpu=cpu)
        return inputs

    pads_id = "_".join(f"{a}.{b}" for a, b in paddings)
    return Case(f"pad-{_shape_id(shape)}-p{pads_id}", build, must_delegate)


def pad_cases():
    x = [1, 7, 9, 3]
    return [
        _pad_case(x, [[0, 0], [1, 2], [0, 0], [0, 0]]),          # H
        _pad_case(x, [[0, 0], [0, 0], [3, 1], [0, 0]]),          # W
        _pad_case(x, [[0, 0], [1, 1], [1, 1], [0, 0]]),          # H and W, like the models
        _pad_case(x, [[0, 0], [0, 0], [0, 0], [0, 5]]),          # C (channel growth)
        _pad_case([2, 5, 5, 17], [[0, 0], [0, 0], [0, 0], [2, 1]]),
        _pad_case([2, 5, 5, 8], [[0, 0], [2, 0], [0, 1], [1, 0]]),
        # Batch padding: a delegate may fairly leave this to the CPU.
        _pad_case([1, 5, 5, 3], [[1, 1], [0, 0], [0, 0], [0, 0]], must_delegate=False),
        _pad_case([5, 7, 3], [[1, 0], [0, 2], [0, 0]]),           # rank 3
        _pad_case([5, 7, 3], [[0, 0], [0, 0], [1, 3]]),
        _pad_case([7, 9], [[1, 2], [3, 0]]),                      # rank 2
        _pad_case([7, 9], [[0, 0], [0, 4]]),
    ]


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


# -- RESHAPE -------------------------------------------------------------------

def _reshape_case(in_shape, new_shape, encoding):
    """encoding: where new_shape lives -- "options", "input" or "both"."""
    out_shape = list(np.empty(in_shape).reshape(new_shape).shape)

    def build(mb, rng, cpu):
        inputs = []
        x = _input(mb, rng, in_shape, inputs)
        ins, options = [x], None
        if encoding in ("input", "both"):
            ins.append(mb.add_tensor([len(new_shape)], np.int32,
                                     data=np.asarray(new_shape, np.int32)))
        if encoding in ("options", "both"):
            options = dict(new_shape=new_shape)
        _emit(mb, "RESHAPE", ins, out_shape, options, cpu)
        return inputs

    return Case(f"reshape-{_shape_id(in_shape)}-to-{_shape_id(new_shape)}-{encoding}", build)


def reshape_cases():
    shapes = [
        ([1, 7, 9, 3], [1, 189]),          # 4D -> 2D
        ([1, 1, 1, 17], [1, 17]),
        ([1, 4, 6, 8], [1, 8, 24]),        # 4D -> 3D, channels change
        ([1, 4, 6, 8], [1, 48, 4]),
        ([1, 12, 16], [1, 4, 4, 12]),      # 3D -> 4D
        ([1, 5, 5, 8], [1, 10, 5, 4]),     # 4D -> 4D, channels change
        ([1, 16, 16, 2], [1, -1, 1]),      # -1, as face_detection writes it
        ([2, 3, 3, 5], [2, 45]),
    ]
    return [_reshape_case(a, b, enc) for a, b in shapes for enc in ("options", "input", "both")]


# -- STRIDED_SLICE -----------------------------------------------------------

def _slice_shape(shape, begin, end, strides, begin_mask, end_mask):
    index = tuple(slice(None if begin_mask >> i & 1 else b, None if end_mask >> i & 1 else e, s)
                  for i, (b, e, s) in enumerate(zip(begin, end, strides)))
    return list(np.empty(shape)[index].shape)


def _strided_slice_case(shape, begin, end, strides, begin_mask=0, end_mask=0):
    out_shape = _slice_shape(shape, begin, end, strides, begin_mask, end_mask)
    options = dict(begin_mask=begin_mask, end_mask=end_mask)

    def build(mb, rng, cpu):
        inputs = []
        x = _input(mb, rng, shape, inputs)
        params = [mb.add_tensor([len(shape)], np.int32, data=np.asarray(v, np.int32))
                  for v in (begin, end, strides)]
        _emit(mb, "STRIDED_SLICE", [x] + params, out_shape, options, cpu)
        return inputs

    spec = "_".join(f"{b}:{e}:{s}" for b, e, s in zip(begin, end, strides))
    return Case(f"slice-{_shape_id(shape)}-{spec}-bm{begin_mask}-em{end_mask}", build)


def strided_slice_cases():
    ss = _strided_slice_case
    return [
        ss([1, 7, 9, 17], [0, 0, 0, 3], [1, 7, 9, 11], [1, 1, 1, 1]),        # channels
        ss([1, 7, 9, 17], [0, 0, 0, 0], [1, 7, 9, 17], [1, 1, 1, 2]),        # channels, stride 2
        ss([2, 7, 9, 8], [0, 0, 0, 1], [2, 7, 9, 8], [1, 1, 1, 3]),
        ss([1, 7, 9, 5], [0, 1, 0, 0], [1, 6, 9, 5], [1, 1, 1, 1]),          # H
        ss([1, 7, 9, 5], [0, 1, 0, 0], [1, 7, 9, 5], [1, 2, 1, 1]),          # H, stride 2
        ss([1, 13, 11, 3], [0, 0, 2, 0], [1, 13, 11, 3], [1, 1, 2, 1]),      # W, stride 2
        ss([2, 13, 11, 3], [0, 3, 2, 1], [0, 0, 0, 0], [1, 2, 3, 1], end_mask=0b1111),
        ss([1, 7, 9, 8], [0, 0, 4, 0], [1, 5, 9, 4], [1, 1, 1, 1], begin_mask=0b0011),
        ss([1, 7, 9, 8], [0, -5, -7, -6], [1, -1, -1, -1], [1, 1, 1, 1]),    # negative indices
        ss([1, 5, 5, 1], [0, 1, 1, 0], [1, 4, 4, 1], [1, 2, 2, 1]),
        ss([7, 9, 5], [1, 0, 1], [7, 9, 4], [2, 1, 1]),                       # rank 3
        ss([7, 9, 5], [0, 2, 0], [0, 8, 5], [1, 3, 2], begin_mask=0b001, end_mask=0b001),
        ss([6, 17], [0, 3], [6, 17], [1, 2]),                                 # rank 2
        ss([6, 17], [1, 0], [5, 10], [1, 1]),
    ]


# -- DENSIFY (sparse weights, as face_detection_full_range_sparse stores them) --

def _densify_conv_case(cin, cout, fp16, density=0.3):
    def build(mb, rng, cpu):
        inputs = []
        x = _input(mb, rng, [1, 7, 9, cin], inputs)
        dense = _normal(rng, [cout, 1, 1, cin])
        dense[rng.random(dense.shape) > density] = 0
        dtype = np.float16 if fp16 else np.float32
        sparse = mb.add_sparse_tensor(dense.astype(dtype))
        weights = mb.add_tensor(dense.shape, dtype)
        mb.add_op("DENSIFY", [sparse], [weights])
        if fp16:
            full = mb.add_tensor(dense.shape)
            mb.add_op("DEQUANTIZE", [weights], [full], version=3)
            weights = full
        b = _bias(mb, rng, cout, True, cpu)
        _emit(mb, "CONV_2D", [x, weights, b], [1, 7, 9, cout], dict(padding="SAME"), cpu)
        return inputs

    kind = "fp16" if fp16 else "fp32"
    # DENSIFY of a constant can be folded or left on the CPU; either is fine.
    return Case(f"densify-{kind}-conv1x1-{cin}to{cout}", build, must_delegate=False)


def densify_cases():
    return [_densify_conv_case(32, 8, True), _densify_conv_case(17, 5, False),
            _densify_conv_case(300, 3, True)]  # 300 columns: Uint16 indices


# -- RESIZE_BILINEAR ---------------------------------------------------------

RESIZE_MODES = {"plain": (False, False), "align": (True, False), "halfpixel": (False, True)}


def _resize_case(n, h, w, c, oh, ow, mode):
    align_corners, half_pixel = RESIZE_MODES[mode]
    options = dict(align_corners=align_corners, half_pixel_centers=half_pixel)

    def build(mb, rng, cpu):
        inputs = []
        x = _input(mb, rng, [n, h, w, c], inputs)
        size = mb.add_tensor([2], np.int32, data=np.asarray([oh, ow], np.int32))
        _emit(mb, "RESIZE_BILINEAR", [x, size], [n, oh, ow, c], options, cpu,
              version=3 if half_pixel else 1)
        return inputs

    return Case(f"resize-{n}x{h}x{w}x{c}-to{oh}x{ow}-{mode}", build)


def resize_cases():
    # (h, w) -> (oh, ow): 2x up (the CPU's special 2x2 path when plain),
    # uneven up, down, mixed, from and to a single pixel, unchanged.
    geometries = [((7, 9), (14, 18)), ((5, 5), (13, 11)), ((13, 11), (5, 7)), ((7, 9), (3, 20)),
                  ((1, 1), (5, 3)), ((6, 7), (1, 1)), ((5, 5), (5, 5)), ((3, 2), (10, 9))]
    cases = []
    for i, ((h, w), (oh, ow)) in enumerate(geometries):
        for j, mode in enumerate(RESIZE_MODES):
            c = CHANNELS[(i + j) % len(CHANNELS)]
            cases.append(_resize_case(1 + (i + j) % 2, h, w, c, oh, ow, mode))
    # As the MediaPipe models use it: 2x up with half-pixel centers.
    cases += [_resize_case(1, 6, 6, 32, 12, 12, "halfpixel"),
              _resize_case(1, 8, 8, 48, 16, 16, "halfpixel")]
    return cases


# -- MEAN ----------------------------------------------------------------------

def _mean_case(shape, axes, keep_dims):
    rank = len(shape)
    reduced = tuple(sorted({a % rank for a in axes}))
    out_shape = list(np.mean(np.empty(shape), axis=reduced, keepdims=keep_dims).shape)

    def build(mb, rng, cpu):
        inputs = []
        x = _input(mb, rng, shape, inputs)
        axes_t = mb.add_tensor([len(axes)], np.int32, data=np.asarray(axes, np.int32))
        _emit(mb, "MEAN", [x, axes_t], out_shape, dict(keep_dims=keep_dims), cpu)
        return inputs

    axes_id = "_".join(map(str, axes))
    return Case(f"mean-{_shape_id(shape)}-axes{axes_id}-keep{int(keep_dims)}", build)


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


# -- FULLY_CONNECTED -----------------------------------------------------------

def _fc_case(in_shape, units, depth=None, bias=True, keep_num_dims=False, act="NONE", fp16=False):
    depth = depth or in_shape[-1]
    rows = int(np.prod(in_shape)) // depth
    out_shape = list(in_shape[:-1]) + [units] if keep_num_dims else [rows, units]
    options = dict(fused_activation=act, keep_num_dims=keep_num_dims)
    version = 6 if not bias else 5 if keep_num_dims else 1

    def build(mb, rng, cpu):
        inputs = []
        x = _input(mb, rng, in_shape, inputs)
        w = _weights(mb, rng, [units, depth], fp16)
        b = _weights(mb, rng, [units], fp16) if bias else -1  # the CPU's FC takes no bias fine
        _emit(mb, "FULLY_CONNECTED", [x, w, b], out_shape, options, cpu, version)
        return inputs

    case_id = (f"fc-{_shape_id(in_shape)}-k{depth}-o{units}-{act}" + ("-keepdims" if keep_num_dims else "")
               + ("" if bias else "-nobias") + ("-fp16dq" if fp16 else ""))
    return Case(case_id, build)


def fully_connected_cases():
    cases = [
        _fc_case([1, 1152], 63),                          # hand_landmark's heads
        _fc_case([1, 1152], 1),
        _fc_case([3, 17], 5),                             # rank 2, odd sizes
        _fc_case([2, 5], 1, bias=False),
        _fc_case([1, 3], 17),
        _fc_case([5, 8], 3, bias=False),
        _fc_case([17], 5),                                # rank 1: one row
        _fc_case([2, 3, 5, 17], 5),                       # rank 4, row per pixel
        _fc_case([2, 3, 5, 17], 5, keep_num_dims=True),
        _fc_case([1, 3, 5, 8], 3, keep_num_dims=True, bias=False),
        _fc_case([2, 7, 9], 4, keep_num_dims=True),       # rank 3
        _fc_case([2, 7, 9], 4),
        _fc_case([1, 3, 3, 5], 7, depth=45),              # rows span whole images
        _fc_case([2, 3, 4], 3, depth=12),
        _fc_case([2, 3, 4, 6], 5, depth=12),              # rows span two pixels
        _fc_case([3, 17], 5, fp16=True),                  # fp16 weights behind DEQUANTIZE
        _fc_case([1, 1152], 63, fp16=True),
        _fc_case([2, 3, 5, 17], 9, keep_num_dims=True, fp16=True),
    ]
    # No TANH: the CPU's FULLY_CONNECTED refuses it (and the delegate, by
    # check_activation, leaves it there).
    cases += [_fc_case([3, 17], 5, act=act) for act in ("RELU", "RELU_N1_TO_1", "RELU6")]
    return cases


# -- DEPTH_TO_SPACE ------------------------------------------------------------

def _depth_to_space_case(shape, block, must_delegate=True):
    n, h, w, c = shape
    out_shape = [n, h * block, w * block, c // (block * block)]

    def build(mb, rng, cpu):
        inputs = []
        x = _input(mb, rng, shape, inputs)
        _emit(mb, "DEPTH_TO_SPACE", [x], out_shape, dict(block_size=block), cpu)
        return inputs

    return Case(f"d2s-{_shape_id(shape)}-b{block}", build, must_delegate)


def depth_to_space_cases():
    return [
        _depth_to_space_case([1, 3, 5, 4], 2),      # 1 output channel
        _depth_to_space_case([2, 7, 9, 12], 2),     # 3
        _depth_to_space_case([1, 5, 5, 20], 2),     # 5
        _depth_to_space_case([1, 4, 3, 68], 2),     # 17
        _depth_to_space_case([1, 3, 5, 16], 2),     # 4: whole float4s
        _depth_to_space_case([2, 5, 7, 32], 2),     # 8
        _depth_to_space_case([1, 3, 4, 27], 3),
        _depth_to_space_case([1, 2, 3, 36], 3),
        _depth_to_space_case([1, 2, 2, 64], 4),
        _depth_to_space_case([1, 7, 7, 48], 4),
        # block_size 1 is a no-op upstream refuses: the CPU may keep it.
        _depth_to_space_case([1, 3, 5, 3], 1, must_delegate=False),
    ]


# -- the table -----------------------------------------------------------------

def _unique(cases):
    """Drop repeats: with C=1 or a 1x1 image some broadcasts equal the plain case."""
    unique = {}
    for case in cases:
        unique.setdefault(case.id, case)
    return list(unique.values())


def all_cases():
    return _unique(conv_cases() + depthwise_cases() + binary_cases("ADD") + binary_cases("MUL")
                   + concat_cases() + maxpool_cases() + avgpool_cases() + pad_cases() + prelu_cases()
                   + relu_cases() + activation_op_cases() + reshape_cases() + strided_slice_cases()
                   + densify_cases() + resize_cases() + mean_cases() + fully_connected_cases()
                   + depth_to_space_cases())


def absorbed_dequantize_cases():
    """fp16 constant -> DEQUANTIZE -> conv: the delegate must take all of it."""
    return [_conv_case(1, 7, 9, 5, 8, 3, 3, 1, "SAME", 1, "NONE", fp16=True, dequantize_version=v)
            for v in (2, 3)] + [
            _conv_case(1, 7, 9, 8, 0, 3, 3, 1, "SAME", 1, "RELU", fp16=True, dequantize_version=v,
                       depthwise=True) for v in (2, 3)]
