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
    # 6-pixel tile, batch 2; the 1x1 GEMM path and the general one.
    cases += [_conv_case(n, h, w, cin, cout, k, k, s, pad, 1, act)
              for n, h, w, cin, cout, k, s, pad, act in (
                  (2, 7, 9, 40, 33, 1, 1, "VALID", "RELU"), (1, 5, 3, 70, 20, 1, 1, "SAME", "NONE"),
                  (1, 13, 11, 20, 70, 1, 2, "SAME", "RELU6"), (2, 13, 11, 33, 40, 3, 2, "SAME", "NONE"),
                  (1, 9, 10, 17, 36, 5, 1, "VALID", "RELU"), (1, 1, 1, 64, 48, 1, 1, "VALID", "NONE"),
                  # 8-channel blocks (5-8 outputs), 1x1 and general; 3-channel sources (the
                  # kernels that skip the zero fourth lane) into 8- and 16-channel blocks.
                  (2, 7, 9, 12, 8, 1, 1, "VALID", "RELU"), (1, 5, 7, 33, 6, 1, 1, "VALID", "NONE"),
                  (2, 11, 13, 3, 7, 3, 2, "SAME", "NONE"), (1, 9, 10, 3, 24, 5, 2, "SAME", "RELU6"),
                  (1, 8, 11, 3, 40, 3, 1, "VALID", "RELU"), (2, 6, 9, 9, 8, 2, 2, "VALID", "NONE"))]
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
        _concat_case([[1, 5, 5, 3], [2, 5, 5, 3]], 0),         # batch
        _concat_case([[2, 3, 4, 5], [1, 3, 4, 5], [2, 3, 4, 5]], -4),
        _concat_case([[3, 4, 5], [2, 4, 5]], 0),              # rank 3, outer axis
        _concat_case([[5], [3], [17]], 0),                    # rank 1
        _concat_case([[5], [4]], -1),
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

def _slice_shape(shape, begin, end, strides, begin_mask, end_mask, shrink_mask=0):
    index = tuple(b if shrink_mask >> i & 1 else
                  slice(None if begin_mask >> i & 1 else b, None if end_mask >> i & 1 else e, s)
                  for i, (b, e, s) in enumerate(zip(begin, end, strides)))
    return list(np.empty(shape)[index].shape)


def _strided_slice_case(shape, begin, end, strides, begin_mask=0, end_mask=0, shrink_mask=0):
    out_shape = _slice_shape(shape, begin, end, strides, begin_mask, end_mask, shrink_mask)
    options = dict(begin_mask=begin_mask, end_mask=end_mask)
    if shrink_mask:
        options["shrink_axis_mask"] = shrink_mask

    def build(mb, rng, cpu):
        inputs = []
        x = _input(mb, rng, shape, inputs)
        params = [mb.add_tensor([len(shape)], np.int32, data=np.asarray(v, np.int32))
                  for v in (begin, end, strides)]
        _emit(mb, "STRIDED_SLICE", [x] + params, out_shape, options, cpu)
        return inputs

    spec = "_".join(f"{b}:{e}:{s}" for b, e, s in zip(begin, end, strides))
    shrink = f"-sm{shrink_mask}" if shrink_mask else ""
    return Case(f"slice-{_shape_id(shape)}-{spec}-bm{begin_mask}-em{end_mask}{shrink}", build)


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
        # negative indices under masks, and shrunk axes (which the converter
        # emits for x[:, i] style indexing)
        ss([2, 7, 9, 17], [0, -4, 0, -9], [0, 0, -2, 0], [1, 1, 2, 1], begin_mask=0b0101, end_mask=0b1011),
        ss([1, 7, 9, 5], [0, -3, -9, 1], [1, -1, 9, -1], [1, 1, 3, 2], end_mask=0b0100),
        ss([2, 7, 9, 5], [1, 0, 0, 0], [2, 7, 9, 5], [1, 1, 1, 1], shrink_mask=0b0001),
        ss([1, 7, 9, 5], [0, 0, 0, -1], [1, 7, 9, 0], [1, 1, 1, 1], end_mask=0b0111, shrink_mask=0b1000),
        ss([2, 7, 9, 17], [0, 3, 0, 2], [2, 4, 9, 16], [1, 1, 2, 1], shrink_mask=0b0010),
        ss([7, 9, 5], [-2, 0, 0], [0, 9, 5], [1, 1, 1], end_mask=0b110, shrink_mask=0b001),
        ss([6, 17], [0, 5], [6, 6], [1, 1], shrink_mask=0b10),
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


