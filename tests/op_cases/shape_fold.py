"""SHAPE and the integer chains converters build on it (issue 14), as the
op sweep runs them: each graph computes a RESHAPE's shape or a RESIZE's
size from a runtime tensor's SHAPE, and the delegate must fold the whole
chain at prepare and take every node. The float ops around the chain see
seeded normal data; the result is compared with the CPU's as every op."""

import numpy as np

from ._common import Case, _const, _input


def _ints(mb, values, dtype=np.int32):
    values = np.asarray(values, dtype)
    return mb.add_tensor(list(values.shape), dtype, data=values)


def _int_op(mb, op, inputs, shape, options=None, dtype=np.int32):
    out = mb.add_tensor(shape, dtype)
    mb.add_op(op, inputs, [out], options)
    return out


def _shape_of(mb, x, rank, dtype=np.int32):
    return _int_op(mb, "SHAPE", [x], [rank], dict(out_type="INT64" if dtype == np.int64 else "INT32"), dtype)


def _element(mb, vec, index, dtype=np.int32):
    """vec[index] as a scalar: STRIDED_SLICE with shrink_axis, as Keras writes it."""
    return _int_op(mb, "STRIDED_SLICE", [vec, _ints(mb, [index]), _ints(mb, [index + 1]), _ints(mb, [1])], [],
                   dict(shrink_axis_mask=1), dtype)


def _biased(mb, rng, shape, inputs):
    """A runtime input plus a per-channel constant (so a batch resize
    still broadcasts): a float node before the chain."""
    x = _input(mb, rng, shape, inputs)
    y = mb.add_tensor(shape)
    mb.add_op("ADD", [x, _const(mb, rng, shape[-1:])], [y], dict(fused_activation="NONE"))
    return y


def _flatten_case(shape):
    """Keras' Flatten with a dynamic batch: reshape to [shape[0], -1 as a
    constant product]."""
    def build(mb, rng, cpu):
        inputs = []
        x = _biased(mb, rng, shape, inputs)
        batch = _element(mb, _shape_of(mb, x, len(shape)), 0)
        rest = int(np.prod(shape[1:]))
        new_shape = _int_op(mb, "PACK", [batch, _ints(mb, rest)], [2], dict(values_count=2, axis=0))
        out = mb.add_tensor([shape[0], rest])
        mb.add_op("RESHAPE", [x, new_shape], [out])
        mb.mark_output(out)
        return inputs
    return Case("shape-flatten-" + "x".join(map(str, shape)), build)


def _prod_case(shape):
    """[batch, prod(shape[1:])] through SHAPE (int64) -> CAST -> a sliced
    REDUCE_PROD, then EXPAND_DIMS and CONCATENATION of vectors."""
    def build(mb, rng, cpu):
        inputs = []
        x = _biased(mb, rng, shape, inputs)
        dims = _int_op(mb, "CAST", [_shape_of(mb, x, len(shape), np.int64)], [len(shape)])
        tail = _int_op(mb, "STRIDED_SLICE", [dims, _ints(mb, [1]), _ints(mb, [0]), _ints(mb, [1])], [len(shape) - 1],
                       dict(end_mask=1))
        prod = _int_op(mb, "REDUCE_PROD", [tail, _ints(mb, [0])], [], dict(keep_dims=False))
        batch = _int_op(mb, "EXPAND_DIMS", [_element(mb, dims, 0), _ints(mb, 0)], [1])
        new_shape = _int_op(mb, "CONCATENATION", [batch, _int_op(mb, "EXPAND_DIMS", [prod, _ints(mb, 0)], [1])], [2],
                            dict(axis=0))
        out = mb.add_tensor([shape[0], int(np.prod(shape[1:]))])
        mb.add_op("RESHAPE", [x, new_shape], [out])
        mb.mark_output(out)
        return inputs
    return Case("shape-prod-" + "x".join(map(str, shape)), build)


def _gather_case(shape, order):
    """A reshape to the input's dims in another order, picked by GATHER,
    followed by a float op on the result."""
    def build(mb, rng, cpu):
        inputs = []
        x = _biased(mb, rng, shape, inputs)
        new_shape = _int_op(mb, "GATHER", [_shape_of(mb, x, len(shape)), _ints(mb, order)], [len(order)],
                            dict(axis=0, batch_dims=0))
        out_shape = [shape[i] for i in order]
        y = mb.add_tensor(out_shape)
        mb.add_op("RESHAPE", [x, new_shape], [y])
        out = mb.add_tensor(out_shape)
        mb.add_op("MUL", [y, _const(mb, rng, out_shape[-1:])], [out], dict(fused_activation="NONE"))
        mb.mark_output(out)
        return inputs
    return Case(f"shape-gather-{'x'.join(map(str, shape))}-{''.join(map(str, order))}", build)


