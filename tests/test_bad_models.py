"""Bad models: unexpected tensor types or ranks, zero-size tensors, missing
buffers, runtime weights. Each node either falls back to the CPU with a
precise reason (and the outputs match the CPU interpreter) or the delegate
reports a clear error; nothing crashes."""
from __future__ import annotations

import struct

import numpy as np
import pytest

import tflite_gpu
from tflite_gpu import _capi, interpreters
from tflite_gpu.model_builder import ModelBuilder

from conftest import assert_close, run_cpu


def _delegate_run(model, inputs):
    delegate = tflite_gpu.load_delegate(log_level="warning")
    it = interpreters.make(model, delegate=delegate)
    interpreters.set_inputs(it, inputs)
    it.invoke()
    stats = _capi.delegate_stats(delegate._get_native_delegate_pointer())
    return [it.get_tensor(d["index"]).copy() for d in it.get_output_details()], stats


def _add_model(shape, dtype=np.float32, const_second=None):
    mb = ModelBuilder()
    x = mb.add_input(shape, dtype)
    y = mb.add_tensor(shape, dtype, data=const_second) if const_second is not None else mb.add_input(shape, dtype)
    out = mb.add_tensor(shape, dtype)
    mb.add_op("ADD", [x, y], [out], dict(fused_activation="NONE"))
    mb.mark_output(out)
    return mb.build()


def _check_fallback(model, inputs, capfd, reason):
    got, stats = _delegate_run(model, inputs)
    err = capfd.readouterr().err
    assert stats["cpu_nodes"] >= 1 and stats["delegated_nodes"] == 0, stats
    assert reason in err, err
    for g, e in zip(got, run_cpu(model, inputs)):
        np.testing.assert_array_equal(g, e)  # the CPU ran it: identical


def test_int32_runtime_tensors_fall_back(capfd):
    rng = np.random.default_rng(1)
    xs = [rng.integers(-50, 50, [1, 3, 5, 3], dtype=np.int32) for _ in range(2)]
    _check_fallback(_add_model([1, 3, 5, 3], np.int32), xs, capfd, "only FLOAT32 runtime tensors")


def test_rank_5_tensors_fall_back(capfd):
    rng = np.random.default_rng(2)
    xs = [rng.standard_normal([2, 1, 3, 2, 5], dtype=np.float32) for _ in range(2)]
    _check_fallback(_add_model([2, 1, 3, 2, 5]), xs, capfd, "rank 5")


def test_zero_size_tensors_fall_back(capfd):
    xs = [np.zeros([1, 0, 5, 3], np.float32) for _ in range(2)]
    _check_fallback(_add_model([1, 0, 5, 3]), xs, capfd, "zero-size")


def test_constant_without_buffer_is_a_runtime_tensor():
    """A 'constant' whose buffer is empty is a runtime tensor to TFLite; the
    delegate must treat it the same way (no read of missing data)."""
    mb = ModelBuilder()
    x = mb.add_input([1, 4, 3, 5])
    y = mb.add_tensor([1, 4, 3, 5])  # no data, not an input: buffer 0 (empty)
    out = mb.add_tensor([1, 4, 3, 5])
    mb.add_op("ADD", [x, y], [out], dict(fused_activation="NONE"))
    mb.mark_output(out)
    model = mb.build()
    x0 = np.random.default_rng(3).standard_normal([1, 4, 3, 5], dtype=np.float32)
    with pytest.raises(RuntimeError, match="lacks data"):
        run_cpu(model, [x0])  # the runtime refuses to invoke: so must the delegated graph
    with pytest.raises(RuntimeError, match="lacks data"):
        _delegate_run(model, [x0])


def test_runtime_conv_weights_fall_back(capfd):
    rng = np.random.default_rng(4)
    mb = ModelBuilder()
    x = mb.add_input([1, 6, 5, 3])
    w = mb.add_input([4, 3, 3, 3])  # weights fed at run time
    b = mb.add_tensor([4], data=rng.standard_normal(4, dtype=np.float32))
    out = mb.add_tensor([1, 6, 5, 4])
    mb.add_op("CONV_2D", [x, w, b], [out], dict(padding="SAME", stride_w=1, stride_h=1, fused_activation="NONE"))
    mb.mark_output(out)
    model = mb.build()
    xs = [rng.standard_normal([1, 6, 5, 3], dtype=np.float32), rng.standard_normal([4, 3, 3, 3], dtype=np.float32)]
    got, stats = _delegate_run(model, xs)
    assert stats["delegated_nodes"] == 0
    assert "constant" in capfd.readouterr().err
    assert_close(got[0], run_cpu(model, xs)[0])


