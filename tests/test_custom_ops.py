"""TRANSPOSE_CONV against the CPU interpreter, and MediaPipe's custom ops
against numpy references written from their semantics (MediaPipe's
mediapipe/util/tflite/operations/*.cc): the stock CPU interpreter has no
kernels for them, so a model holding one runs only through the delegate.

Tolerances: both sides compute in FP32 and differ only in summation order
(and fused multiply-adds), so relative L2 <= 1e-5 and max abs <= 1e-4 times
the output's magnitude hold with room to spare, and any wrong index or
weight is far outside them.
"""
import struct
import zlib

import numpy as np
import pytest

from conftest import assert_close, run_cpu, run_delegate
from tflite_gpu.model_builder import ModelBuilder

RTOL_L2 = 1e-5
ATOL_SCALE = 1e-4


def _rng(case_id):
    return np.random.default_rng(zlib.crc32(case_id.encode()))


def _close(actual, expected):
    atol = ATOL_SCALE * max(1.0, float(np.abs(expected).max()))
    assert_close(actual, expected, rtol_l2=RTOL_L2, atol=atol)


# -- TRANSPOSE_CONV (builtin) ------------------------------------------------------

def _transpose_out(size, k, stride, padding, extra):
    """An output size whose forward conv gives back `size` (extra picks one
    of the stride-many valid sizes)."""
    if padding == "SAME":
        return (size - 1) * stride + 1 + extra % stride
    return (size - 1) * stride + k + extra % stride


TRANSPOSE_CASES = [
    # (batch, h, w, cin, cout, kh, kw, stride, padding, bias, extra)
    (1, 5, 7, 3, 5, 3, 3, 2, "SAME", True, 1),
    (1, 5, 7, 3, 5, 3, 3, 2, "SAME", False, 1),
    (2, 4, 3, 5, 1, 2, 2, 2, "SAME", True, 0),
    (1, 3, 5, 17, 3, 4, 4, 2, "VALID", True, 1),
    (1, 3, 5, 17, 3, 4, 4, 2, "VALID", False, 0),
    (1, 6, 5, 1, 17, 3, 2, 3, "SAME", True, 2),
    (1, 7, 9, 8, 8, 3, 3, 1, "SAME", True, 0),
    (2, 5, 5, 3, 3, 1, 1, 1, "VALID", False, 0),
    (1, 4, 6, 5, 7, 5, 3, 2, "VALID", True, 1),
]


def _transpose_id(c):
    n, h, w, cin, cout, kh, kw, s, pad, bias, extra = c
    return f"tconv-{n}x{h}x{w}x{cin}to{cout}-k{kh}x{kw}-s{s}-{pad}-{'bias' if bias else 'nobias'}-e{extra}"


def _transpose_model(c, version=None):
    n, h, w, cin, cout, kh, kw, s, pad, bias, extra = c
    rng = _rng(_transpose_id(c))
    oh, ow = _transpose_out(h, kh, s, pad, extra), _transpose_out(w, kw, s, pad, extra + 1)
    mb = ModelBuilder()
    x = mb.add_input([n, h, w, cin])
    shape = mb.add_tensor([4], np.int32, data=np.array([n, oh, ow, cout], np.int32))
    wt = mb.add_tensor([cout, kh, kw, cin], data=rng.standard_normal((cout, kh, kw, cin), np.float32))
    inputs = [shape, wt, x]
    if bias:
        inputs.append(mb.add_tensor([cout], data=rng.standard_normal(cout, np.float32)))
    y = mb.add_tensor([n, oh, ow, cout])
    mb.add_op("TRANSPOSE_CONV", inputs, [y], dict(padding=pad, stride_w=s, stride_h=s),
              version=version or (3 if bias else 1))
    mb.mark_output(y)
    return mb.build(), [rng.standard_normal((n, h, w, cin), np.float32)]


@pytest.mark.parametrize("case", TRANSPOSE_CASES, ids=_transpose_id)
def test_transpose_conv_matches_cpu(case):
    model, inputs = _transpose_model(case)
    expected = run_cpu(model, inputs)
    actual, report = run_delegate(model, inputs)
    assert report.cpu_nodes == 0 and report.partitions == 1
    _close(actual[0], expected[0])


