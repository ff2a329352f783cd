"""Single OpenCL kernels, built from opencl_kernels/*.cl with pyopencl the way
the library builds them (common.cl prepended, cl_source.device_options, and
-DFP16_STORAGE=1 for half storage), run on seeded random data of odd sizes
and compared with numpy. The model-level tests cover the same kernels
through the delegate; these pin each kernel's own contract (layout, tiles,
tails) and catch build warnings, which PoCL would print into every user's
stderr.

FP32 tolerance 1e-4 relative to the output's magnitude (float sums in a
different order); FP16 storage rounds every stored value to half (relative
spacing 2^-11) and the input too, so 4e-3.
"""
from __future__ import annotations

import os
import warnings

import numpy as np
import pytest

os.environ.setdefault("PYOPENCL_NO_CACHE", "1")
cl = pytest.importorskip("pyopencl")
# PoCL's kernel cache returns a cached build's log, and its key ignores
# comments; a define unique to this run makes the checked logs fresh.
NONCE = f" -DTFLITE_GPU_TEST_NONCE={os.getpid()}{int.from_bytes(os.urandom(4), 'little')}"

from cl_source import KERNELS, device_options, program_source
from cl_source import bhwc as _bhwc, buffer as _buf, phwc4 as _phwc4, shape4 as _shape

FILES = sorted(p.name for p in KERNELS.glob("*.cl") if p.name != "common.cl")


@pytest.fixture(scope="module")
def ctx():
    try:
        c = cl.create_some_context(interactive=False)
    except cl.Error as e:  # no OpenCL platform: the whole suite needs one anyway
        pytest.fail(f"no OpenCL device: {e}")
    return c, cl.CommandQueue(c)


_programs = {}


def _build(context, name, fp16=False):
    key = (name, fp16)
    if key not in _programs:
        src = program_source(name)
        opts = device_options(context, fp16) + NONCE
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the log is checked below, not as a Python warning
            prog = cl.Program(context, src).build(options=opts)
        _programs[key] = prog
    return _programs[key]


def _run(c, q, kernel, items, local, *args):
    gl = (items + local - 1) // local * local
    kernel(q, (gl,), (local,), *args)
    q.finish()


def _close(got, want, fp16):
    tol = (4e-3 if fp16 else 1e-4) * max(1.0, float(np.abs(want).max()))
    np.testing.assert_allclose(got, want, rtol=0, atol=tol)


@pytest.mark.parametrize("fp16", [False, True], ids=["fp32", "fp16"])
@pytest.mark.parametrize("name", FILES)
def test_kernel_file_builds_without_warnings(ctx, name, fp16):
    c, _ = ctx
    prog = _build(c, name, fp16)
    log = prog.get_build_info(c.devices[0], cl.program_build_info.LOG)
    assert "warning" not in log and "error" not in log, log
    assert prog.all_kernels(), f"{name} defines no kernels"


