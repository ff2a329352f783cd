"""The work-group-reduction kernels of opencl_kernels/fc_gpu.cl and
reduce_gpu.cl (fully_connected_gpu, batch_matmul_gpu, reduce_gpu,
softmax_gpu), built with pyopencl as the library builds programs (common.cl
prepended, cl_source.device_options (-DFP16_STORAGE=1 for half storage), -DWG=n) and
run on seeded random data of odd sizes against numpy references and
against their CPU siblings in fully_connected.cl / reduce.cl, called with
the very same argument list.

Every launch is sized by launch_size(), the launch contract written at the
top of both .cl files; the C kernel selector transcribes it.

FP32 tolerance 1e-4 relative to the output's magnitude (float sums in
another order); FP16 storage rounds the stored input and output to half
(relative spacing 2^-11), so 4e-3. Outputs start as NaN, so every output
float4 must be written, and padded lanes must be written as zero.

TFLITE_GPU_CL_SMALL=1 keeps a few small cases, for slow emulators. Under
Oclgrind (real work-groups, barriers and __local memory, with race,
uninitialized-value and bounds checks), with a directory holding one file
oclgrind.icd that names /usr/lib/oclgrind/liboclgrind-rt-icd.so:
    OCL_ICD_VENDORS=<dir> OCLGRIND_DATA_RACES=1 OCLGRIND_UNINITIALIZED=1
    OCLGRIND_CHECK_API=1 OCLGRIND_BUILD_OPTIONS=-cl-opt-disable TFLITE_GPU_CL_SMALL=1 \
    python -m pytest tests/test_cl_reduce_gpu.py
(-cl-opt-disable: Oclgrind 21.10's uninitialized-value check stops at the
`freeze` instruction that LLVM's optimizer emits for a / and % pair.)
Oclgrind prints what it finds to stderr; every test here fails on it.
"""
from __future__ import annotations

import os
import re
import sys
import warnings

import numpy as np
import pytest

os.environ.setdefault("PYOPENCL_NO_CACHE", "1")
cl = pytest.importorskip("pyopencl")
# PoCL's kernel cache returns a cached build's log; a define unique to this
# run makes the checked logs fresh.
NONCE = f" -DTFLITE_GPU_TEST_NONCE={os.getpid()}{int.from_bytes(os.urandom(4), 'little')}"
from cl_source import KERNELS, device_options, program_source  # noqa: E402
from cl_source import bhwc as _bhwc, buffer as _buf, phwc4 as _phwc4, shape4 as _shape  # noqa: E402
SMALL = os.environ.get("TFLITE_GPU_CL_SMALL") == "1"

R_MEAN, R_SUM, R_MAX, R_MIN, R_PROD = range(5)
FP = [pytest.param(False, id="fp32"), pytest.param(True, id="fp16")]
# The cases below use WG 1, 8, 64 and 256 only: each (file, storage, WG)
# is one more build, ~1 s on PoCL.


