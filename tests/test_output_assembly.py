"""Outputs assembled from their parts (executor.c, assemble_outputs): an
output computed only through RESHAPE / SQUEEZE / EXPAND_DIMS and
concatenations whose axis has only size-1 dims before it (the detectors'
heads: CONV_2D -> RESHAPE -> CONCATENATION) is each part converted once
straight into the output's bytes at its offset; the remap and concat_copy
kernels do not run. A concatenation that interleaves its inputs stays on
the old path. Results are the CPU interpreter's either way, and the launch
counts pin the saving (the library before this change launched a remap per
reshape, a concat_copy per concatenated input and one conversion)."""
import numpy as np
import pytest

import tflite_gpu
from conftest import assert_close, run_cpu, test_options
from tflite_gpu import _capi, interpreters
from tflite_gpu.model_builder import ModelBuilder

X1 = [1, 7, 5, 3]  # the finer feature map: sizes not multiples of 4, odd channels
X2 = [1, 3, 3, 5]  # the coarser one


def _conv(mb, rng, x, hw, cin, cout, k):
    """A k x k head convolution (SAME padding) of x, [1, h, w, cout]."""
    wshape = [cout, k, k, cin]
    w = mb.add_tensor(wshape, data=rng.standard_normal(wshape).astype(np.float32))
    b = mb.add_tensor([cout], data=rng.standard_normal([cout]).astype(np.float32))
    y = mb.add_tensor([1, hw[0], hw[1], cout])
    mb.add_op("CONV_2D", [x, w, b], [y], dict(padding="SAME", stride_w=1, stride_h=1, fused_activation="NONE"))
    return y


def _reshape(mb, x, shape):
    s = mb.add_tensor([len(shape)], np.int32, data=np.array(shape, np.int32))
    y = mb.add_tensor(shape)
    mb.add_op("RESHAPE", [x, s], [y], dict(new_shape=list(shape)))
    return y


def _concat(mb, xs, shape, axis):
    y = mb.add_tensor(shape)
    mb.add_op("CONCATENATION", xs, [y], dict(axis=axis, fused_activation="NONE"))
    return y


def _heads(case, c, rng):
    """The model, its inputs, and its launches per invoke (FP32, FP16)."""
    mb = ModelBuilder()
    x1, x2 = mb.add_input(X1), mb.add_input(X2)
    n1, n2 = X1[1] * X1[2], X2[1] * X2[2]
    if case == "two_resolutions":
        # 2 and 3 anchors per pixel, c values each: [1, 97, c]
        a = _reshape(mb, _conv(mb, rng, x1, X1[1:3], 3, 2 * c, 1), [1, 2 * n1, c])
        b = _reshape(mb, _conv(mb, rng, x2, X2[1:3], 5, 3 * c, 3), [1, 3 * n2, c])
        mb.mark_output(_concat(mb, [a, b], [1, 2 * n1 + 3 * n2, c], 1))
        # 2 input conversions, 2 convolutions, 2 parts
        launches = (6, 6)
    elif case == "nested":
        # reshape of a reshape, concat of a concat, then SQUEEZE: [132, c]
        a = _conv(mb, rng, x1, X1[1:3], 3, 2 * c, 1)
        a = _reshape(mb, _reshape(mb, a, [1, n1, 2 * c]), [1, 2 * n1, c])
        b = _reshape(mb, _conv(mb, rng, x2, X2[1:3], 5, 3 * c, 1), [1, 3 * n2, c])
        d = _reshape(mb, _conv(mb, rng, x1, X1[1:3], 3, c, 3), [1, n1, c])
        inner = _concat(mb, [a, b], [1, 2 * n1 + 3 * n2, c], 1)
        outer = _concat(mb, [inner, d], [1, 3 * n1 + 3 * n2, c], -2)
        y = mb.add_tensor([3 * n1 + 3 * n2, c])
        mb.add_op("SQUEEZE", [outer], [y], dict(squeeze_dims=[0]))
        mb.mark_output(y)
        launches = (8, 8)
    elif case == "head_also_output":
        # the first head's convolution output is a second model output
        t = _conv(mb, rng, x1, X1[1:3], 3, 2 * c, 1)
        a = _reshape(mb, t, [1, 2 * n1, c])
        b = _reshape(mb, _conv(mb, rng, x2, X2[1:3], 5, 3 * c, 1), [1, 3 * n2, c])
        mb.mark_output(_concat(mb, [a, b], [1, 2 * n1 + 3 * n2, c], 1))
        mb.mark_output(t)
        # + t's own conversion
        launches = (7, 7)
    elif case == "reshape_also_output":
        # a reshaped head is itself an output: its remap stays, and the
        # concatenation reads it as a part
        a = _reshape(mb, _conv(mb, rng, x1, X1[1:3], 3, 2 * c, 1), [1, 2 * n1, c])
        b = _reshape(mb, _conv(mb, rng, x2, X2[1:3], 5, 3 * c, 1), [1, 3 * n2, c])
        mb.mark_output(_concat(mb, [a, b], [1, 2 * n1 + 3 * n2, c], 1))
        mb.mark_output(a)
        # 2 + 2 convolutions + a's remap + 2 parts + a's own conversion
        launches = (8, 8)
    elif case == "head_read_twice":
        # the head is also read by another node (a RELU, a second output)
        t = _conv(mb, rng, x1, X1[1:3], 3, 2 * c, 1)
        a = _reshape(mb, t, [1, 2 * n1, c])
        b = _reshape(mb, _conv(mb, rng, x2, X2[1:3], 5, 3 * c, 1), [1, 3 * n2, c])
        mb.mark_output(_concat(mb, [a, b], [1, 2 * n1 + 3 * n2, c], 1))
        r = mb.add_tensor([1, X1[1], X1[2], 2 * c])
        mb.add_op("RELU", [t], [r])
        mb.mark_output(r)
        # + the RELU and its output's conversion
        launches = (8, 8)
    elif case == "not_contiguous":
        # concatenation along the last axis interleaves its inputs: the old
        # path (x1's conversion, 2 convolutions, 2 remaps, 2 concat_copy, 1
        # conversion; x2 is not read)
        a = _reshape(mb, _conv(mb, rng, x1, X1[1:3], 3, 2 * c, 1), [1, n1, 2 * c])
        b = _reshape(mb, _conv(mb, rng, x1, X1[1:3], 3, c, 3), [1, n1, c])
        mb.mark_output(_concat(mb, [a, b], [1, n1, 3 * c], 2))
        launches = (8, 8)
    elif case == "not_contiguous_batch":
        # axis 1 of [2, N, c]: the batch of 2 before it interleaves too
        a = _reshape(mb, _conv(mb, rng, x1, X1[1:3], 3, 2 * c, 1), [2, n1, c])
        b = _reshape(mb, _conv(mb, rng, x1, X1[1:3], 3, 4 * c, 1), [2, 2 * n1, c])
        mb.mark_output(_concat(mb, [a, b], [2, 3 * n1, c], 1))
        launches = (8, 8)
    elif case == "single_direct":
        # one part whose PHWC4 bytes are its BHWC bytes (one pixel): read
        # back from its own buffer with float storage, converted with half
        p = mb.add_tensor([1, 1, 1, 3])
        mb.add_op("MEAN", [x1, mb.add_tensor([2], np.int32, data=np.array([1, 2], np.int32))], [p],
                  dict(keep_dims=True))
        q = _conv(mb, rng, p, [1, 1], 3, 4 * c, 1)
        mb.mark_output(_reshape(mb, q, [1, 4 * c]))
        mb.mark_output(_concat(mb, [_reshape(mb, _conv(mb, rng, x2, X2[1:3], 5, c, 1), [1, n2, c])], [1, n2, c], 1))
        # 2 inputs, MEAN, 2 convolutions, the single parts: q direct (FP32),
        # the second output's part converted
        launches = (6, 7)
    else:
        raise ValueError(case)
    inputs = [rng.standard_normal(X1).astype(np.float32), rng.standard_normal(X2).astype(np.float32)]
    return mb.build(), inputs, launches