def _blocked_weights(wt, block):
    """[Cout][Cin] -> [G][S_in][4 in][block*4 out] (ops_conv.c's layout for 1x1)."""
    cout, cin = wt.shape
    si, bw = (cin + 3) // 4, block * 4
    g = (cout + bw - 1) // bw
    w = np.zeros((g, si * 4, bw), np.float32)
    for o in range(cout):
        w[o // bw, :cin, o % bw] = wt[o]
    return w


@pytest.mark.parametrize("fp16", [False, True], ids=["fp32", "fp16"])
@pytest.mark.parametrize("kernel,block,b,h,w,cin,cout", [
    ("conv2d_1x1", 4, 1, 5, 7, 17, 20),     # 35 pixels: a partial 6-pixel tile; a partial 16-channel block
    ("conv2d_1x1", 4, 2, 3, 5, 3, 33),      # batch 2, three blocks
    ("conv2d_1x1_b8", 2, 1, 7, 9, 5, 7),    # 8-channel blocks, a channel tail
    ("conv2d_1x1_b8", 2, 2, 1, 13, 40, 8),
])
def test_conv2d_1x1_matches_numpy(ctx, kernel, block, b, h, w, cin, cout, fp16):
    c, q = ctx
    rng = np.random.default_rng(cin * 100 + cout)
    x = rng.standard_normal((b, h, w, cin)).astype(np.float32)
    wt = rng.standard_normal((cout, cin)).astype(np.float32)
    bias = rng.standard_normal(cout).astype(np.float32)
    st = np.float16 if fp16 else np.float32
    xs = x.astype(st)
    bw = block * 4
    g = (cout + bw - 1) // bw
    bpad = np.zeros(g * bw, np.float32)
    bpad[:cout] = bias
    so = (cout + 3) // 4
    out = np.zeros((b, so, h, w, 4), st)
    bout = _buf(c, out)
    tiles = (h * w + 5) // 6
    total = tiles * g * b
    k = cl.Kernel(_build(c, "conv.cl", fp16), kernel)
    dummy = _buf(c, np.zeros(4, np.float32))
    _run(c, q, k, total, 16, _buf(c, _phwc4(xs)), bout, _buf(c, _blocked_weights(wt, block)), _buf(c, bpad),
         _shape(b, h, w, cin), _shape(b, h, w, cout), np.int32(1), dummy, dummy, np.zeros(4, np.int32),
         np.int32(so), np.int32(total))
    cl.enqueue_copy(q, out, bout)
    want = np.maximum(xs.astype(np.float32) @ wt.T + bias, 0)  # act 1 = RELU
    _close(_bhwc(out, cout).astype(np.float32), want, fp16)
    assert not np.any(out.reshape(b, so, h, w, 4)[:, -1, ..., cout - 4 * (so - 1):]), "tail lanes not zero"


def _depthwise_params(wt, bias):
    """A depthwise's [KH, KW, C] weights and [C] bias as depthwise.cl takes
    them: [S][KH * KW] float4s over the output channels, [S] float4s."""
    k2, c = wt.shape[0] * wt.shape[1], wt.shape[2]
    wp = np.zeros(((c + 3) // 4, k2, 4), np.float32)
    for ch in range(c):
        wp[ch // 4, :, ch % 4] = wt[:, :, ch].reshape(-1)
    bp = np.zeros(((c + 3) // 4, 4), np.float32)
    bp.reshape(-1)[:c] = bias
    return wp, bp


@pytest.mark.parametrize("fp16", [False, True], ids=["fp32", "fp16"])
@pytest.mark.parametrize("k,s,h,w,c,pad", [
    (3, 1, 6, 37, 9, 1),   # interior tiles and both edges, a partial 16-pixel tile
    (5, 1, 5, 45, 5, 2),
    (1, 1, 3, 17, 3, 0),
    (3, 2, 7, 41, 6, 1),
    (5, 2, 9, 38, 17, 2),
])
def test_depthwise_tiled_matches_numpy(ctx, k, s, h, w, c, pad, fp16):
    ctx_, q = ctx
    rng = np.random.default_rng(k * 10 + s + c)
    st = np.float16 if fp16 else np.float32
    x = rng.standard_normal((2, h, w, c)).astype(st)
    wt = rng.standard_normal((k, k, c)).astype(np.float32)
    bias = rng.standard_normal(c).astype(np.float32)
    oh, ow = (h + 2 * pad - k) // s + 1, (w + 2 * pad - k) // s + 1
    sl = (c + 3) // 4
    wp, bp = _depthwise_params(wt, bias)
    out = np.zeros((2, sl, oh, ow, 4), st)
    bout = _buf(ctx_, out)
    total = (ow + 15) // 16 * oh * sl * 2
    kern = cl.Kernel(_build(ctx_, "depthwise.cl", fp16), f"depthwise_{k}x{k}_s{s}")
    dummy = _buf(ctx_, np.zeros(4, np.float32))
    _run(ctx_, q, kern, total, 16, _buf(ctx_, _phwc4(x)), bout, _buf(ctx_, wp), _buf(ctx_, bp),
         _shape(2, h, w, c), _shape(2, oh, ow, c), np.array([pad, pad], np.int32), np.int32(0), dummy, dummy,
         np.zeros(4, np.int32), np.int32(sl), np.int32(total))
    cl.enqueue_copy(q, out, bout)
    xp = np.pad(x.astype(np.float32), ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    want = np.broadcast_to(bias, (2, oh, ow, c)).copy()
    for ky in range(k):
        for kx in range(k):
            want += xp[:, ky:ky + s * (oh - 1) + 1:s, kx:kx + s * (ow - 1) + 1:s, :] * wt[ky, kx]
    _close(_bhwc(out, c).astype(np.float32), want, fp16)


@pytest.mark.parametrize("fp16", [False, True], ids=["fp32", "fp16"])
@pytest.mark.parametrize("m,k,s,d,h,w,c,pad", [
    (1, 3, 1, 1, 6, 7, 5, 1),    # multiplier 1: one float4 load per tap; a 1-channel tail slice
    (1, 5, 2, 1, 9, 11, 17, 2),
    (1, 3, 1, 2, 7, 5, 3, 2),    # dilation
    (2, 3, 2, 1, 7, 9, 3, 1),    # 6 outputs from 3 inputs: scalar loads
    (3, 1, 1, 1, 3, 5, 1, 0),
])
def test_depthwise_multiplier_matches_numpy(ctx, m, k, s, d, h, w, c, pad, fp16):
    """depthwise_conv2d_multiplier (the VM's depthwise on a GPU, and any
    multiplier elsewhere): output channel o reads input channel o // m; a
    float4 per work-item; tail lanes zero."""
    ctx_, q = ctx
    rng = np.random.default_rng(100 * m + 10 * k + c)
    st = np.float16 if fp16 else np.float32
    co = c * m
    x = rng.standard_normal((2, h, w, c)).astype(st)
    wt = rng.standard_normal((k, k, co)).astype(np.float32)
    bias = rng.standard_normal(co).astype(np.float32)
    span = d * (k - 1) + 1
    oh, ow = (h + 2 * pad - span) // s + 1, (w + 2 * pad - span) // s + 1
    so = (co + 3) // 4
    wp, bp = _depthwise_params(wt, bias)
    out = np.full((2, so, oh, ow, 4), 7, st)  # tail lanes must be overwritten with zeros
    bout = _buf(ctx_, out)
    total = 2 * so * oh * ow
    kern = cl.Kernel(_build(ctx_, "depthwise.cl", fp16), "depthwise_conv2d_multiplier")
    dummy = _buf(ctx_, np.zeros(4, np.float32))
    _run(ctx_, q, kern, total, 16, _buf(ctx_, _phwc4(x)), bout, _buf(ctx_, wp), _buf(ctx_, bp),
         _shape(2, h, w, c), _shape(2, oh, ow, co), np.array([k, k, s, s], np.int32),
         np.array([pad, pad, d, d], np.int32), np.int32(0), dummy, dummy, np.zeros(4, np.int32), np.int32(so),
         np.int32(m), np.int32(total))
    cl.enqueue_copy(q, out, bout)
    xp = np.pad(np.repeat(x.astype(np.float32), m, axis=3), ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    want = np.broadcast_to(bias, (2, oh, ow, co)).copy()
    for ky in range(k):
        for kx in range(k):
            y0, x0 = ky * d, kx * d
            want += xp[:, y0:y0 + s * (oh - 1) + 1:s, x0:x0 + s * (ow - 1) + 1:s, :] * wt[ky, kx]
    _close(_bhwc(out, co).astype(np.float32), want, fp16)
    assert not np.any(out.reshape(2, so, oh, ow, 4)[:, -1, ..., co - 4 * (so - 1):]), "tail lanes not zero"


def _resize_ref(x, oh, ow):
    """TFLite's bilinear resize with half-pixel centers (resize.cl's comment)."""
    b, h, w, c = x.shape

    def coords(o, size, osize):
        v = (np.arange(o) + 0.5) * (size / osize) - 0.5
        lo = np.clip(np.floor(v), 0, size - 1).astype(int)
        hi = np.minimum(np.ceil(v), size - 1).astype(int)
        return lo, hi, (v - lo).astype(np.float32)

    y0, y1, dy = coords(oh, h, oh)
    x0, x1, dx = coords(ow, w, ow)
    dy, dx = dy[None, :, None, None], dx[None, None, :, None]
    g = lambda ys, xs: x[:, ys][:, :, xs]
    return (g(y0, x0) * (1 - dy) * (1 - dx) + g(y1, x0) * dy * (1 - dx) + g(y0, x1) * (1 - dy) * dx
            + g(y1, x1) * dy * dx)


@pytest.mark.parametrize("h,w,c,oh,ow", [(5, 7, 3, 11, 13), (8, 6, 17, 16, 12), (9, 9, 5, 4, 5)])
def test_resize_bilinear_matches_numpy(ctx, h, w, c, oh, ow):
    ctx_, q = ctx
    x = np.random.default_rng(h * w + c).standard_normal((2, h, w, c)).astype(np.float32)
    sl = (c + 3) // 4
    out = np.zeros((2, sl, oh, ow, 4), np.float32)
    bout = _buf(ctx_, out)
    total = (ow + 7) // 8 * oh * sl * 2
    kern = cl.Kernel(_build(ctx_, "resize.cl"), "resize_bilinear")
    _run(ctx_, q, kern, total, 64, _buf(ctx_, _phwc4(x)), bout, _shape(2, h, w, c), _shape(2, oh, ow, c),
         np.float32(w / ow), np.float32(h / oh), np.int32(1), np.int32(total))
    cl.enqueue_copy(q, out, bout)
    _close(_bhwc(out, c), _resize_ref(x, oh, ow), False)


@pytest.mark.parametrize("b,h,w,c", [(1, 3, 13, 3), (2, 2, 9, 5), (1, 4, 8, 17), (1, 1, 1, 1)])
def test_boundary_conversions_round_trip(ctx, b, h, w, c):
    ctx_, q = ctx
    x = np.random.default_rng(c).standard_normal((b, h, w, c)).astype(np.float32)
    sl = (c + 3) // 4
    prog = _build(ctx_, "layout.cl")
    phwc4 = np.full((b, sl, h, w, 4), 7.0, np.float32)  # garbage: the tail lanes must be written as zero
    bp = _buf(ctx_, phwc4)
    total = (w + 7) // 8 * h * sl * b
    _run(ctx_, q, cl.Kernel(prog, "bhwc_to_phwc4"), total, 64, _buf(ctx_, x), bp, _shape(b, h, w, c),
         np.int32(total))
    cl.enqueue_copy(q, phwc4, bp)
    np.testing.assert_array_equal(phwc4, _phwc4(x))
    back = np.zeros_like(x)
    bb = _buf(ctx_, back)
    _run(ctx_, q, cl.Kernel(prog, "phwc4_to_bhwc"), total, 64, bp, bb, _shape(b, h, w, c), np.int32(0),
         np.int32(total))
    cl.enqueue_copy(q, back, bb)
    np.testing.assert_array_equal(back, x)



@pytest.mark.parametrize("offset", [0, 1, 6])
def test_phwc4_to_bhwc_at_offset(ctx, offset):
    """phwc4_to_bhwc writes the BHWC elements from dst_offset on (an
    output assembled from parts, executor.c) and nothing outside them."""
    ctx_, q = ctx
    b, h, w, c = 1, 3, 5, 3
    x = np.random.default_rng(offset + 11).standard_normal((b, h, w, c)).astype(np.float32)
    sl = (c + 3) // 4
    prog = _build(ctx_, "layout.cl")
    out = np.full(x.size + 10, 7.0, np.float32)
    bo = _buf(ctx_, out)
    total = (w + 7) // 8 * h * sl * b
    _run(ctx_, q, cl.Kernel(prog, "phwc4_to_bhwc"), total, 64, _buf(ctx_, _phwc4(x)), bo, _shape(b, h, w, c),
         np.int32(offset), np.int32(total))
    cl.enqueue_copy(q, out, bo)
    want = np.full_like(out, 7.0)
    want[offset:offset + x.size] = x.ravel()
    np.testing.assert_array_equal(out, want)

@pytest.mark.parametrize("per_channel", [False, True])
def test_binary_op_rows_matches_numpy(ctx, per_channel):
    ctx_, q = ctx
    rng = np.random.default_rng(3)
    b, h, w, c = 2, 5, 7, 6
    a = rng.standard_normal((b, h, w, c)).astype(np.float32)
    other = rng.standard_normal((1, 1, 1, c) if per_channel else (b, h, w, c)).astype(np.float32)
    sl = (c + 3) // 4
    out = np.zeros((b, sl, h, w, 4), np.float32)
    bout = _buf(ctx_, out)
    total = (h * w + 7) // 8 * sl * b
    kern = cl.Kernel(_build(ctx_, "elementwise.cl"), "binary_op_rows")
    # op 6 = PRELU (kernel_abi.h BIN_PRELU), act 3 = RELU6
    _run(ctx_, q, kern, total, 64, _buf(ctx_, _phwc4(a)), _buf(ctx_, _phwc4(other)), bout, _shape(b, h, w, c),
         np.int32(per_channel), np.int32(6), np.int32(3), np.int32(total))
    cl.enqueue_copy(q, out, bout)
    want = np.clip(np.where(a >= 0, a, a * other), 0, 6)
    _close(_bhwc(out, c), want, False)