def test_transpose_conv_v4_falls_back():
    """Version 4 adds a fused activation the delegate does not read: the node
    stays on the CPU with its reason, and the model stays correct."""
    model, inputs = _transpose_model(TRANSPOSE_CASES[0], version=4)
    expected = run_cpu(model, inputs)
    actual, report = run_delegate(model, inputs)
    assert report.cpu_nodes == 1 and report.partitions == 0
    _close(actual[0], expected[0])  # the CPU leftovers run on XNNPACK: summation order differs


# -- Convolution2DTransposeBias (MediaPipe) ----------------------------------------

def ref_transpose_conv_bias(x, w, b, padding, sw, sh):
    """MediaPipe's transpose_conv_bias.cc: output size and scatter-add."""
    n, h, wd, _ = x.shape
    cout, kh, kw, _ = w.shape

    def pad_total(size, k, s):
        return max(0, k - (size - 1) % s - 1) if padding == 1 else 0

    ph, pw = pad_total(h, kh, sh), pad_total(wd, kw, sw)
    oh, ow = sh * (h - 1) + kh - ph, sw * (wd - 1) + kw - pw
    out = np.tile(b.astype(np.float64), (n, oh, ow, 1))
    for iy in range(h):
        for ix in range(wd):
            for fy in range(kh):
                for fx in range(kw):
                    oy, ox = iy * sh - ph // 2 + fy, ix * sw - pw // 2 + fx
                    if 0 <= oy < oh and 0 <= ox < ow:
                        out[:, oy, ox, :] += x[:, iy, ix, :].astype(np.float64) @ w[:, fy, fx, :].T.astype(np.float64)
    return out.astype(np.float32)


def _tconv_bias_model(x_shape, cout, kh, kw, padding, sw, sh, rng, options=None):
    n, h, wd, cin = x_shape
    w = rng.standard_normal((cout, kh, kw, cin), np.float32)
    b = rng.standard_normal(cout, np.float32)
    x = rng.standard_normal(x_shape, np.float32)
    expected = ref_transpose_conv_bias(x, w, b, padding, sw, sh)
    mb = ModelBuilder()
    xi = mb.add_input(x_shape)
    wi = mb.add_tensor(w.shape, data=w)
    bi = mb.add_tensor(b.shape, data=b)
    y = mb.add_tensor(expected.shape)
    mb.add_op("CUSTOM:Convolution2DTransposeBias", [xi, wi, bi], [y],
              custom_options=options if options is not None else struct.pack("<3i", padding, sw, sh))
    mb.mark_output(y)
    return mb.build(), [x], expected


TCONV_BIAS_CASES = [
    # (input shape, cout, kh, kw, padding (1 SAME, 2 VALID), stride_w, stride_h)
    ((1, 9, 7, 16), 1, 2, 2, 1, 2, 2),   # selfie_segmentation's last layer, smaller
    ((2, 5, 6, 3), 5, 3, 3, 1, 2, 2),
    ((1, 4, 5, 5), 17, 4, 3, 2, 2, 3),
    ((1, 6, 3, 17), 3, 3, 3, 1, 1, 1),
    ((1, 5, 5, 1), 3, 5, 5, 1, 3, 2),
]


@pytest.mark.parametrize("case", TCONV_BIAS_CASES, ids=lambda c: f"tconvbias-{'x'.join(map(str, c[0]))}-{c[1:]}")
def test_convolution2d_transpose_bias(case):
    shape, cout, kh, kw, pad, sw, sh = case
    model, inputs, expected = _tconv_bias_model(shape, cout, kh, kw, pad, sw, sh, _rng(str(case)))
    actual, report = run_delegate(model, inputs)
    assert report.cpu_nodes == 0 and report.partitions == 1
    _close(actual[0], expected)


def test_transpose_conv_bias_reference_agrees_with_tflite():
    """The numpy reference itself, against the CPU's TRANSPOSE_CONV where the
    two ops coincide (VALID: no padding, output stride*(in-1)+k)."""
    rng = _rng("tconv-ref")
    x = rng.standard_normal((1, 4, 5, 3), np.float32)
    w = rng.standard_normal((5, 3, 3, 3), np.float32)
    b = rng.standard_normal(5, np.float32)
    expected = ref_transpose_conv_bias(x, w, b, 2, 2, 2)
    mb = ModelBuilder()
    xi = mb.add_input(x.shape)
    shape = mb.add_tensor([4], np.int32, data=np.array(expected.shape, np.int32))
    y = mb.add_tensor(expected.shape)
    mb.add_op("TRANSPOSE_CONV", [shape, mb.add_tensor(w.shape, data=w), xi, mb.add_tensor([5], data=b)], [y],
              dict(padding="VALID", stride_w=2, stride_h=2), version=3)
    mb.mark_output(y)
    _close(expected, run_cpu(mb.build(), [x])[0])


