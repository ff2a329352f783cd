"""MAX_POOL_2D / AVERAGE_POOL_2D and RESIZE_BILINEAR."""

import itertools

import numpy as np

from ._common import ACTIVATIONS, CHANNELS, Case, _emit, _input, _out_size

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