# -- layout / data-movement ops (index remaps) --------------------------------

def _int_const(mb, values, dtype=np.int32):
    values = np.asarray(values, dtype)
    return mb.add_tensor(values.shape, dtype, data=values)


def _simple_case(case_id, op, shape, consts, out_shape, options=None, version=1, must_delegate=True):
    """One runtime float input followed by constant int inputs."""
    def build(mb, rng, cpu):
        inputs = []
        x = _input(mb, rng, shape, inputs)
        ins = [x] + [_int_const(mb, *c) if isinstance(c, tuple) else _int_const(mb, c) for c in consts]
        _emit(mb, op, ins, out_shape, options, cpu, version)
        return inputs

    return Case(case_id, build, must_delegate)


def transpose_cases():
    cases = []
    for shape, perm in (([2, 3, 5, 17], [0, 3, 1, 2]), ([2, 3, 5, 17], [0, 2, 1, 3]),
                        ([2, 3, 5, 7], [3, 2, 1, 0]), ([2, 3, 5, 4], [1, 0, 2, 3]),
                        ([1, 7, 9, 5], [0, 1, 3, 2]), ([2, 5, 3, 1], [3, 0, 2, 1]),
                        ([7, 9, 5], [2, 0, 1]), ([7, 9, 5], [1, 0, 2]), ([3, 4, 17], [0, 2, 1]),
                        ([3, 17], [1, 0]), ([5], [0])):
        out = [shape[i] for i in perm]
        cases.append(_simple_case(f"transpose-{_shape_id(shape)}-p{''.join(map(str, perm))}",
                                  "TRANSPOSE", shape, [perm], out))
    return cases


def slice_cases():
    cases = []
    for shape, begin, size, dtype in (([2, 7, 9, 17], [1, 2, 3, 4], [1, -1, 5, 9], np.int32),
                                      ([2, 7, 9, 17], [0, 0, 0, 0], [2, 7, 9, 8], np.int32),
                                      ([1, 7, 9, 5], [0, 1, 2, 1], [1, 5, 5, 3], np.int64),
                                      ([2, 5, 5, 3], [1, 0, 0, 2], [-1, 5, 5, 1], np.int32),
                                      ([7, 9, 5], [1, 0, 2], [5, 9, -1], np.int32),
                                      ([6, 17], [2, 3], [3, 13], np.int32),
                                      ([13], [4], [-1], np.int64)):
        out = [d - b if s == -1 else s for d, b, s in zip(shape, begin, size)]
        spec = "_".join(f"{b}+{s}" for b, s in zip(begin, size))
        cases.append(_simple_case(f"sliceop-{_shape_id(shape)}-{spec}-{np.dtype(dtype).name}", "SLICE", shape,
                                  [(begin, dtype), (size, dtype)], out, version=2 if dtype == np.int64 else 1))
    return cases


def _split_case(shape, axis, sizes, split_v):
    rank = len(shape)
    outs = [_with_dim(shape, axis % rank, s) for s in sizes]

    def build(mb, rng, cpu):
        inputs = []
        x = _input(mb, rng, shape, inputs)
        ax = _int_const(mb, np.int32(axis))
        results = [mb.add_tensor(o) for o in outs]
        if split_v:
            declared = [-1 if i == 1 and len(sizes) > 2 else s for i, s in enumerate(sizes)]
            mb.add_op("SPLIT_V", [x, _int_const(mb, declared), ax], results, dict(num_splits=len(sizes)))
        else:
            mb.add_op("SPLIT", [ax, x], results, dict(num_splits=len(sizes)))
        for r in results:
            mb.mark_output(r)
        return inputs

    name = "splitv" if split_v else "split"
    return Case(f"{name}-{_shape_id(shape)}-axis{axis}-{'_'.join(map(str, sizes))}", build)


