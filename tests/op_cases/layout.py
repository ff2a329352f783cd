"""Data movement: CONCATENATION, PAD / PADV2 / MIRROR_PAD, RESHAPE, EXPAND_DIMS / SQUEEZE,
STRIDED_SLICE / SLICE, SPLIT, PACK / UNPACK, TILE, TRANSPOSE, DEPTH_TO_SPACE /
SPACE_TO_DEPTH, RESIZE_NEAREST_NEIGHBOR, GATHER, ONE_HOT, REVERSE_V2."""

import numpy as np

from ._common import ACTIVATIONS, CHANNELS, Case, SPATIAL, _const, _emit, _input, _shape_id

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