def test_transpose_conv_bias_short_options_stay_on_cpu():
    """custom_options shorter than the three int32s: refused with a reason
    (the stock runtime then cannot run the node: allocation fails cleanly)."""
    model, inputs, _ = _tconv_bias_model((1, 3, 3, 2), 2, 2, 2, 1, 2, 2, _rng("short"), options=b"\x01\x00")
    with pytest.raises((RuntimeError, ValueError)):
        run_delegate(model, inputs)


# -- MediaPipe landmark ops ------------------------------------------------------

def _flex(options):
    from flatbuffers import flexbuffers
    return bytes(flexbuffers.Dumps(options))


def _single_op_model(op, inputs, out_shape, options):
    """One custom op whose inputs are all graph inputs."""
    mb = ModelBuilder()
    ids = [mb.add_input(x.shape) for x in inputs]
    y = mb.add_tensor(out_shape)
    mb.add_op("CUSTOM:" + op, ids, [y], custom_options=_flex(options) if options is not None else None)
    mb.mark_output(y)
    return mb.build()


def _rot(r):
    return np.array([[np.cos(r), -np.sin(r)], [np.sin(r), np.cos(r)]])


def ref_landmarks_to_matrix_v2(lm, o):
    """landmarks_to_transform_matrix.cc, namespace v2."""
    p = lm.reshape(-1, 3).astype(np.float64)
    left, right = p[o["left_rotation_idx"], :2], p[o["right_rotation_idx"], :2]
    r = o["target_rotation_radians"] - np.arctan2(right[1] - left[1], right[0] - left[0])
    idx = list(o["subset_idxs"])
    pts = (_rot(r) @ p[idx, :2].T).T
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    cx, cy = _rot(-r) @ ((lo + hi) / 2)
    t = np.eye(4)
    shift = np.eye(4)
    shift[0, 3], shift[1, 3] = cx, cy
    rot = np.eye(4)
    rot[:2, :2] = _rot(-r)
    scale = np.diag([o["scale_x"] * (hi[0] - lo[0]) / o["output_width"],
                     o["scale_y"] * (hi[1] - lo[1]) / o["output_height"], 1.0, 1.0])
    shift2 = np.eye(4)
    shift2[0, 3], shift2[1, 3] = -o["output_width"] / 2.0, -o["output_height"] / 2.0
    t = t @ shift @ rot @ scale @ shift2
    return t.astype(np.float32).reshape(1, 4, 4)


def ref_landmarks_to_matrix_v1(lm, o):
    """landmarks_to_transform_matrix.cc, namespace v1."""
    p = lm.reshape(-1, 3).astype(np.float64)
    left, right = p[o["left_rotation_idx"], :2], p[o["right_rotation_idx"], :2]
    alpha = -np.arctan((right[1] - left[1]) / (right[0] - left[0]))
    pts = (_rot(alpha) @ p[list(o["subset"]), :2].T).T
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    rng_, mult = o["landmarks_range"], o["bbox_size_multiplier"]
    bbox = (hi - lo) * mult
    scale = np.diag([bbox[0] / rng_, bbox[1] / rng_, 1.0])
    rmx, rmy = _rot(-alpha) @ ((hi + lo) / 2)
    rotation = np.eye(3)
    rotation[:2, :2] = _rot(-alpha)
    rotation[0, 2], rotation[1, 2] = rmx / rng_ * 2 - 1, rmy / rng_ * 2 - 1
    (ih, iw), (oh, ow) = o["input_hw"], o["output_hw"]
    to_rel = np.array([[2 / (ow - 1), 0, -1], [0, 2 / (oh - 1), -1], [0, 0, 1]])
    to_abs = np.array([[(iw - 1) / 2, 0, (iw - 1) / 2], [0, (ih - 1) / 2, (ih - 1) / 2], [0, 0, 1]])
    m = to_abs @ rotation @ scale @ to_rel
    out = np.array([[m[0, 0], m[0, 1], 0, m[0, 2]], [m[1, 0], m[1, 1], 0, m[1, 2]],
                    [m[2, 0], m[2, 1], m[2, 2], 0], [0, 0, 0, 1]])
    return out.astype(np.float32).reshape(1, 4, 4)