CASES = ["two_resolutions", "nested", "head_also_output", "reshape_also_output", "head_read_twice",
         "not_contiguous", "not_contiguous_batch", "single_direct"]


@pytest.mark.parametrize("kernel_set", ["cpu", "gpu"])
@pytest.mark.parametrize("fp16", [False, True])
@pytest.mark.parametrize("c", [1, 3, 5, 17])
@pytest.mark.parametrize("case", CASES)
def test_assembled_outputs_match_cpu(case, c, fp16, kernel_set, monkeypatch):
    # The counts include each input's conversion, which the GPU set skips
    # for inputs only convolutions read (tests/test_bhwc_input.py), and each
    # part's, which it skips for parts a conv stores itself
    # (tests/test_output_direct.py): both off here.
    monkeypatch.setenv("TFLITE_GPU_BHWC_INPUT", "0")
    monkeypatch.setenv("TFLITE_GPU_BHWC_OUTPUT", "0")
    rng = np.random.default_rng(1000 * CASES.index(case) + c)
    model, inputs, launches = _heads(case, c, rng)
    want = run_cpu(model, inputs)
    options = test_options(kernel_set=kernel_set)
    if fp16:
        options["is_precision_loss_allowed"] = 1
    d = tflite_gpu.load_delegate(**options)
    it = interpreters.make(model, delegate=d)
    stats = _capi.delegate_stats(d._get_native_delegate_pointer())
    got = interpreters.run(it, inputs)
    assert stats["cpu_nodes"] == 0
    assert stats["dispatches"] == launches[fp16], stats
    # FP32: the same sums in another order (at most 3 * 3 * 5 terms).
    # FP16: inputs, convolution outputs rounded to half (2^-11 relative each).
    tol = 3e-3 if fp16 else 1e-5
    for g, w in zip(got, want):
        assert_close(g, w, rtol_l2=tol, atol=tol * max(1.0, float(np.abs(w).max())))


@pytest.mark.parametrize("kernel_set", ["cpu", "gpu"])
def test_heads_two_invokes_agree(kernel_set):
    """The staging buffer is written whole on every invoke, by the part
    conversions or (GPU set) by the convs that store their parts in it
    (output_direct.c): a second invoke with other inputs gives the CPU's
    result for those."""
    rng = np.random.default_rng(7)
    model, inputs, _ = _heads("nested", 5, rng)
    d = tflite_gpu.load_delegate(**test_options(kernel_set=kernel_set))
    it = interpreters.make(model, delegate=d)
    for seed in (1, 2):
        r = np.random.default_rng(seed)
        xs = [r.standard_normal(x.shape).astype(np.float32) for x in inputs]
        (got,), (want,) = interpreters.run(it, xs), run_cpu(model, xs)
        assert_close(got, want, rtol_l2=1e-5, atol=1e-4 * max(1.0, float(np.abs(want).max())))
