"""CONV_2D, DEPTHWISE_CONV_2D, DENSIFY (sparse weights), FULLY_CONNECTED and the absorbed
fp16 DEQUANTIZE cases."""

import itertools

import numpy as np

from ._common import (ACTIVATIONS, CHANNELS, Case, SPATIAL, _bias, _emit, _fits, _input, _normal, _out_size,
                      _shape_id, _weights)

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


def absorbed_dequantize_cases():
    """fp16 constant -> DEQUANTIZE -> conv: the delegate must take all of it."""
    return [_conv_case(1, 7, 9, 5, 8, 3, 3, 1, "SAME", 1, "NONE", fp16=True, dequantize_version=v)
            for v in (2, 3)] + [
            _conv_case(1, 7, 9, 8, 0, 3, 3, 1, "SAME", 1, "RELU", fp16=True, dequantize_version=v,
                       depthwise=True) for v in (2, 3)]