def _landmark_options_v2(rng, n, subset_len):
    left, right = rng.choice(n, 2, replace=False)
    return dict(subset_idxs=[int(i) for i in rng.integers(0, n, subset_len)], left_rotation_idx=int(left),
                right_rotation_idx=int(right), target_rotation_radians=float(rng.uniform(-1, 1)),
                output_height=16, output_width=12, scale_x=1.5, scale_y=1.25)


@pytest.mark.parametrize("n,subset_len", [(37, 11), (468, 80), (5, 1)])
def test_landmarks_to_transform_matrix_v2(n, subset_len):
    rng = _rng(f"l2m-v2-{n}-{subset_len}")
    lm = rng.uniform(0, 192, (1, n, 3)).astype(np.float32)
    opts = _landmark_options_v2(rng, n, subset_len)
    model = _single_op_model("Landmarks2TransformMatrix", [lm], [1, 4, 4], opts)
    actual, report = run_delegate(model, [lm])
    assert report.cpu_nodes == 0 and report.partitions == 1
    _close(actual[0], ref_landmarks_to_matrix_v2(lm, opts))


@pytest.mark.parametrize("n,subset_len", [(21, 7), (3, 2)])
def test_landmarks_to_transform_matrix_v1(n, subset_len):
    rng = _rng(f"l2m-v1-{n}-{subset_len}")
    lm = rng.uniform(0, 192, (1, 1, 1, 3 * n)).astype(np.float32)
    left, right = rng.choice(n, 2, replace=False)
    opts = dict(subset=[int(i) for i in rng.integers(0, n, subset_len)], left_rotation_idx=int(left),
                right_rotation_idx=int(right), input_hw=[48, 40], output_hw=[16, 13], dimensions=3,
                landmarks_range=192, bbox_size_multiplier=1.5)
    model = _single_op_model("Landmarks2TransformMatrix", [lm], [1, 4, 4], opts)
    actual, report = run_delegate(model, [lm])
    assert report.cpu_nodes == 0 and report.partitions == 1
    _close(actual[0], ref_landmarks_to_matrix_v1(lm, opts))


def test_landmarks_to_transform_matrix_index_out_of_range_is_refused():
    """A subset index past the landmarks would read outside the tensor (the
    CPU kernel does not check): the delegate refuses the node, so the stock
    runtime, which has no kernel for it, fails cleanly at allocation."""
    rng = _rng("l2m-bad")
    lm = rng.uniform(0, 192, (1, 7, 3)).astype(np.float32)
    opts = dict(_landmark_options_v2(rng, 7, 3), subset_idxs=[0, 1, 7])
    model = _single_op_model("Landmarks2TransformMatrix", [lm], [1, 4, 4], opts)
    with pytest.raises(RuntimeError, match="Landmarks2TransformMatrix"):
        run_delegate(model, [lm])


def _random_matrix(rng, translate=20.0):
    m = np.eye(4, dtype=np.float32)
    m[:2, :2] = rng.uniform(-2, 2, (2, 2))
    m[:2, 3] = rng.uniform(-translate, translate, 2)
    m[:2, 2] = rng.uniform(-1, 1, 2)  # multiplies z = 0: must not matter
    return m.reshape(1, 4, 4)


def ref_transform_landmarks(lm, mat, dims, scale):
    """transform_landmarks.cc: x, y through the first two rows (translation
    times scale), z copied."""
    m = mat.reshape(4, 4).astype(np.float64)
    p = lm.reshape(-1, dims).astype(np.float64)
    out = p.copy()
    out[:, 0] = m[0, 0] * p[:, 0] + m[0, 1] * p[:, 1] + m[0, 3] * scale
    out[:, 1] = m[1, 0] * p[:, 0] + m[1, 1] * p[:, 1] + m[1, 3] * scale
    return out.reshape(lm.shape).astype(np.float32)


@pytest.mark.parametrize("n,dims", [(80, 2), (71, 2), (5, 3), (1, 3)])
def test_transform_landmarks_v2(n, dims):
    rng = _rng(f"tl-v2-{n}-{dims}")
    lm = rng.uniform(-50, 50, (1, n, dims)).astype(np.float32)
    mat = _random_matrix(rng)
    model = _single_op_model("TransformLandmarks", [lm, mat], lm.shape, None)
    actual, report = run_delegate(model, [lm, mat])
    assert report.cpu_nodes == 0 and report.partitions == 1
    _close(actual[0], ref_transform_landmarks(lm, mat, dims, 1.0))