def test_declared_output_shape_that_lies_falls_back(capfd):
    """An output declared [1,4,3,5] for an ADD that computes [1,4,3,2]."""
    mb = ModelBuilder()
    x = mb.add_input([1, 4, 3, 2])
    y = mb.add_input([1, 4, 3, 2])
    out = mb.add_tensor([1, 4, 3, 5])
    mb.add_op("ADD", [x, y], [out], dict(fused_activation="NONE"))
    mb.mark_output(out)
    model = mb.build()
    rng = np.random.default_rng(5)
    xs = [rng.standard_normal([1, 4, 3, 2], dtype=np.float32) for _ in range(2)]
    got, stats = _delegate_run(model, xs)
    assert stats["delegated_nodes"] == 0, stats
    assert "differs from the computed" in capfd.readouterr().err


def test_resize_to_zero_batch_fails_clearly(capfd):
    from test_resize import C_IN, _chain_model
    delegate = tflite_gpu.load_delegate(log_level="warning")
    it = interpreters.make(_chain_model(), delegate=delegate)
    it.resize_tensor_input(it.get_input_details()[0]["index"], [0, 9, 7, C_IN])
    with pytest.raises(RuntimeError):
        it.allocate_tensors()
    assert "cannot follow the input resize" in capfd.readouterr().err


# ---- sizes that overflow: every op check computes them in 64 bits and ----
# ---- refuses the node (with a reason naming it) before anything uses them --

I32_MAX = 2**31 - 1


def _choose_nodes(model):
    """The delegate's node choice alone: its Prepare runs when the
    interpreter is made; nothing is allocated or invoked (a refused node's
    CPU kernel may well fail on these sizes, which is the runtime's affair)."""
    delegate = tflite_gpu.load_delegate(log_level="silent")
    it = interpreters.make(model, delegate=delegate, cpu="builtin", allocate=False)
    return it, _capi.delegate_nodes(delegate._get_native_delegate_pointer())


def _one_op(op, in_shapes, out_shape, options=None, consts=(), custom_options=None, version=1):
    """One op: runtime inputs of in_shapes, then constants (shape, dtype, data)."""
    mb = ModelBuilder()
    ins = [mb.add_input(s) for s in in_shapes]
    ins += [mb.add_tensor(np.shape(d), dt, data=np.asarray(d, dt)) for d, dt in consts]
    out = mb.add_tensor(out_shape)
    mb.add_op(op, ins, [out], options, custom_options=custom_options, version=version)
    mb.mark_output(out)
    return mb.build()


def _tconv_bias(stride_w, stride_h, h=9, w=7, k=3, padding=2):
    rng = np.random.default_rng(8)
    mb = ModelBuilder()
    x = mb.add_input([1, h, w, 4])
    wt = mb.add_tensor([2, k, k, 4], data=rng.standard_normal([2, k, k, 4], dtype=np.float32))
    b = mb.add_tensor([2], data=np.zeros(2, np.float32))
    y = mb.add_tensor([1, 2 * h, 2 * w, 2])  # whatever is declared: the check computes the real size
    mb.add_op("CUSTOM:Convolution2DTransposeBias", [x, wt, b], [y],
              custom_options=struct.pack("<3i", padding, stride_w, stride_h))
    mb.mark_output(y)
    return mb.build()


def _conv(op, dilation, k=3, stride=1):
    rng = np.random.default_rng(9)
    mb = ModelBuilder()
    x = mb.add_input([1, 8, 8, 4])
    shape = [4, k, k, 4] if op == "CONV_2D" else [1, k, k, 4]
    wt = mb.add_tensor(shape, data=rng.standard_normal(shape, dtype=np.float32))
    b = mb.add_tensor([4], data=np.zeros(4, np.float32))
    out = mb.add_tensor([1, 8, 8, 4])
    opts = dict(padding="SAME", stride_w=stride, stride_h=stride, dilation_w=dilation, dilation_h=dilation,
                fused_activation="NONE")
    mb.add_op(op, [x, wt, b], [out], opts)
    mb.mark_output(out)
    return mb.build()