def split_cases():
    cases = [_split_case(s, a, n, False) for s, a, n in (
        ([2, 7, 9, 6], 3, [2, 2, 2]), ([2, 7, 9, 6], -1, [3, 3]), ([1, 5, 5, 15], 3, [3] * 5),
        ([2, 8, 9, 5], 1, [2] * 4), ([2, 7, 9, 5], 0, [1, 1]), ([1, 4, 6, 17], -2, [2, 2, 2]),
        ([6, 17], 0, [2, 2, 2]), ([12], 0, [3] * 4), ([3, 6, 5], -3, [1, 1, 1]))]
    cases += [_split_case(s, a, n, True) for s, a, n in (
        ([1, 7, 9, 17], 3, [5, 9, 3]), ([2, 7, 9, 5], 1, [2, 5]), ([7, 9, 5], -1, [1, 3, 1]),
        ([2, 3, 4, 5], 0, [1, 1]), ([1, 13, 11, 3], 2, [4, 5, 2]), ([6, 17], -1, [16, 1]),
        ([2, 7, 9, 1], 1, [3, 4]), ([10], -1, [7, 3]))]
    return cases


def _pack_case(shape, n, axis):
    rank = len(shape) + 1
    out = list(shape)
    out.insert(axis % rank, n)

    def build(mb, rng, cpu):
        inputs = []
        xs = [_input(mb, rng, shape, inputs) for _ in range(n)]
        _emit(mb, "PACK", xs, out, dict(values_count=n, axis=axis), cpu)
        return inputs

    return Case(f"pack-{n}x{_shape_id(shape)}-axis{axis}", build)


def pack_cases():
    return [_pack_case(s, n, a) for s, n, a in (
        ([7, 5], 3, 0), ([7, 5], 3, 1), ([7, 5], 2, 2), ([7, 5], 3, -1), ([3, 5, 17], 2, 0),
        ([3, 5, 17], 3, 1), ([3, 5, 17], 2, 2), ([3, 5, 17], 4, 3), ([5], 3, 0), ([5], 3, -1),
        ([2, 9, 1], 5, -2), ([4, 3], 1, 1))]


def _unpack_case(shape, axis):
    rank = len(shape)
    n = shape[axis % rank]
    out = [d for i, d in enumerate(shape) if i != axis % rank]

    def build(mb, rng, cpu):
        inputs = []
        x = _input(mb, rng, shape, inputs)
        results = [mb.add_tensor(out) for _ in range(n)]
        mb.add_op("UNPACK", [x], results, dict(num=n, axis=axis))
        for r in results:
            mb.mark_output(r)
        return inputs

    return Case(f"unpack-{_shape_id(shape)}-axis{axis}", build)


def unpack_cases():
    return [_unpack_case(s, a) for s, a in (
        ([2, 7, 9, 5], 0), ([2, 3, 9, 5], 1), ([2, 7, 3, 5], 2), ([2, 7, 9, 5], 3), ([1, 3, 4, 5], -1),
        ([3, 5, 17], 1), ([3, 5, 17], -3), ([4, 3], 0), ([4, 3], 1), ([5], 0), ([2, 3, 4, 1], 1),
        ([2, 5, 3], -2))]


def tile_cases():
    cases = []
    for shape, mult in (([2, 3, 5, 3], [1, 2, 3, 2]), ([1, 7, 9, 5], [2, 1, 1, 1]), ([1, 3, 3, 8], [1, 2, 1, 1]),
                        ([3, 5, 17], [2, 2, 1]), ([3, 17], [3, 2]), ([5], [4]), ([2, 3, 5, 1], [2, 1, 2, 3])):
        out = [d * m for d, m in zip(shape, mult)]
        cases.append(_simple_case(f"tile-{_shape_id(shape)}-m{'_'.join(map(str, mult))}", "TILE", shape,
                                  [mult], out))
    return cases


def _pad_family_case(op, shape, paddings, mode=None, value=None):
    paddings = np.asarray(paddings, np.int32)
    out = [d + int(p.sum()) for d, p in zip(shape, paddings)]
    options = dict(mode=mode) if mode else None

    def build(mb, rng, cpu):
        inputs = []
        x = _input(mb, rng, shape, inputs)
        ins = [x, _int_const(mb, paddings)]
        if value is not None:
            ins.append(mb.add_tensor([], data=np.float32(value)))
        _emit(mb, op, ins, out, options, cpu)
        return inputs

    pads_id = "_".join(f"{a}.{b}" for a, b in paddings)
    kind = (mode or "").lower() or f"v{value}"
    return Case(f"{op.lower()}-{kind}-{_shape_id(shape)}-p{pads_id}", build)