@pytest.mark.parametrize("shape,dims,scale", [((1, 2, 3, 9), 3, 0.5), ((1, 3, 1, 10), 2, 2.0), ((1, 1, 1, 3), 3, 1.0)])
def test_transform_landmarks_v1(shape, dims, scale):
    rng = _rng(f"tl-v1-{shape}-{dims}")
    lm = rng.uniform(-50, 50, shape).astype(np.float32)
    mat = _random_matrix(rng)
    model = _single_op_model("TransformLandmarks", [lm, mat], lm.shape, dict(dimensions=dims, scale=scale))
    actual, report = run_delegate(model, [lm, mat])
    assert report.cpu_nodes == 0 and report.partitions == 1
    _close(actual[0], ref_transform_landmarks(lm, mat, dims, scale))


def ref_transform_tensor_bilinear(x, mat, oh, ow, align_corners):
    """transform_tensor_bilinear.cc (batch 0)."""
    m = mat.reshape(4, 4).astype(np.float32)
    xt, yt = m[0].copy(), m[1].copy()
    if align_corners:
        xt[3] += xt[0] * 0.5 + xt[1] * 0.5 - 0.5
        yt[3] += yt[0] * 0.5 + yt[1] * 0.5 - 0.5
    _, h, w, c = x.shape
    img = x[0].astype(np.float64)
    out = np.zeros((1, oh, ow, c), np.float64)

    def read(yy, xx):
        return img[yy, xx] if 0 <= yy < h and 0 <= xx < w else np.zeros(c)

    for oy in range(oh):
        for ox in range(ow):
            tx = np.float32(xt[0] * ox + xt[1] * oy + xt[3])
            ty = np.float32(yt[0] * ox + yt[1] * oy + yt[3])
            if tx < 0 or tx > w - 1 or ty < 0 or ty > h - 1:
                continue
            x0, y0 = int(np.floor(tx)), int(np.floor(ty))
            rc, lc = tx - x0, ty - y0
            upper = (1 - rc) * read(y0, x0) + rc * read(y0, x0 + 1)
            lower = (1 - rc) * read(y0 + 1, x0) + rc * read(y0 + 1, x0 + 1)
            out[0, oy, ox] = lc * lower + (1 - lc) * upper
    return out.astype(np.float32)


def _sampling_matrix(rng, h, w, oh, ow):
    """Maps the output grid over most of the input, rotated, partly outside."""
    r = rng.uniform(-0.6, 0.6)
    s = rng.uniform(0.8, 1.3) * max(h / oh, w / ow)
    m = np.eye(4, dtype=np.float32)
    m[:2, :2] = s * _rot(r)
    m[0, 3], m[1, 3] = w / 2 - s * ow / 2 * 0.9, h / 2 - s * oh / 2 * 0.9
    return m.reshape(1, 4, 4)


@pytest.mark.parametrize("version", [1, 2, "TransformTensor"])
@pytest.mark.parametrize("h,w,c,oh,ow", [(48, 48, 32, 16, 16), (13, 11, 3, 7, 9), (9, 7, 17, 5, 5), (6, 5, 1, 9, 7)])
def test_transform_tensor_bilinear(version, h, w, c, oh, ow):
    """Versions 1 and 2 under TransformTensorBilinear, and version 1 under
    the name MediaPipe registers it with, TransformTensor."""
    name = "TransformTensorBilinear"
    if version == "TransformTensor":
        name, version = "TransformTensor", 1
    rng = _rng(f"ttb-{version}-{h}-{w}-{c}-{oh}-{ow}")
    x = rng.standard_normal((1, h, w, c)).astype(np.float32)
    mat = _sampling_matrix(rng, h, w, oh, ow)
    opts = (dict(output_height=oh, output_width=ow) if version == 2
            else dict(output_size=[oh, ow], mode="bilinear"))
    model = _single_op_model(name, [x, mat], [1, oh, ow, c], opts)
    actual, report = run_delegate(model, [x, mat])
    assert report.cpu_nodes == 0 and report.partitions == 1
    expected = ref_transform_tensor_bilinear(x, mat, oh, ow, version == 2)
    assert np.count_nonzero(expected) > expected.size // 3, "the sampling grid should mostly land inside"
    assert (expected == 0).all(axis=-1).any(), "and partly outside (zeros)"
    _close(actual[0], expected)