def _split_v(sizes):
    mb = ModelBuilder()
    x = mb.add_input([1, 4, 4, 3])
    s = mb.add_tensor([len(sizes)], np.int32, data=np.array(sizes, np.int32))
    axis = mb.add_tensor([1], np.int32, data=np.array([1], np.int32))
    outs = [mb.add_tensor([1, 2, 4, 3]) for _ in sizes]
    mb.add_op("SPLIT_V", [x, s, axis], outs, dict(num_splits=len(sizes)))
    for o in outs:
        mb.mark_output(o)
    return mb.build()


OVERFLOW_CASES = {
    # MediaPipe's transpose conv: stride * (in - 1) + k overflowed an int (UBSan).
    "tconv_bias_stride_2^30": (lambda: _tconv_bias(2, 2**30), "CUSTOM Convolution2DTransposeBias",
                               "which overflows an int"),
    "tconv_bias_stride_max": (lambda: _tconv_bias(I32_MAX, I32_MAX, padding=1), "CUSTOM Convolution2DTransposeBias",
                              "which overflows an int"),
    "conv_dilation_2^30": (lambda: _conv("CONV_2D", 2**30), "CONV_2D", "window overflows"),
    "conv_stride_max": (lambda: _conv("CONV_2D", 1, stride=I32_MAX), "CONV_2D", "window overflows"),
    "depthwise_dilation_max": (lambda: _conv("DEPTHWISE_CONV_2D", I32_MAX), "DEPTHWISE_CONV_2D", "window overflows"),
    "max_pool_filter_and_stride_max": (
        lambda: _one_op("MAX_POOL_2D", [[1, 8, 8, 4]], [1, 1, 1, 4],
                        dict(padding="SAME", stride_w=I32_MAX, stride_h=I32_MAX, filter_w=I32_MAX,
                             filter_h=I32_MAX, fused_activation="NONE")),
        "MAX_POOL_2D", "window overflows"),
    "tile_2^30": (lambda: _one_op("TILE", [[1, 4, 4, 3]], [1, 4, 4, 3], consts=[([1, 2**30, 4, 1], np.int32)]),
                  "TILE", "the computed output height is 4294967296"),
    "pad_max": (lambda: _one_op("PAD", [[1, 4, 4, 3]], [1, 4, 4, 3],
                                consts=[([[0, 0], [I32_MAX, I32_MAX], [0, 0], [0, 0]], np.int32)]),
                "PAD", "the computed output height is 4294967298"),
    "concat_channels_sum": (lambda: _one_op("CONCATENATION", [[1, 1, 1, 2**30], [1, 1, 1, 2**30]], [1, 1, 1, 8],
                                            dict(axis=3, fused_activation="NONE")),
                            "CONCATENATION", "the computed output channels is 2147483648"),
    "depth_to_space_block_2^16": (lambda: _one_op("DEPTH_TO_SPACE", [[1, 2, 2, 4]], [1, 2, 2, 4],
                                                  dict(block_size=2**16)),
                                  "DEPTH_TO_SPACE", "block_size^2 = 4294967296"),
    "space_to_depth_block_2^16": (lambda: _one_op("SPACE_TO_DEPTH", [[1, 2**16, 2**16, 1]], [1, 1, 1, 4],
                                                  dict(block_size=2**16)),
                                  "SPACE_TO_DEPTH", "[1,65536,65536,1] needs 17179869184 elements"),
    "huge_declared_tensor": (lambda: _one_op("ADD", [[1, 50000, 50000, 1], [1, 50000, 50000, 1]],
                                             [1, 50000, 50000, 1], dict(fused_activation="NONE")),
                             "ADD", "needs 10000000000 elements"),
    "split_v_sizes_sum": (lambda: _split_v([I32_MAX, I32_MAX]), "SPLIT_V", "do not add up"),
    "strided_slice_stride_max": (lambda: _one_op("STRIDED_SLICE", [[1, 4, 4, 3]], [1, 4, 4, 3],
                                                 consts=[([0, 0, 0, 0], np.int32), ([1, 4, 4, 3], np.int32),
                                                         ([1, I32_MAX, 1, 1], np.int32)]),
                                 "STRIDED_SLICE", "declared output holds 48 elements, the slice 12"),
    "slice_begin_min": (lambda: _one_op("SLICE", [[1, 4, 4, 3]], [1, 4, 4, 3],
                                        consts=[([0, -2**31, 0, 0], np.int32), ([1, -1, 4, 3], np.int32)]),
                        "SLICE", "begin -2147483648, size -1 do not fit axis 1"),
    "gather_int64_index_2^32": (lambda: _one_op("GATHER", [[5, 3]], [1, 3], dict(axis=0, batch_dims=0),
                                                consts=[([2**32], np.int64)]),
                                "GATHER", "outside the int32 range"),
}