def mirror_pad_cases():
    cases = []
    for mode in ("REFLECT", "SYMMETRIC"):
        m = lambda s, p: _pad_family_case("MIRROR_PAD", s, p, mode=mode)  # noqa: E731
        cases += [
            m([1, 7, 9, 5], [[0, 0], [2, 1], [3, 3], [0, 0]]),
            m([2, 5, 6, 3], [[0, 0], [1, 1], [1, 1], [0, 0]]),
            m([1, 4, 5, 5], [[0, 0], [0, 0], [0, 0], [2, 4]]),
            m([2, 3, 3, 17], [[1, 1], [2, 0], [0, 2], [1, 0]]),
            m([7, 9, 5], [[3, 2], [0, 1], [1, 1]]),
            m([7, 9], [[1, 2], [4, 0]]),
            m([7], [[2, 3]]),
            m([2, 5, 7, 1], [[0, 1], [3, 1], [1, 4], [0, 0]]),
        ]
    return cases


def padv2_cases():
    p = lambda s, pads, v: _pad_family_case("PADV2", s, pads, value=v)  # noqa: E731
    return [
        p([1, 7, 9, 3], [[0, 0], [1, 2], [2, 1], [0, 0]], 0.5),
        p([2, 5, 5, 17], [[0, 0], [0, 0], [0, 0], [2, 1]], -1.5),
        p([1, 5, 5, 8], [[1, 0], [0, 1], [1, 0], [0, 3]], 3.0),
        p([7, 9], [[1, 2], [3, 0]], 0.0),
        p([9], [[4, 1]], -2.0),
        p([7, 9, 1], [[1, 0], [0, 2], [1, 2]], 1.25),
    ]