def test_landmarks_crop_chain_like_face_landmark_with_attention():
    """Landmarks2TransformMatrix -> TransformTensorBilinear, with the matrix
    never leaving the device: the pattern of face_landmark_with_attention."""
    rng = _rng("chain")
    lm = rng.uniform(8, 40, (1, 23, 3)).astype(np.float32)
    x = rng.standard_normal((1, 48, 48, 5)).astype(np.float32)
    opts = _landmark_options_v2(rng, 23, 9)
    opts.update(output_height=16, output_width=16, scale_x=1.5, scale_y=1.5)
    mb = ModelBuilder()
    li, xi = mb.add_input(lm.shape), mb.add_input(x.shape)
    mat, y = mb.add_tensor([1, 4, 4]), mb.add_tensor([1, 16, 16, 5])
    mb.add_op("CUSTOM:Landmarks2TransformMatrix", [li], [mat], custom_options=_flex(opts))
    mb.add_op("CUSTOM:TransformTensorBilinear", [xi, mat], [y], custom_options=_flex(
        dict(output_height=16, output_width=16)))
    mb.mark_output(y)
    actual, report = run_delegate(mb.build(), [lm, x])
    assert report.cpu_nodes == 0 and report.partitions == 1
    m = ref_landmarks_to_matrix_v2(lm, opts)
    # The matrix comes from float32 atan2/cos/sin on the device (float64 in
    # the reference): ~1e-6 relative in the sampling coordinates, which the
    # bilinear slopes of unit-normal data turn into ~1e-5 here; the
    # project's usual FP32 bound of 1e-4 covers it.
    expected = ref_transform_tensor_bilinear(x, m, 16, 16, True)
    assert_close(actual[0], expected, rtol_l2=1e-4, atol=1e-3)


# -- MaxPoolingWithArgmax2D, MaxUnpooling2D, Resampler ---------------------------------

def _pool_options(padding, sw, sh, fw, fh, act=0):
    """The raw TfLitePoolParams these ops read: six int32s, then the
    computed padding (four int32s) the converter also writes."""
    return struct.pack("<10i", padding, sw, sh, fw, fh, act, 0, 0, 0, 0)


