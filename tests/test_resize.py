"""Dynamic shapes: after resize_tensor_input + allocate_tensors the delegated
partition re-plans (shapes inferred node by node, memory planned again,
dispatch sizes recomputed, compiled programs reused) and matches the CPU
interpreter resized the same way. A resize the delegate cannot follow fails
allocate_tensors with a message naming the node; it never gives a wrong
output."""
from __future__ import annotations

import numpy as np
import pytest

import tflite_gpu
from tflite_gpu import _capi, interpreters
from tflite_gpu.model_builder import ModelBuilder

from conftest import assert_close

C_IN = 5


def _chain_model(fp16_weights=True, fixed_reshape=False):
    """conv (fp16 weights behind DEQUANTIZE) -> ADD const -> depthwise -> PAD
    -> MEAN(H,W) -> RESHAPE [-1, C] -> FULLY_CONNECTED, plus a second output
    RESIZE_BILINEAR x2 of the conv branch. Shapes declared for 1x9x7x5."""
    rng = np.random.default_rng(7)
    mb = ModelBuilder()
    n, h, w, c = 1, 9, 7, C_IN
    x = mb.add_input([n, h, w, c])

    def const(shape):
        return mb.add_tensor(shape, data=rng.standard_normal(shape, dtype=np.float32))

    if fp16_weights:
        half = mb.add_tensor([6, 3, 3, c], np.float16,
                             data=rng.standard_normal([6, 3, 3, c]).astype(np.float16))
        wts = mb.add_tensor([6, 3, 3, c])
        mb.add_op("DEQUANTIZE", [half], [wts], version=2)
    else:
        wts = const([6, 3, 3, c])
    conv = mb.add_tensor([n, 5, 4, 6])
    mb.add_op("CONV_2D", [x, wts, const([6])], [conv],
              dict(padding="SAME", stride_w=2, stride_h=2, fused_activation="RELU"))
    added = mb.add_tensor([n, 5, 4, 6])
    mb.add_op("ADD", [conv, const([6])], [added], dict(fused_activation="NONE"))
    dw = mb.add_tensor([n, 5, 4, 6])
    mb.add_op("DEPTHWISE_CONV_2D", [added, const([1, 3, 3, 6]), const([6])], [dw],
              dict(padding="SAME", stride_w=1, stride_h=1, depth_multiplier=1, fused_activation="NONE"))
    pads = mb.add_tensor([4, 2], np.int32, data=np.asarray([[0, 0], [1, 2], [0, 1], [0, 0]], np.int32))
    padded = mb.add_tensor([n, 8, 5, 6])
    mb.add_op("PAD", [dw, pads], [padded])
    axes = mb.add_tensor([2], np.int32, data=np.asarray([1, 2], np.int32))
    mean = mb.add_tensor([n, 1, 1, 6])
    mb.add_op("MEAN", [padded, axes], [mean], dict(keep_dims=True))
    new_shape = [1, 6] if fixed_reshape else [-1, 6]
    flat = mb.add_tensor([n, 6])
    mb.add_op("RESHAPE", [mean, mb.add_tensor([2], np.int32, data=np.asarray(new_shape, np.int32))], [flat],
              dict(new_shape=new_shape))
    fc = mb.add_tensor([n, 3])
    mb.add_op("FULLY_CONNECTED", [flat, const([3, 6]), const([3])], [fc],
              dict(fused_activation="NONE", keep_num_dims=False))
    mb.mark_output(fc)
    up = mb.add_tensor([n, 10, 8, 6])
    mb.add_op("RESIZE_BILINEAR", [conv, mb.add_tensor([2], np.int32, data=np.asarray([10, 8], np.int32))],
              [up], dict(align_corners=False, half_pixel_centers=False))
    mb.mark_output(up)
    return mb.build()


def _interp(model, delegate=None):
    """Through `delegate`, else the builtin CPU kernels; not allocated yet."""
    return interpreters.make(model, delegate=delegate, cpu="xnnpack" if delegate else "builtin", allocate=False)


def _run(it, x):
    return interpreters.run(it, [x])


def _resize(it, shape):
    it.resize_tensor_input(it.get_input_details()[0]["index"], shape)
    it.allocate_tensors()


def _builds():
    return _capi.debug_counters()["program_builds"]


def test_batch_and_spatial_resizes_follow_the_cpu():
    model = _chain_model()
    delegate = tflite_gpu.load_delegate(log_level="silent")
    gpu, cpu = _interp(model, delegate), _interp(model)
    gpu.allocate_tensors()
    cpu.allocate_tensors()
    stats = _capi.delegate_stats(delegate._get_native_delegate_pointer())
    assert stats["cpu_nodes"] == 0 and stats["partitions"] == 1, stats
    rng = np.random.default_rng(3)
    builds_after_first = None
    for shape in ([1, 9, 7, C_IN], [4, 9, 7, C_IN], [1, 9, 7, C_IN], [2, 16, 11, C_IN], [3, 5, 6, C_IN]):
        _resize(gpu, shape)
        _resize(cpu, shape)
        x = rng.uniform(-1, 1, shape).astype(np.float32)
        got, want = _run(gpu, x), _run(cpu, x)
        assert len(got) == len(want) == 2
        for g, e in zip(got, want):
            assert g.shape == e.shape, (shape, g.shape, e.shape)
            assert_close(g, e)  # FP32: only summation order differs
        if builds_after_first is None:
            builds_after_first = _builds()
    # Every kernel file was built for the first shape; re-plans reuse them.
    assert _builds() == builds_after_first