def launch_size(kernel, wg, shape):
    """(global, local) of one launch: the contract in fc_gpu.cl / reduce_gpu.cl.

    shape is the int4 (W, H, C, B) of the output (fully_connected_gpu,
    batch_matmul_gpu, reduce_gpu) or of the tensor (softmax_gpu). One
    work-group of WG work-items per output float4, or per pixel for softmax.
    """
    w, h, c, b = (int(v) for v in shape)
    if kernel == "softmax_gpu":
        groups = b * h * w
    elif kernel in ("fully_connected_gpu", "batch_matmul_gpu", "reduce_gpu"):
        groups = b * ((c + 3) // 4) * h * w
    else:
        raise ValueError(kernel)
    return (wg * groups,), (wg,)


@pytest.fixture(scope="module")
def ctx():
    try:
        c = cl.create_some_context(interactive=False)
    except cl.Error as e:
        pytest.fail(f"no OpenCL device: {e}")
    return c, cl.CommandQueue(c)


# pyopencl probes device info that Oclgrind does not know (on every
# build and kernel creation): that API complaint is not the kernels'.
_OCLGRIND_PROBE = re.compile(r"Oclgrind - OpenCL runtime error detected\n\tFunction: clGetDeviceInfo\n"
                             r"\tError: +CL_INVALID_VALUE\n\tFor argument 'param_name'\n")


@pytest.fixture(autouse=True)
def no_oclgrind_reports(capfd):
    """Fails a test during which Oclgrind reported anything else."""
    yield
    err = capfd.readouterr().err
    sys.stderr.write(err)  # keep it in the test's report
    rest = _OCLGRIND_PROBE.sub("", err)
    assert not re.search(r"Oclgrind|\tKernel: ", rest), "Oclgrind reported errors:\n" + rest[:4000]


_programs = {}


def _build(context, name, fp16, wg=None):
    """Program common.cl + name; its build log must be free of warnings."""
    key = (name, fp16, wg)
    if key not in _programs:
        src = program_source(name)
        opts = device_options(context, fp16) + (f" -DWG={wg}" if wg else "") + NONCE
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the log is checked below
            prog = cl.Program(context, src).build(options=opts)
        log = prog.get_build_info(context.devices[0], cl.program_build_info.LOG)
        assert "warning" not in log.lower() and "error" not in log.lower(), log
        _programs[key] = prog
    return _programs[key]


def _items(shape):
    w, h, c, b = (int(v) for v in shape)
    return b * ((c + 3) // 4) * h * w


def _stored(x, fp16):
    return x.astype(np.float16 if fp16 else np.float32)


def _check(out, want, fp16):
    """out: PHWC4 result; want: float64 BHWC reference."""
    c = want.shape[-1]
    s = out.shape[1]
    assert not np.any(np.isnan(out)), "an output float4 was not written"
    tail = out[:, -1, ..., c - 4 * (s - 1):]
    assert not np.any(tail), "padded lanes not zero"
    tol = (4e-3 if fp16 else 1e-4) * max(1.0, float(np.abs(want).max()))
    np.testing.assert_allclose(_bhwc(out, c).astype(np.float64), want, rtol=0, atol=tol)


def _run_pair(c, q, fp16, file_gpu, kernel, wg, shape, out_shape, args_fn, cpu_file, cpu_kernel, total, extra=0):
    """Runs kernel with launch_size(kernel, wg, shape) (plus `extra` surplus
    work-groups) and its CPU sibling with the same arguments; returns both
    outputs (PHWC4, storage dtype, NaN where unwritten)."""
    st = np.float16 if fp16 else np.float32
    results = []
    for prog, name, sizes in (
        (_build(c, file_gpu, fp16, wg), kernel, launch_size(kernel, wg, shape)),
        # The siblings' own launch: one item per output, rounded up to a fixed
        # local size (they return past `total`), so PoCL compiles them once.
        (_build(c, cpu_file, fp16), cpu_kernel, (((total + 7) // 8 * 8,), (8,))),
    ):
        out = np.full(out_shape, np.nan, st)
        # A guard float4 block past the end catches stores from surplus groups.
        host = np.concatenate([out.reshape(-1), np.full(4 * max(extra, 1), 1234.0, st)])
        bout = _buf(c, host)
        gl, lo = sizes
        if extra and name == kernel:
            gl = (gl[0] + extra * lo[0],)
        cl.Kernel(prog, name)(q, gl, lo, *args_fn(bout))
        q.finish()
        cl.enqueue_copy(q, host, bout)
        assert np.all(host[out.size:] == 1234.0), f"{name} stored past its output"
        results.append(host[: out.size].reshape(out_shape))
    return results


# ---------------------------------------------------------------- FULLY_CONNECTED

def _fc_weights(wt):
    """[O][K] -> [S_out][S_in * 4 in][4 out] (upload_dense_weights for 1x1)."""
    o, k = wt.shape
    so, si = (o + 3) // 4, (k + 3) // 4
    w = np.zeros((so, si * 4, 4), np.float32)
    for n in range(o):
        w[n // 4, :k, n % 4] = wt[n]
    return w


def _activation(x, act):
    return {0: x, 1: np.maximum(x, 0), 2: np.clip(x, -1, 1), 3: np.clip(x, 0, 6)}[act]


# (src BHWC, dst BHW, K, O, act, WG, small): dst B*H*W rows = src B*H*W rows.
FC_CASES = [
    ((1, 1, 1, 1), (1, 1, 1), 1, 3, 0, 64, True),          # K = 1: one slice, WG - 1 idle items
    ((2, 1, 3, 5), (2, 1, 3), 5, 17, 1, 8, True),          # batch 2, RELU, output tail
    ((1, 1, 7, 17), (1, 1, 7), 17, 1, 3, 1, False),        # WG 1: no tree at all; RELU6, O = 1
    ((1, 1, 5, 1000), (1, 1, 5), 1000, 10, 0, 64, False),  # 250 slices: 4 strides of 64
    ((2, 1, 3, 1283), (2, 1, 3), 1283, 33, 1, 256, False),  # 321 slices over 256 items
    ((1, 1, 1, 1283), (1, 1, 1), 1283, 5, 2, 64, True),    # RELU_N1_TO_1, 6 strides
    ((2, 3, 5, 40), (1, 1, 30), 40, 7, 0, 8, True),        # rows map across different B/H/W
]


@pytest.mark.parametrize("fp16", FP)
@pytest.mark.parametrize("src_bhwc,dst_bhw,k,o,act,wg,small", [c for c in FC_CASES if c[-1] or not SMALL])
def test_fully_connected_gpu(ctx, src_bhwc, dst_bhw, k, o, act, wg, small, fp16):
    c, q = ctx
    rng = np.random.default_rng(k * 1000 + o)
    x = _stored(rng.standard_normal(src_bhwc), fp16)
    wt = (rng.standard_normal((o, k)) / np.sqrt(k)).astype(np.float32)
    bias = rng.standard_normal(o).astype(np.float32)
    so = (o + 3) // 4
    bpad = np.zeros(so * 4, np.float32)
    bpad[:o] = bias
    ss, ds = _shape(*src_bhwc), _shape(*dst_bhw, o)
    total = _items(ds)
    bx, bw, bb = _buf(c, _phwc4(x)), _buf(c, _fc_weights(wt)), _buf(c, bpad)

    def args(bout):
        return bx, bout, bw, bb, ss, ds, np.int32(act), np.int32(total)

    gpu, cpu = _run_pair(c, q, fp16, "fc_gpu.cl", "fully_connected_gpu", wg, ds, (dst_bhw[0], so, *dst_bhw[1:], 4),
                         args, "fully_connected.cl", "fully_connected", total)
    rows = x.astype(np.float64).reshape(-1, k)
    want = _activation(rows @ wt.T.astype(np.float64) + bias, act).reshape(*dst_bhw, o)
    _check(gpu, want, fp16)
    _check(cpu, want, fp16)


# ---------------------------------------------------------------- BATCH_MATMUL

# (A batch (B, H), B batch (B, H), M, K, N, WG, small)
BMM_CASES = [
    ((2, 3), (2, 3), 5, 7, 3, 64, True),       # K < 4 * WG: most items idle
    ((2, 1), (1, 3), 3, 17, 5, 1, True),       # broadcast both ways; WG 1: 5 strides
    ((1, 1), (1, 1), 1, 1, 1, 8, True),        # 1 x 1 x 1
    ((1, 3), (2, 1), 2, 1000, 1, 256, False),  # N = 1, 1000 deep
    ((2, 1), (2, 1), 3, 1283, 6, 64, False),   # 1283 deep: 6 strides of 256 k's
]


@pytest.mark.parametrize("fp16", FP)
@pytest.mark.parametrize("adj_x,adj_y", [(0, 0), (0, 1), (1, 0), (1, 1)])
@pytest.mark.parametrize("ab,bb,m,k,n,wg,small", [c for c in BMM_CASES if c[-1] or not SMALL])
def test_batch_matmul_gpu(ctx, ab, bb, m, k, n, wg, small, adj_x, adj_y, fp16):
    c, q = ctx
    rng = np.random.default_rng(m * 10000 + k * 10 + n)
    a = rng.standard_normal((*ab, m, k)) / np.sqrt(k)
    b = rng.standard_normal((*bb, k, n))
    a_st = _stored(a.swapaxes(-1, -2) if adj_x else a, fp16)  # stored [K, M] under adj_x
    b_st = _stored(b.swapaxes(-1, -2) if adj_y else b, fp16)
    ob = tuple(max(u, v) for u, v in zip(ab, bb))
    a_shape, b_shape, d_shape = _shape(*a_st.shape), _shape(*b_st.shape), _shape(*ob, m, n)
    total = _items(d_shape)
    ba, bbuf = _buf(c, _phwc4(a_st)), _buf(c, _phwc4(b_st))
    adj = np.array([adj_x, adj_y], np.int32)

    def args(bout):
        return ba, bbuf, bout, a_shape, b_shape, d_shape, adj, np.int32(total)

    gpu, cpu = _run_pair(c, q, fp16, "fc_gpu.cl", "batch_matmul_gpu", wg, d_shape, (ob[0], (n + 3) // 4, ob[1], m, 4),
                         args, "fully_connected.cl", "batch_matmul", total)
    a64 = a_st.astype(np.float64)
    b64 = b_st.astype(np.float64)
    want = np.matmul(a64.swapaxes(-1, -2) if adj_x else a64, b64.swapaxes(-1, -2) if adj_y else b64)
    _check(gpu, want, fp16)
    _check(cpu, want, fp16)


# ---------------------------------------------------------------- REDUCE

# BHWC axes of numpy for (x, y, c, b) flags.
AXES = {"W": (1, 0, 0, 0), "H": (0, 1, 0, 0), "C": (0, 0, 1, 0), "B": (0, 0, 0, 1), "HW": (1, 1, 0, 0),
        "all": (1, 1, 1, 1)}
# (BHWC, WG, small)
REDUCE_SHAPES = [
    ((2, 3, 5, 17), 8, True),    # 5 slices, channel tail; HW and 'all' windows cross 8
    ((2, 3, 6, 1), 1, True),     # C = 1, WG 1
    ((2, 5, 7, 3), 64, False),
    ((2, 13, 37, 5), 256, False),  # HW window of 481 float4s, 'all' 4810 values
]
OPS = {"MEAN": R_MEAN, "SUM": R_SUM, "MAX": R_MAX, "MIN": R_MIN, "PROD": R_PROD}


def _reduce_ref(x, flags, op):
    axes = tuple(ax for ax, f in zip((2, 1, 3, 0), flags) if f)
    fn = {R_MEAN: np.mean, R_SUM: np.sum, R_MAX: np.max, R_MIN: np.min, R_PROD: np.prod}[op]
    return fn(x.astype(np.float64), axis=axes, keepdims=True)


@pytest.mark.parametrize("fp16", FP)
@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("axes", list(AXES))
@pytest.mark.parametrize("shape,wg,small", [c for c in REDUCE_SHAPES if c[-1] or not SMALL])
def test_reduce_gpu(ctx, shape, wg, small, axes, op, fp16):
    c, q = ctx
    code, flags = OPS[op], AXES[axes]
    rng = np.random.default_rng(sum(shape) * 100 + code * 10 + sum(f << i for i, f in enumerate(flags)))
    x = rng.standard_normal(shape)
    if code == R_PROD:
        x = 1.0 + 0.02 * x  # near 1: products of thousands stay finite
    x = _stored(x, fp16)
    _check_reduce(c, q, x, flags, code, ACT_NONE, wg, fp16, _reduce_ref(x, flags, code))


def _check_reduce(c, q, x, flags, code, act, wg, fp16, want, addend=None):
    """reduce_gpu (groups of wg) and reduce over x (x + addend: summed)
    against want."""
    ob, oh, ow, oc = want.shape
    ss, ds = _shape(*x.shape), _shape(ob, oh, ow, oc)
    total = _items(ds)
    bx = _buf(c, _phwc4(x))
    by = bx if addend is None else _buf(c, _phwc4(addend))

    def args(bout):
        return (bx, by, bout, ss, ds, np.array(flags, np.int32), np.int32(code), np.int32(act),
                np.int32(addend is not None), np.int32(total))

    gpu, cpu = _run_pair(c, q, fp16, "reduce_gpu.cl", "reduce_gpu", wg, ds, (ob, (oc + 3) // 4, oh, ow, 4), args,
                         "reduce.cl", "reduce", total)
    _check(gpu, want, fp16)
    _check(cpu, want, fp16)


@pytest.mark.parametrize("fp16", FP)
@pytest.mark.parametrize("op", ["MEAN", "MAX"])
@pytest.mark.parametrize("axes", ["HW", "C"])
def test_reduce_of_a_sum(ctx, axes, op, fp16):
    """summed: the window of src + addend (an ADD read only by the
    reduction, fuse_summed_reduce.c); the sum in float, from the stored
    operands."""
    c, q = ctx
    code, flags = OPS[op], AXES[axes]
    shape = (2, 9, 7, 17)  # HW: 63 float4s per window; C: 5 slices with a tail
    rng = np.random.default_rng(73 + code)
    x, y = (_stored(rng.standard_normal(shape), fp16) for _ in range(2))
    want = _reduce_ref(x.astype(np.float64) + y.astype(np.float64), flags, code)
    _check_reduce(c, q, x, flags, code, ACT_NONE, 16, fp16, want, addend=y)


# The fused activation (ACT_* of kernel_abi.h) a global pool lowered to a
# reduce node brings (ops_pool.c); applied after the fold and the MEAN's
# division, before the padded lanes are zeroed.
ACT_NONE, ACT_RELU, ACT_RELU_N1_TO_1, ACT_RELU6 = 0, 1, 2, 3
_ACT_REF = {ACT_RELU: lambda v: np.maximum(v, 0.0), ACT_RELU_N1_TO_1: lambda v: np.clip(v, -1.0, 1.0),
            ACT_RELU6: lambda v: np.clip(v, 0.0, 6.0)}


@pytest.mark.parametrize("fp16", FP)
@pytest.mark.parametrize("act", [ACT_RELU, ACT_RELU_N1_TO_1, ACT_RELU6], ids=["relu", "relu_n1_to_1", "relu6"])
@pytest.mark.parametrize("op", ["MEAN", "MAX"])
@pytest.mark.parametrize("axes", ["HW", "C"])
def test_reduce_activation(ctx, axes, op, act, fp16):
    c, q = ctx
    code, flags = OPS[op], AXES[axes]
    shape = (2, 5, 7, 17)  # HW: 35 float4s per window; C: 5 slices with a tail
    rng = np.random.default_rng(41 + act)
    # Per-channel offsets spread the results below -1, between, and above 6.
    x = _stored(rng.uniform(-10.0, 10.0, shape[-1]) + 2.0 * rng.standard_normal(shape), fp16)
    _check_reduce(c, q, x, flags, code, act, 8, fp16, _ACT_REF[act](_reduce_ref(x, flags, code)))


# ---------------------------------------------------------------- SOFTMAX

# (C, WG, small): pixels 2 x 3 x 5 = 30.
SOFTMAX_CASES = [(1, 64, True), (3, 8, False), (5, 1, True), (17, 8, True), (1000, 64, False), (1283, 256, False)]


@pytest.mark.parametrize("fp16", FP)
@pytest.mark.parametrize("scale", [1.0, 1000.0], ids=["unit", "large"])
@pytest.mark.parametrize("log_mode", [0, 1], ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("beta", [1.0, 0.6])
@pytest.mark.parametrize("ch,wg,small", [c for c in SOFTMAX_CASES if c[-1] or not SMALL])
def test_softmax_gpu(ctx, ch, wg, small, beta, log_mode, scale, fp16):
    c, q = ctx
    b, h, w = 2, 3, 5
    rng = np.random.default_rng(ch * 7 + int(scale))
    x = _stored(scale * rng.standard_normal((b, h, w, ch)), fp16)
    z = beta * x.astype(np.float64)
    z = z - z.max(axis=-1, keepdims=True)
    log_sum = np.log(np.exp(z).sum(axis=-1, keepdims=True))
    want = z - log_sum if log_mode else np.exp(z - log_sum)
    shape = _shape(b, h, w, ch)
    total = b * h * w
    bx = _buf(c, _phwc4(x))

    def args(bout):
        return bx, bout, shape, np.float32(beta), np.int32(log_mode), np.int32(total)

    gpu, cpu = _run_pair(c, q, fp16, "reduce_gpu.cl", "softmax_gpu", wg, shape, (b, (ch + 3) // 4, h, w, 4), args,
                         "reduce.cl", "softmax", total)
    _check(gpu, want, fp16)
    _check(cpu, want, fp16)


# ---------------------------------------------------------------- contract edges

def test_surplus_work_groups_store_nothing(ctx):
    """A global size rounded up past the contract's stores nothing extra."""
    c, q = ctx
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 1, 3, 9)).astype(np.float32)
    bx = _buf(c, _phwc4(x))
    ss = _shape(2, 1, 3, 9)
    # reduce over W: output (2, 1, 1, 9), 6 float4s, + 3 surplus groups
    ds = _shape(2, 1, 1, 9)
    gpu, _ = _run_pair(c, q, False, "reduce_gpu.cl", "reduce_gpu", 8, ds, (2, 3, 1, 1, 4),
                       lambda bout: (bx, bx, bout, ss, ds, np.array([1, 0, 0, 0], np.int32), np.int32(R_SUM),
                                     np.int32(0), np.int32(0), np.int32(6)), "reduce.cl", "reduce", 6, extra=3)
    _check(gpu, x.astype(np.float64).sum(axis=2, keepdims=True), False)
    gpu, _ = _run_pair(c, q, False, "reduce_gpu.cl", "softmax_gpu", 8, ss, (2, 3, 1, 3, 4),
                       lambda bout: (bx, bout, ss, np.float32(1.0), np.int32(1), np.int32(6)),
                       "reduce.cl", "softmax", 6, extra=3)
    z = x - x.max(axis=-1, keepdims=True)
    _check(gpu, z - np.log(np.exp(z).sum(axis=-1, keepdims=True)), False)
    wt = rng.standard_normal((6, 9)).astype(np.float32)
    bw, bb = _buf(c, _fc_weights(wt)), _buf(c, np.zeros(8, np.float32))
    dfc = _shape(2, 1, 3, 6)
    gpu, _ = _run_pair(c, q, False, "fc_gpu.cl", "fully_connected_gpu", 8, dfc, (2, 2, 1, 3, 4),
                       lambda bout: (bx, bout, bw, bb, ss, dfc, np.int32(0), np.int32(12)),
                       "fully_connected.cl", "fully_connected", 12, extra=3)
    _check(gpu, x.astype(np.float64) @ wt.T.astype(np.float64), False)
    bwt = _buf(c, _phwc4(wt.reshape(1, 1, 6, 9)))  # B = wt, [N, K] under adj_y
    dmm = _shape(2, 1, 3, 6)
    gpu, _ = _run_pair(c, q, False, "fc_gpu.cl", "batch_matmul_gpu", 8, dmm, (2, 2, 1, 3, 4),
                       lambda bout: (bx, bwt, bout, ss, _shape(1, 1, 6, 9), dmm, np.array([0, 1], np.int32),
                                     np.int32(12)), "fully_connected.cl", "batch_matmul", 12, extra=3)
    _check(gpu, x.astype(np.float64) @ wt.T.astype(np.float64), False)


@pytest.mark.parametrize("fp16", FP)
@pytest.mark.parametrize("name", ["fc_gpu.cl", "reduce_gpu.cl"])
def test_default_wg_builds_without_warnings(ctx, name, fp16):
    c, _ = ctx
    assert _build(c, name, fp16).all_kernels()


def test_bad_wg_is_a_build_error(ctx, capfd):
    c, _ = ctx
    src = program_source("fc_gpu.cl")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(cl.RuntimeError, match="WG must be a power of two"):
            cl.Program(c, src).build(options=device_options(c) + " -DWG=48" + NONCE)
    capfd.readouterr()  # the failed build is expected, also where Oclgrind reports it