@pytest.mark.parametrize("case", sorted(OVERFLOW_CASES))
def test_size_overflow_is_refused_by_the_op_check(case):
    build, op, words = OVERFLOW_CASES[case]
    _, nodes = _choose_nodes(build())
    (node,) = [n for n in nodes if n["op"] == op]
    assert node["where"] == "cpu" and words in node["reason"], node


def test_size_overflow_reason_is_logged_with_the_op_name(capfd):
    mod = tflite_gpu.runtime()
    delegate = tflite_gpu.load_delegate(log_level="warning")
    mod.Interpreter(model_content=_tconv_bias(2, 2**30), experimental_delegates=[delegate])
    err = capfd.readouterr().err
    assert "CUSTOM Convolution2DTransposeBias: stride 2x1073741824 over a 7x9 input" in err, err


def test_large_but_valid_strides_still_delegate():
    """The limits refuse only what overflows: a stride far above the input
    size is a valid (if odd) conv, and runs on the GPU like the CPU."""
    rng = np.random.default_rng(10)
    mb = ModelBuilder()
    x = mb.add_input([1, 9, 7, 4])
    wt = mb.add_tensor([4, 3, 3, 4], data=rng.standard_normal([4, 3, 3, 4], dtype=np.float32))
    b = mb.add_tensor([4], data=np.zeros(4, np.float32))
    out = mb.add_tensor([1, 1, 1, 4])
    mb.add_op("CONV_2D", [x, wt, b], [out], dict(padding="SAME", stride_w=1000, stride_h=1000, fused_activation="NONE"))
    mb.mark_output(out)
    model = mb.build()
    xs = [rng.standard_normal([1, 9, 7, 4], dtype=np.float32)]
    got, stats = _delegate_run(model, xs)
    assert stats["delegated_nodes"] == 1, stats
    assert_close(got[0], run_cpu(model, xs)[0])


_MALFORMED_CHILD = """
import sys, numpy as np, tflite_gpu
from tflite_gpu import _capi
model = open(sys.argv[1], "rb").read()
d = tflite_gpu.load_delegate(log_level="warning") if sys.argv[2] == "delegate" else None
it = tflite_gpu.runtime().Interpreter(model_content=model, experimental_delegates=[d] if d else None)
try:
    it.allocate_tensors()
except RuntimeError:
    print("refused")
    sys.exit(0)
it.set_tensor(it.get_input_details()[0]["index"], np.ones([1, 4, 4, 3], np.float32))
it.invoke()
print("ran", _capi.delegate_stats(d._get_native_delegate_pointer())["delegated_nodes"] if d else 0)
"""


@pytest.mark.parametrize("writes", ["its_own_input", "a_constant"])
def test_malformed_graph_is_left_to_the_runtime(tmp_path, writes):
    """A node that writes its own input or a constant (a fuzzed model): the
    stock runtime alone runs or refuses it cleanly, but its XNNPACK
    partitioner crashed once any node had been delegated. The delegate now
    takes no node of such a graph, and the outcome is the runtime's own."""
    import subprocess
    import sys

    mb = ModelBuilder()
    x = mb.add_input([1, 4, 4, 3])
    c = mb.add_tensor([3], data=np.linspace(-1, 1, 3).astype(np.float32))
    y = mb.add_tensor([1, 4, 4, 3])
    mb.add_op("ADD", [x, c], [y], dict(fused_activation="NONE"))
    mb.add_op("RELU", [y], [y if writes == "its_own_input" else c])
    mb.mark_output(y)
    path = tmp_path / "m.tflite"
    path.write_bytes(mb.build())
    script = tmp_path / "child.py"
    script.write_text(_MALFORMED_CHILD)
    runs = {}
    for mode in ("cpu", "delegate"):
        r = subprocess.run([sys.executable, str(script), str(path), mode], capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, f"{mode}: exit {r.returncode}\n{r.stderr[-2000:]}"
        runs[mode] = r
    assert runs["delegate"].stdout.split()[0] == runs["cpu"].stdout.split()[0]
    if runs["delegate"].stdout.startswith("ran"):
        assert runs["delegate"].stdout.split()[1] == "0"
    assert "the graph is malformed" in runs["delegate"].stderr