def test_unfollowable_resize_fails_clearly_and_recovers(capfd):
    """RESHAPE to a fixed [1, 6] cannot take batch 4: allocate_tensors fails
    naming the node; resizing back re-plans and is correct again."""
    model = _chain_model(fp16_weights=False, fixed_reshape=True)
    delegate = tflite_gpu.load_delegate(log_level="warning")
    gpu, cpu = _interp(model, delegate), _interp(model)
    gpu.allocate_tensors()
    cpu.allocate_tensors()
    gpu.resize_tensor_input(gpu.get_input_details()[0]["index"], [4, 9, 7, C_IN])
    with pytest.raises(RuntimeError):
        gpu.allocate_tensors()
    err = capfd.readouterr().err
    assert "cannot follow the input resize" in err and "RESHAPE" in err, err
    _resize(gpu, [1, 9, 7, C_IN])
    x = np.random.default_rng(5).uniform(-1, 1, [1, 9, 7, C_IN]).astype(np.float32)
    for g, e in zip(_run(gpu, x), _run(cpu, x)):
        assert_close(g, e)


def test_resize_with_fp16_storage():
    model = _chain_model()
    delegate = tflite_gpu.load_delegate(log_level="silent", is_precision_loss_allowed="1")
    gpu, cpu = _interp(model, delegate), _interp(model)
    shape = [3, 12, 10, C_IN]
    _resize(gpu, shape)
    _resize(cpu, shape)
    x = np.random.default_rng(11).uniform(-1, 1, shape).astype(np.float32)
    for g, e in zip(_run(gpu, x), _run(cpu, x)):
        assert g.shape == e.shape
        assert_close(g, e, rtol_l2=1e-2, atol=5e-2)  # FP16 storage of activations


def _layout_model():
    """MAX_POOL 2x2/2 -> MUL by a per-channel constant -> CONCATENATION on
    channels -> STRIDED_SLICE (shrinks H; masked ends follow the resize) ->
    RESHAPE [-1, 8] given only in the options -> LOGISTIC. Declared for
    1x8x6x4."""
    rng = np.random.default_rng(9)
    mb = ModelBuilder()
    x = mb.add_input([1, 8, 6, 4])
    pool = mb.add_tensor([1, 4, 3, 4])
    mb.add_op("MAX_POOL_2D", [x], [pool], dict(padding="VALID", stride_w=2, stride_h=2, filter_w=2, filter_h=2,
                                                 fused_activation="NONE"))
    scaled = mb.add_tensor([1, 4, 3, 4])
    mb.add_op("MUL", [pool, mb.add_tensor([4], data=rng.standard_normal(4, dtype=np.float32))], [scaled],
              dict(fused_activation="NONE"))
    cat = mb.add_tensor([1, 4, 3, 8])
    mb.add_op("CONCATENATION", [pool, scaled], [cat], dict(axis=3, fused_activation="NONE"))
    begin, end, strides = ([0, 1, 0, 0], [0, 2, 0, 0], [1, 1, 1, 1])
    params = [mb.add_tensor([4], np.int32, data=np.asarray(v, np.int32)) for v in (begin, end, strides)]
    row = mb.add_tensor([1, 3, 8])
    mb.add_op("STRIDED_SLICE", [cat] + params, [row], dict(begin_mask=0, end_mask=0b1101, shrink_axis_mask=0b0010))
    flat = mb.add_tensor([3, 8])
    mb.add_op("RESHAPE", [row], [flat], dict(new_shape=[-1, 8]))
    out = mb.add_tensor([3, 8])
    mb.add_op("LOGISTIC", [flat], [out])
    mb.mark_output(out)
    return mb.build()


def test_resize_through_pool_concat_slice_and_reshape():
    model = _layout_model()
    delegate = tflite_gpu.load_delegate(log_level="silent")
    gpu, cpu = _interp(model, delegate), _interp(model)
    gpu.allocate_tensors()
    assert _capi.delegate_stats(delegate._get_native_delegate_pointer())["cpu_nodes"] == 0
    rng = np.random.default_rng(13)
    for shape in ([1, 8, 6, 4], [2, 12, 10, 4], [3, 6, 6, 4], [1, 8, 6, 4]):
        _resize(gpu, shape)
        _resize(cpu, shape)
        x = rng.uniform(-1, 1, shape).astype(np.float32)
        (g,), (e,) = _run(gpu, x), _run(cpu, x)
        assert g.shape == e.shape, (shape, g.shape, e.shape)
        assert_close(g, e)