def space_to_depth_cases():
    cases = []
    for shape, block in (([1, 6, 8, 3], 2), ([2, 6, 9, 5], 3), ([1, 4, 4, 4], 2), ([1, 8, 8, 17], 4),
                         ([2, 4, 6, 1], 2), ([1, 10, 6, 8], 2)):
        n, h, w, c = shape
        out = [n, h // block, w // block, c * block * block]
        cases.append(Case(f"s2d-{_shape_id(shape)}-b{block}", _s2d_build(shape, block, out)))
    return cases


def _s2d_build(shape, block, out):
    def build(mb, rng, cpu):
        inputs = []
        x = _input(mb, rng, shape, inputs)
        _emit(mb, "SPACE_TO_DEPTH", [x], out, dict(block_size=block), cpu)
        return inputs
    return build


NEAREST_MODES = {"plain": (False, False), "align": (True, False), "halfpixel": (False, True),
                 "align+halfpixel": (True, True)}


def _nearest_case(n, h, w, c, oh, ow, mode):
    align_corners, half_pixel = NEAREST_MODES[mode]

    def build(mb, rng, cpu):
        inputs = []
        x = _input(mb, rng, [n, h, w, c], inputs)
        size = _int_const(mb, [oh, ow])
        _emit(mb, "RESIZE_NEAREST_NEIGHBOR", [x, size], [n, oh, ow, c],
              dict(align_corners=align_corners, half_pixel_centers=half_pixel), cpu,
              version=3 if half_pixel else 1)
        return inputs

    return Case(f"nearest-{n}x{h}x{w}x{c}-to{oh}x{ow}-{mode}", build)


def resize_nearest_cases():
    geometries = [((7, 9), (14, 18)), ((5, 5), (13, 11)), ((13, 11), (5, 7)), ((7, 9), (3, 20)),
                  ((1, 1), (5, 3)), ((6, 7), (1, 1)), ((3, 2), (10, 9))]
    cases = []
    for i, ((h, w), (oh, ow)) in enumerate(geometries):
        for j, mode in enumerate(NEAREST_MODES):
            cases.append(_nearest_case(1 + (i + j) % 2, h, w, CHANNELS[(i + j) % len(CHANNELS)], oh, ow, mode))
    return cases


def _gather_case(params_shape, axis, indices, runtime_indices=False, const_params=False, index_dtype=np.int32):
    indices = np.asarray(indices, index_dtype)
    rank = len(params_shape)
    a = axis % rank
    out = list(params_shape[:a]) + list(indices.shape) + list(params_shape[a + 1:])

    def build(mb, rng, cpu):
        inputs = []
        params = _const(mb, rng, params_shape) if const_params else _input(mb, rng, params_shape, inputs)
        if runtime_indices:
            inputs.append(indices)
            idx = mb.add_input(indices.shape, np.int32)
        else:
            idx = _int_const(mb, indices, index_dtype)
        _emit(mb, "GATHER", [params, idx], out, dict(axis=axis), cpu)
        return inputs

    kind = ("rt" if runtime_indices else "const") + ("-constparams" if const_params else "")
    ids = _shape_id(indices.shape)
    return Case(f"gather-{_shape_id(params_shape)}-axis{axis}-idx{ids}-{kind}-{np.dtype(index_dtype).name}",
                build)


def gather_cases():
    g = _gather_case
    return [
        g([7, 9, 5], 0, [4, 0, 6, 6]),
        g([7, 9, 5], 1, [8, 1, 2], runtime_indices=True),
        g([7, 9, 5], -1, [4, 0, 2, 1, 3, 3]),
        g([2, 7, 9, 17], 3, [16, 0, 5, 3, 3], runtime_indices=True),
        g([2, 7, 9, 17], 1, [6, 2], index_dtype=np.int64),
        g([2, 7, 9, 3], 0, [1, 0, 1]),
        g([7, 9, 3], -2, [[0, 8], [4, 4]], runtime_indices=True),
        g([10, 17], 0, [[1, 2, 9], [0, 0, 5]], runtime_indices=True),
        g([10, 17], 1, np.int32(5)),                                              # scalar index
        g([50, 17], 0, [[3, 49, 7, 7, 0], [1, 2, 3, 4, 5]], runtime_indices=True, const_params=True),
        g([13], 0, [12, 0, 3, 3], runtime_indices=True),
        g([2, 5, 1], 1, [4, 4, 0], runtime_indices=True),
        g([2, 5, 9, 1], -4, [1]),
    ]


def _one_hot_case(indices, depth, axis):
    indices = np.asarray(indices, np.int32)
    q = indices.ndim
    a = q if axis == -1 else axis
    out = list(indices.shape)
    out.insert(a, depth)

    def build(mb, rng, cpu):
        inputs = [indices]
        idx = mb.add_input(indices.shape, np.int32)
        ins = [idx, _int_const(mb, np.int32(depth)), mb.add_tensor([], data=np.float32(2.5)),
               mb.add_tensor([], data=np.float32(-0.5))]
        _emit(mb, "ONE_HOT", ins, out, dict(axis=axis), cpu)
        return inputs

    return Case(f"onehot-{_shape_id(indices.shape)}-d{depth}-axis{axis}", build)


def one_hot_cases():
    rng = np.random.default_rng(7)
    # -1 and depth are out of range: TFLite writes all off values there.
    return [
        _one_hot_case([3, 0, 6, -1, 7, 2], 7, -1),
        _one_hot_case(rng.integers(-1, 6, (2, 3)), 5, -1),
        _one_hot_case(rng.integers(0, 5, (2, 3)), 5, 0),
        _one_hot_case(rng.integers(0, 5, (2, 3)), 5, 1),
        _one_hot_case(rng.integers(0, 3, (2, 3, 4)), 3, -1),
        _one_hot_case(rng.integers(0, 17, (3, 5)), 17, 2),
        _one_hot_case(rng.integers(0, 4, (5, 2, 3)), 4, 1),
    ]
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


# -- the table -----------------------------------------------------------------

def _unique(cases):
    """Drop repeats: with C=1 or a 1x1 image some broadcasts equal the plain case."""
    unique = {}
    for case in cases:
        unique.setdefault(case.id, case)
    return list(unique.values())


# -- EXPAND_DIMS / SQUEEZE: reshapes that add or drop size-1 dimensions ----------

def _expand_dims_case(in_shape, axis):
    out_shape = list(np.expand_dims(np.empty(in_shape), axis).shape)

    def build(mb, rng, cpu):
        inputs = []
        x = _input(mb, rng, in_shape, inputs)
        a = mb.add_tensor([1], np.int32, data=np.asarray([axis], np.int32))
        _emit(mb, "EXPAND_DIMS", [x, a], out_shape, None, cpu)
        return inputs

    return Case(f"expand_dims-{_shape_id(in_shape)}-axis{axis}", build)


def _squeeze_case(in_shape, dims):
    out_shape = list(np.squeeze(np.empty(in_shape), axis=tuple(dims) if dims else None).shape)

    def build(mb, rng, cpu):
        inputs = []
        x = _input(mb, rng, in_shape, inputs)
        _emit(mb, "SQUEEZE", [x], out_shape, dict(squeeze_dims=list(dims)) if dims else None, cpu)
        return inputs

    return Case(f"squeeze-{_shape_id(in_shape)}-dims{'_'.join(map(str, dims)) or 'all'}", build)


def _conv_chain_case():
    """basic-pitch's pattern: convolutions separated by SQUEEZE / EXPAND_DIMS
    (a 1-channel map squeezed to rank 3 and expanded back). Every node must
    be delegated, in one partition."""
    def build(mb, rng, cpu):
        inputs = []
        x = _input(mb, rng, [2, 13, 11, 3], inputs)
        w1 = _const(mb, rng, [1, 3, 3, 3])
        b1 = _const(mb, rng, [1])
        c1 = mb.add_tensor([2, 13, 11, 1])
        mb.add_op("CONV_2D", [x, w1, b1], [c1], dict(padding="SAME", fused_activation="RELU"))
        sq = mb.add_tensor([2, 13, 11])
        mb.add_op("SQUEEZE", [c1], [sq], dict(squeeze_dims=[3]))
        a = mb.add_tensor([1], np.int32, data=np.asarray([-1], np.int32))
        ex = mb.add_tensor([2, 13, 11, 1])
        mb.add_op("EXPAND_DIMS", [sq, a], [ex])
        w2 = _const(mb, rng, [5, 3, 3, 1])
        b2 = _const(mb, rng, [5])
        _emit(mb, "CONV_2D", [ex, w2, b2], [2, 13, 11, 5], dict(padding="SAME"), cpu)
        return inputs

    return Case("conv_chain-squeeze-expand_dims", build)


def expand_squeeze_cases():
    """Channels 1, 3, 5, 17, odd sizes, batch > 1; positive and negative axes."""
    return [_expand_dims_case([2, 7, 5], 1), _expand_dims_case([3, 17], -1), _expand_dims_case([1, 9, 3], 0),
            _expand_dims_case([2, 5, 13], -2), _expand_dims_case([17], 0),
            _squeeze_case([2, 1, 7, 3], [1]), _squeeze_case([1, 9, 1, 5], []), _squeeze_case([3, 1, 1, 17], [-2, 1]),
            _squeeze_case([2, 11, 1], [-1]), _squeeze_case([1, 1, 1, 1], []), _conv_chain_case()]


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


def _reverse_case(shape, axis):
    def build(mb, rng, cpu):
        inputs = []
        x = _input(mb, rng, shape, inputs)
        a = mb.add_tensor([1], np.int32, data=np.asarray([axis], np.int32))
        _emit(mb, "REVERSE_V2", [x, a], shape, None, cpu)
        return inputs

    return Case(f"reverse_v2-{_shape_id(shape)}-axis{axis}", build)


def reverse_cases():
    cases = [_reverse_case([2, 7, 9, 3], a) for a in (0, 1, 2, 3, -1)]
    return cases + [_reverse_case([1, 5, 5, 17], -1), _reverse_case([3, 17], 0), _reverse_case([17], 0),
                    _reverse_case([2, 3, 5], -2), _reverse_case([5, 1], 1), _reverse_case([3, 11, 6], 2)]


def all_cases():
    return _unique(conv_cases() + depthwise_cases() + binary_cases("ADD") + binary_cases("MUL")
                   + concat_cases() + maxpool_cases() + avgpool_cases() + pad_cases() + prelu_cases()
                   + relu_cases() + activation_op_cases() + reshape_cases() + strided_slice_cases()
                   + densify_cases() + resize_cases() + mean_cases() + fully_connected_cases()
                   + depth_to_space_cases() + math_cases() + transpose_cases() + slice_cases() + split_cases()
                   + pack_cases() + unpack_cases() + tile_cases() + mirror_pad_cases() + padv2_cases()
                   + space_to_depth_cases() + resize_nearest_cases() + gather_cases() + one_hot_cases()
                   + elementwise_cases() + expand_squeeze_cases() + reverse_cases())


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
    L2_NORMALIZATION (also run in FP16)."""
    return (reduce_cases() + softmax_cases() + cumsum_cases() + batch_matmul_cases() + lstm_cases()
            + arg_minmax_cases() + l2_norm_cases())


def absorbed_dequantize_cases():
    """fp16 constant -> DEQUANTIZE -> conv: the delegate must take all of it."""
    return [_conv_case(1, 7, 9, 5, 8, 3, 3, 1, "SAME", 1, "NONE", fp16=True, dequantize_version=v)
            for v in (2, 3)] + [
            _conv_case(1, 7, 9, 8, 0, 3, 3, 1, "SAME", 1, "RELU", fp16=True, dequantize_version=v,
                       depthwise=True) for v in (2, 3)]