def _same_pad(size, k, s, padding):
    out = -(-size // s) if padding == 1 else (size - k + s) // s
    return out, max(((out - 1) * s + k - size) // 2, 0)


def ref_max_pool_argmax(x, padding, sw, sh, fw, fh, act):
    """max_pool_argmax.cc: clamped window, strict '>' (first max wins),
    index fy * fw + fx + 0.1 within the window."""
    n, h, w, c = x.shape
    oh, ph = _same_pad(h, fh, sh, padding)
    ow, pw = _same_pad(w, fw, sw, padding)
    vals = np.zeros((n, oh, ow, c), np.float32)
    idx = np.zeros((n, oh, ow, c), np.float32)
    for oy in range(oh):
        for ox in range(ow):
            y0, x0 = oy * sh - ph, ox * sw - pw
            best = np.full((n, c), np.finfo(np.float32).min, np.float32)
            arg = np.zeros((n, c), np.int64)
            for fy in range(max(0, -y0), min(fh, h - y0)):
                for fx in range(max(0, -x0), min(fw, w - x0)):
                    v = x[:, y0 + fy, x0 + fx, :]
                    gt = v > best
                    best = np.where(gt, v, best)
                    arg = np.where(gt, fy * fw + fx, arg)
            vals[:, oy, ox] = np.maximum(best, 0) if act == 1 else best
            idx[:, oy, ox] = arg + np.float32(0.1)
    return vals, idx


@pytest.mark.parametrize("shape,padding,s,f,act", [
    ((1, 7, 9, 3), 1, 2, 2, 0), ((2, 5, 5, 17), 1, 2, 3, 1), ((1, 8, 6, 5), 2, 2, 2, 0),
    ((1, 9, 7, 1), 2, 1, 3, 0), ((1, 6, 6, 4), 1, 3, 2, 0)])
def test_max_pooling_with_argmax(shape, padding, s, f, act):
    rng = _rng(f"mpa-{shape}-{padding}-{s}-{f}-{act}")
    x = rng.standard_normal(shape).astype(np.float32)
    vals, idx = ref_max_pool_argmax(x, padding, s, s, f, f, act)
    mb = ModelBuilder()
    xi = mb.add_input(shape)
    vo, io = mb.add_tensor(vals.shape), mb.add_tensor(idx.shape)
    mb.add_op("CUSTOM:MaxPoolingWithArgmax2D", [xi], [vo, io], custom_options=_pool_options(padding, s, s, f, f, act))
    mb.mark_output(vo)
    mb.mark_output(io)
    actual, report = run_delegate(mb.build(), [x])
    assert report.cpu_nodes == 0 and report.partitions == 1
    np.testing.assert_array_equal(actual[0], vals)  # a max is exact
    np.testing.assert_allclose(actual[1], idx, rtol=0, atol=1e-6)


def ref_max_unpooling(x, indices, sw, sh, fw, fh):
    """max_unpooling.cc: scatter in scan order, last write wins, bounds-checked."""
    n, h, w, c = x.shape
    oh, ow = h * fh, w * fw
    ph, pw = max(((h - 1) * sh + fh - oh) // 2, 0), max(((w - 1) * sw + fw - ow) // 2, 0)
    out = np.zeros((n, oh, ow, c), np.float32)
    for b in range(n):
        for iy in range(h):
            for ix in range(w):
                for ch in range(c):
                    i = int(indices[b, iy, ix, ch])
                    oy, ox = iy * sh - ph + i // fw, ix * sw - pw + i % fw
                    if 0 <= oy < oh and 0 <= ox < ow:
                        out[b, oy, ox, ch] = x[b, iy, ix, ch]
    return out


@pytest.mark.parametrize("shape,s,f", [((1, 4, 5, 3), 2, 2), ((2, 3, 3, 17), 1, 2), ((1, 5, 3, 5), 2, 3),
                                       ((1, 2, 7, 1), 3, 3)])
def test_max_unpooling(shape, s, f):
    rng = _rng(f"unpool-{shape}-{s}-{f}")
    x = rng.standard_normal(shape).astype(np.float32)
    # Indices as MaxPoolingWithArgmax2D writes them: inside the window, + 0.1.
    indices = (rng.integers(0, f * f, shape) + 0.1).astype(np.float32)
    expected = ref_max_unpooling(x, indices, s, s, f, f)
    assert np.count_nonzero(expected) >= x.size // 2
    mb = ModelBuilder()
    xi, ii = mb.add_input(shape), mb.add_input(shape)
    y = mb.add_tensor(expected.shape)
    mb.add_op("CUSTOM:MaxUnpooling2D", [xi, ii], [y], custom_options=_pool_options(1, s, s, f, f))
    mb.mark_output(y)
    actual, report = run_delegate(mb.build(), [x, indices])
    assert report.cpu_nodes == 0 and report.partitions == 1
    np.testing.assert_array_equal(actual[0], expected)  # a copy is exact


def test_argmax_pool_then_unpool_round_trip():
    """The pair as a model uses it: every window's max lands back where it was."""
    rng = _rng("pool-unpool")
    x = rng.standard_normal((1, 6, 8, 5)).astype(np.float32)
    mb = ModelBuilder()
    xi = mb.add_input(x.shape)
    v, i, y = mb.add_tensor([1, 3, 4, 5]), mb.add_tensor([1, 3, 4, 5]), mb.add_tensor(x.shape)
    opts = _pool_options(1, 2, 2, 2, 2)
    mb.add_op("CUSTOM:MaxPoolingWithArgmax2D", [xi], [v, i], custom_options=opts)
    mb.add_op("CUSTOM:MaxUnpooling2D", [v, i], [y], custom_options=opts)
    mb.mark_output(y)
    actual, report = run_delegate(mb.build(), [x])
    assert report.cpu_nodes == 0 and report.partitions == 1
    vals, idx = ref_max_pool_argmax(x, 1, 2, 2, 2, 2, 0)
    np.testing.assert_array_equal(actual[0], ref_max_unpooling(vals, idx, 2, 2, 2, 2))
    # Each 2x2 block holds its max once and zeros elsewhere.
    blocks = x.reshape(1, 3, 2, 4, 2, 5).max(axis=(2, 4))
    np.testing.assert_array_equal(actual[0].reshape(1, 3, 2, 4, 2, 5).sum(axis=(2, 4)), blocks)
    assert np.count_nonzero(actual[0]) == blocks.size


def ref_resampler(src, warp):
    """resampler.cc (TF Addons' resampler)."""
    n, h, w, c = src.shape
    out = np.zeros_like(src, dtype=np.float64)

    def at(b, yy, xx):
        return src[b, yy, xx].astype(np.float64) if 0 <= xx <= w - 1 and 0 <= yy <= h - 1 else np.zeros(c)

    for b in range(n):
        for y in range(h):
            for x in range(w):
                px, py = warp[b, y, x]
                if px > -1 and py > -1 and px < w and py < h:
                    fx, fy = int(np.floor(px)), int(np.floor(py))
                    cx, cy = fx + 1, fy + 1
                    dx, dy = np.float32(cx - px), np.float32(cy - py)
                    out[b, y, x] = (dx * dy * at(b, fy, fx) + (1 - dx) * (1 - dy) * at(b, cy, cx)
                                    + dx * (1 - dy) * at(b, cy, fx) + (1 - dx) * dy * at(b, fy, cx))
    return out.astype(np.float32)


@pytest.mark.parametrize("shape", [(1, 7, 9, 3), (2, 5, 6, 17), (1, 4, 3, 1)])
def test_resampler(shape):
    rng = _rng(f"resampler-{shape}")
    n, h, w, _ = shape
    src = rng.standard_normal(shape).astype(np.float32)
    # Warp points over the image and a margin around it (some outside).
    warp = np.stack([rng.uniform(-1.5, w + 0.5, (n, h, w)), rng.uniform(-1.5, h + 0.5, (n, h, w))],
                    axis=-1).astype(np.float32)
    expected = ref_resampler(src, warp)
    model = _single_op_model("Resampler", [src, warp], shape, None)
    actual, report = run_delegate(model, [src, warp])
    assert report.cpu_nodes == 0 and report.partitions == 1
    assert (expected == 0).all(axis=-1).any()
    _close(actual[0], expected)


# -- FP16 storage -------------------------------------------------------------------

def _fp16_cases():
    """(id, model, inputs, numpy reference) for one model of each kernel."""
    rng = _rng("fp16")
    out = []
    model, inputs, expected = _tconv_bias_model((1, 9, 7, 16), 3, 2, 2, 1, 2, 2, rng)
    out.append(("tconvbias", model, inputs, expected))
    lm = rng.uniform(0, 192, (1, 37, 3)).astype(np.float32)
    opts = _landmark_options_v2(rng, 37, 11)
    out.append(("l2m", _single_op_model("Landmarks2TransformMatrix", [lm], [1, 4, 4], opts), [lm],
                ref_landmarks_to_matrix_v2(lm, opts)))
    lms = rng.uniform(-50, 50, (1, 71, 2)).astype(np.float32)
    mat = _random_matrix(rng)
    out.append(("transform_landmarks", _single_op_model("TransformLandmarks", [lms, mat], lms.shape, None),
                [lms, mat], ref_transform_landmarks(lms, mat, 2, 1.0)))
    x = rng.standard_normal((1, 13, 11, 5)).astype(np.float32)
    m = _sampling_matrix(rng, 13, 11, 7, 9)
    out.append(("transform_tensor", _single_op_model("TransformTensorBilinear", [x, m], [1, 7, 9, 5],
                                                     dict(output_height=7, output_width=9)),
                [x, m], ref_transform_tensor_bilinear(x, m, 7, 9, True)))
    src = rng.standard_normal((1, 7, 9, 3)).astype(np.float32)
    warp = np.stack([rng.uniform(-1, 9, (1, 7, 9)), rng.uniform(-1, 7, (1, 7, 9))], -1).astype(np.float32)
    out.append(("resampler", _single_op_model("Resampler", [src, warp], src.shape, None), [src, warp],
                ref_resampler(src, warp)))
    return out


@pytest.mark.parametrize("case", _fp16_cases(), ids=lambda c: c[0])
def test_custom_ops_fp16_storage(case):
    """FP16 storage rounds inputs, matrices and outputs to 11-bit mantissas
    (math stays FP32): within the FP16 tolerance, relative L2 <= 1e-2."""
    _, model, inputs, expected = case
    actual, report = run_delegate(model, inputs, is_precision_loss_allowed=1)
    assert report.cpu_nodes == 0
    assert_close(actual[0], expected, rtol_l2=1e-2, atol=1e-2 * max(1.0, float(np.abs(expected).max())))