def _resize_case(shape, op, scale):
    """A RESIZE whose size is the input's height and width times `scale`
    (MUL) or divided by -scale (FLOOR_DIV), clamped by MAXIMUM/MINIMUM and
    an ADD/SUB pair that cancels."""
    def build(mb, rng, cpu):
        inputs = []
        n, h, w, c = shape
        x = _biased(mb, rng, shape, inputs)
        hw = _int_op(mb, "SLICE", [_shape_of(mb, x, 4), _ints(mb, [1]), _ints(mb, [2])], [2])
        if scale > 0:
            size = _int_op(mb, "MUL", [hw, _ints(mb, scale)], [2], dict(fused_activation="NONE"))
            oh, ow = h * scale, w * scale
        else:
            size = _int_op(mb, "FLOOR_DIV", [hw, _ints(mb, -scale)], [2])
            oh, ow = max(h // -scale, 1), max(w // -scale, 1)
        size = _int_op(mb, "MAXIMUM", [size, _ints(mb, [1, 1])], [2])
        size = _int_op(mb, "MINIMUM", [size, _ints(mb, 1000)], [2])
        size = _int_op(mb, "ADD", [size, _ints(mb, 3)], [2], dict(fused_activation="NONE"))
        size = _int_op(mb, "SUB", [size, _ints(mb, [3, 3])], [2], dict(fused_activation="NONE"))
        out = mb.add_tensor([n, oh, ow, c])
        options = dict(align_corners=False, half_pixel_centers=False)
        mb.add_op(op, [x, size], [out], options)
        mb.mark_output(out)
        return inputs
    return Case(f"shape-{op.lower()}-{'x'.join(map(str, shape))}-s{scale}", build)


def _packed_vectors_case(shape):
    """[n*c, h, w] from [n, h] and [c, w] (a reversed STRIDED_SLICE) packed
    along axis 1 into [[n, c], [h, w]], flattened by RESHAPE, multiplied and
    sliced; EXPAND_DIMS then SQUEEZE of the product on the way."""
    def build(mb, rng, cpu):
        inputs = []
        n, h, w, c = shape
        x = _biased(mb, rng, shape, inputs)
        dims = _shape_of(mb, x, 4)
        first = _int_op(mb, "STRIDED_SLICE", [dims, _ints(mb, [0]), _ints(mb, [2]), _ints(mb, [1])], [2])
        second = _int_op(mb, "STRIDED_SLICE", [dims, _ints(mb, [-1]), _ints(mb, [1]), _ints(mb, [-1])], [2])
        pairs = _int_op(mb, "PACK", [first, second], [2, 2], dict(values_count=2, axis=1))  # [[n, c], [h, w]]
        flat = _int_op(mb, "RESHAPE", [pairs, _ints(mb, [4])], [4])
        nc = _int_op(mb, "MUL", [_element(mb, flat, 0), _element(mb, flat, 1)], [], dict(fused_activation="NONE"))
        hw = _int_op(mb, "SLICE", [flat, _ints(mb, [2]), _ints(mb, [-1])], [2])
        one = _int_op(mb, "SQUEEZE", [_int_op(mb, "EXPAND_DIMS", [nc, _ints(mb, 0)], [1])], [])
        new_shape = _int_op(mb, "CONCATENATION", [_int_op(mb, "EXPAND_DIMS", [one, _ints(mb, 0)], [1]), hw], [3],
                            dict(axis=0))
        out = mb.add_tensor([n * c, h, w])
        mb.add_op("RESHAPE", [x, new_shape], [out])
        mb.mark_output(out)
        return inputs
    return Case("shape-pack-vectors-" + "x".join(map(str, shape)), build)


def shape_fold_cases():
    cases = [_flatten_case(s) for s in ([3, 5, 7, 3], [1, 1, 1, 17], [2, 9, 5])]
    cases += [_prod_case(s) for s in ([2, 5, 3, 5], [3, 13, 17])]
    cases += [_gather_case([2, 5, 3, 17], [0, 2, 1, 3]), _gather_case([3, 7, 5], [2, 0, 1])]
    cases += [_resize_case([1, 5, 7, 3], "RESIZE_BILINEAR", 2), _resize_case([2, 9, 13, 5], "RESIZE_NEAREST_NEIGHBOR", -2)]
    cases += [_packed_vectors_case([2, 3, 5, 17])]
    return cases
