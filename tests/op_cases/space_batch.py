"""SPACE_TO_BATCH_ND and BATCH_TO_SPACE_ND, alone and around a VALID
convolution as older converters write a dilated one."""

import numpy as np

from ._common import Case, _const, _emit, _input, _shape_id


def _ints(mb, values):
    values = np.asarray(values, np.int32)
    return mb.add_tensor(values.shape, np.int32, data=values)


def _s2b_shape(shape, block, pads):
    n, h, w, c = shape
    return [n * block[0] * block[1], (h + pads[0][0] + pads[0][1]) // block[0],
            (w + pads[1][0] + pads[1][1]) // block[1], c]


def _b2s_shape(shape, block, crops):
    n, h, w, c = shape
    return [n // (block[0] * block[1]), h * block[0] - crops[0][0] - crops[0][1],
            w * block[1] - crops[1][0] - crops[1][1], c]


def _case(op, shape, block, edges):
    out = (_s2b_shape if op == "SPACE_TO_BATCH_ND" else _b2s_shape)(shape, block, edges)

    def build(mb, rng, cpu):
        inputs = []
        x = _input(mb, rng, shape, inputs)
        _emit(mb, op, [x, _ints(mb, block), _ints(mb, edges)], out, None, cpu)
        return inputs

    tag = "s2b" if op == "SPACE_TO_BATCH_ND" else "b2s"
    e = "".join(str(v) for row in edges for v in row)
    return Case(f"{tag}-{_shape_id(shape)}-b{block[0]}x{block[1]}-e{e}", build)


def _dilated_conv_case(n, h, w, cin, cout, rate):
    """SPACE_TO_BATCH_ND -> 3x3 VALID CONV_2D -> BATCH_TO_SPACE_ND: a SAME
    3x3 convolution with dilation `rate`, the way TF 1.x exported it."""
    # Pad so the padded size is a multiple of rate and the VALID conv on
    # each batch piece leaves ceil(h / rate) rows; crop what is extra.
    def pads(size):
        total = -(-(size + 2 * rate) // rate) * rate - size
        return [rate, total - rate]
    ph, pw = pads(h), pads(w)
    s2b = _s2b_shape([n, h, w, cin], [rate, rate], [ph, pw])
    conv = [s2b[0], s2b[1] - 2, s2b[2] - 2, cout]
    crops = [[0, conv[1] * rate - h], [0, conv[2] * rate - w]]

    def build(mb, rng, cpu):
        inputs = []
        x = _input(mb, rng, [n, h, w, cin], inputs)
        a = mb.add_tensor(s2b)
        mb.add_op("SPACE_TO_BATCH_ND", [x, _ints(mb, [rate, rate]), _ints(mb, [ph, pw])], [a])
        b = mb.add_tensor(conv)
        mb.add_op("CONV_2D", [a, _const(mb, rng, [cout, 3, 3, cin]), _const(mb, rng, [cout])], [b],
                  dict(padding="VALID"))
        _emit(mb, "BATCH_TO_SPACE_ND", [b, _ints(mb, [rate, rate]), _ints(mb, crops)], [n, h, w, cout], None, cpu)
        return inputs

    return Case(f"dilated-conv-{_shape_id([n, h, w, cin])}-to{cout}-r{rate}", build)


def space_batch_cases():
    cases = [
        _case("SPACE_TO_BATCH_ND", [1, 6, 8, 3], [2, 2], [[0, 0], [0, 0]]),
        _case("SPACE_TO_BATCH_ND", [2, 7, 9, 5], [2, 2], [[1, 0], [0, 1]]),   # odd sizes padded even
        _case("SPACE_TO_BATCH_ND", [1, 5, 7, 17], [3, 2], [[2, 2], [1, 0]]),
        _case("SPACE_TO_BATCH_ND", [2, 4, 6, 1], [1, 3], [[0, 1], [0, 0]]),
        _case("SPACE_TO_BATCH_ND", [1, 3, 3, 8], [4, 4], [[1, 0], [0, 1]]),
        _case("BATCH_TO_SPACE_ND", [4, 3, 4, 3], [2, 2], [[0, 0], [0, 0]]),
        _case("BATCH_TO_SPACE_ND", [8, 4, 5, 5], [2, 2], [[1, 0], [0, 1]]),   # batch 2, odd outputs
        _case("BATCH_TO_SPACE_ND", [6, 3, 4, 17], [3, 2], [[2, 1], [1, 0]]),
        _case("BATCH_TO_SPACE_ND", [3, 5, 2, 1], [1, 3], [[0, 1], [0, 0]]),
        _case("BATCH_TO_SPACE_ND", [16, 2, 2, 8], [4, 4], [[1, 0], [0, 1]]),
    ]
    return cases + [_dilated_conv_case(1, 9, 11, 3, 5, 2), _dilated_conv_case(2, 7, 7, 17, 8, 2),
                    _dilated_conv_case(1, 13, 10, 5, 3, 4)]
