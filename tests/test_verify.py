"""The model verifier (tflite_gpu.verify) and the memory check
(tflite_gpu.resources): valid models pass, and each kind of damage is
refused with a message that says what and where, never anything but
ModelError."""
from __future__ import annotations

import struct

import numpy as np
import pytest

from tflite_gpu import _fbs, models, resources, verify
from tflite_gpu.model_builder import ModelBuilder

SMALL = ["hand_recrop", "face_detection_short_range", "iris_landmark", "face_detection_full_range_sparse",
         "selfie_segmentation"]


def _conv(stride=1, quant=None):
    rng = np.random.default_rng(0)
    mb = ModelBuilder()
    x = mb.add_input([1, 6, 6, 3])
    w = mb.add_tensor([4, 3, 3, 3], data=rng.standard_normal((4, 3, 3, 3)).astype(np.float32), quant=quant)
    b = mb.add_tensor([4], data=np.zeros(4, np.float32))
    y = mb.add_tensor([1, 6, 6, 4])
    mb.add_op("CONV_2D", [x, w, b], [y], dict(padding="SAME", stride_w=stride, stride_h=1))
    mb.mark_output(y)
    return mb.build()


def _where(data, suffix, kind):
    """Byte positions of the layout entries ending in `suffix` of `kind`."""
    return [pos for where, k, pos, _ in verify.layout(data) if where.endswith(suffix) and k == kind]


def _set32(data, pos, value):
    b = bytearray(data)
    b[pos:pos + 4] = struct.pack("<i", value)
    return bytes(b)


def _refused(data, *words):
    with pytest.raises(verify.ModelError) as e:
        verify.verify_bytes(data)
    for w in words:
        assert w in str(e.value), str(e.value)
    return str(e.value)


@pytest.fixture(scope="module")
def corpus():
    paths = models.fetch_models(SMALL, progress=False)
    return {n: paths[n].read_bytes() for n in SMALL}


def test_schema_layout_follows_the_tflite_package():
    fields = {f.key: f for f in _fbs.fields("Tensor")}
    assert fields["shape"].kind == "vector" and fields["shape"].size == 4 and fields["shape"].fmt == "<i"
    assert fields["type"].kind == "scalar" and fields["type"].size == 1
    assert fields["quantization"].kind == "table" and fields["quantization"].table == "QuantizationParameters"
    op = {f.key: f for f in _fbs.fields("Operator")}
    assert op["builtin_options"].kind == "union" and op["builtin_options"].union_enum == "BuiltinOptions"
    conv = {f.key: f for f in _fbs.fields("Conv2DOptions")}
    assert conv["stride_w"].default == 0 and conv["dilation_w_factor"].default == 1


@pytest.mark.parametrize("name", SMALL)
def test_real_models_pass(name, corpus):
    info = verify.verify_bytes(corpus[name])
    g = info.subgraphs[0]
    assert g.tensors and g.operators and g.inputs and g.outputs
    assert all(t.nbytes >= 0 for t in g.tensors)


def test_built_model_passes():
    info = verify.verify_bytes(_conv())
    (op,) = info.subgraphs[0].operators
    assert op.op == "CONV_2D" and op.inputs == (0, 1, 2) and op.outputs == (3,)
    assert info.subgraphs[0].tensors[1].data_bytes == 4 * 3 * 3 * 3 * 4


@pytest.mark.parametrize("cut", [0, 5, 1024, 4096, "half", -1])
def test_truncated(cut, corpus):
    data = corpus["iris_landmark"]
    n = {"half": len(data) // 2, -1: len(data) - 1}.get(cut, cut)
    msg = _refused(data[:n])
    assert any(w in msg for w in ("past the end", "empty file", "too short")), msg


def test_not_a_flatbuffer():
    _refused(b"hello world, not a model\n", "no TFLite file identifier", "hello world")


def test_bad_root_offset(corpus):
    _refused(_set32(corpus["hand_recrop"], 0, 0x7FFFFFF0), "root", "points past the end")
    _refused(_set32(corpus["hand_recrop"], 0, -16), "root", "out of range")


def test_vector_past_the_end(corpus):
    data = corpus["hand_recrop"]
    pos = _where(data, ".shape", "vector")[3]
    _refused(_set32(data, pos, 1 << 28), "shape", "runs past the end")


def test_misaligned_table_offset(corpus):
    data = corpus["hand_recrop"]
    pos = _where(data, "subgraphs[0]", "offset")[0]
    value = struct.unpack_from("<I", data, pos)[0]
    _refused(_set32(data, pos, value + 2), "subgraphs[0]")


def test_opcode_index_out_of_range():
    mb = ModelBuilder()
    x = mb.add_input([1, 4])
    y, z = mb.add_tensor([1, 4]), mb.add_tensor([1, 4])
    mb.add_op("RELU", [x], [y])
    mb.add_op("TANH", [y], [z])  # operator code 1: its opcode_index is written
    mb.mark_output(z)
    data = mb.build()
    (pos,) = _where(data, "operators[1].opcode_index", "scalar")
    _refused(_set32(data, pos, 7), "operator code 7", "has 2")


def test_unknown_builtin_code():
    data = _conv()
    pos = _where(data, ".builtin_code", "scalar")[0]
    _refused(_set32(data, pos, 100000), "builtin code 100000 is not a TFLite operator")


def test_tensor_index_out_of_range():
    data = _conv()
    pos = _where(data, "operators[0].inputs", "vector")[0]
    _refused(_set32(data, pos + 4, 99), "input tensor 99", "4 tensors")


def test_subgraph_output_out_of_range():
    data = _conv()
    pos = _where(data, "subgraphs[0].outputs", "vector")[0]
    _refused(_set32(data, pos + 4, -3), "output tensor -3")


def test_buffer_index_out_of_range():
    data = _conv()
    pos = _where(data, "tensors[1].buffer", "scalar")[0]
    _refused(_set32(data, pos, 1000), "buffer 1000")


def test_buffer_size_differs_from_shape():
    data = _conv()
    pos = _where(data, "tensors[1].shape", "vector")[0]
    msg = _refused(_set32(data, pos + 4, 5), "needs 540 bytes", "holds 432")
    assert "tensor 1" in msg


def test_negative_shape():
    data = _conv()
    pos = _where(data, "tensors[0].shape", "vector")[0]
    _refused(_set32(data, pos + 8, -6), "negative dimension")


def test_stride_zero():
    _refused(_conv(stride=0), "stride_w is 0")


def test_operator_writing_its_own_input():
    mb = ModelBuilder()
    x, y = mb.add_input([1, 4]), mb.add_input([1, 4])
    mb.add_op("ADD", [x, y], [x], dict(fused_activation="NONE"))
    mb.mark_output(x)
    _refused(mb.build(), "writes its own input tensor 0")


def test_operator_writing_a_constant(corpus):
    """Found by the model fuzzer: face_detection_short_range with a RESHAPE
    writing into a constant bias crashed the delegate (SIGSEGV)."""
    data = corpus["face_detection_short_range"]
    pos = _where(data, "operators[159].outputs", "vector")[0]
    _refused(_set32(data, pos + 4, 2), "operator 159 (RESHAPE): writes the constant tensor 2 'conv2d/Bias'")


def test_tensor_written_twice():
    mb = ModelBuilder()
    x = mb.add_input([1, 4])
    y = mb.add_tensor([1, 4])
    mb.add_op("RELU", [x], [y])
    mb.add_op("TANH", [x], [y])
    mb.mark_output(y)
    _refused(mb.build(), "operator 1 (TANH): writes tensor 1", "which operator 0 writes too")


def test_operator_writing_a_graph_input():
    mb = ModelBuilder()
    x, y = mb.add_input([1, 4]), mb.add_input([1, 4])
    mb.add_op("RELU", [x], [y])
    mb.mark_output(y)
    _refused(mb.build(), "writes the subgraph's input tensor 1")


def test_quantization_zero_points_short():
    data = _conv(quant=dict(scale=[0.1, 0.2, 0.3, 0.4], zero_point=[0, 0, 0, 0], quantized_dimension=0))
    pos = _where(data, "quantization.zero_point", "vector")[0]
    _refused(_set32(data, pos, 2), "4 quantization scale(s) but 2 zero point(s)")


def test_only_model_error_escapes(corpus):
    """Random damage of every kind: the verifier accepts or refuses, nothing else."""
    rng = np.random.default_rng(5)
    data = corpus["face_detection_full_range_sparse"]  # sparse arrays, quantization, metadata
    layout = verify.layout(data)
    outcomes = {"accepted": 0, "refused": 0}
    for _ in range(150):
        b = bytearray(data)
        _, _, pos, size = layout[int(rng.integers(0, len(layout)))]
        b[pos:pos + 4] = struct.pack("<i", int(rng.choice([0, 1, -1, 255, 65536, 0x7FFFFFFF])))
        try:
            verify.verify_bytes(bytes(b))
            outcomes["accepted"] += 1
        except verify.ModelError:
            outcomes["refused"] += 1
    assert outcomes["refused"] > 0 and outcomes["accepted"] > 0, outcomes


def test_read_model_names_the_file(tmp_path):
    (tmp_path / "empty.tflite").write_bytes(b"")
    (tmp_path / "dir.tflite").mkdir()
    for name, words in (("empty.tflite", "empty file"), ("dir.tflite", "is a directory"),
                        ("absent.tflite", "No such file")):
        with pytest.raises(verify.ModelError, match=words) as e:
            verify.verify_file(tmp_path / name)
        assert name in str(e.value)


def _add(shape):
    mb = ModelBuilder()
    x, y = mb.add_input(shape), mb.add_input(shape)
    z = mb.add_tensor(shape)
    mb.add_op("ADD", [x, y], [z], dict(fused_activation="NONE"))
    mb.mark_output(z)
    return mb.build()


def test_memory_need_is_the_largest_live_set():
    info = verify.verify_bytes(_add([1, 100, 100, 3]))
    need = resources.model_need(info)
    assert need.bytes == 3 * 100 * 100 * 3 * 4 and need.io_bytes == need.bytes
    assert "operator 0 (ADD)" in need.where
    conv = resources.model_need(verify.verify_bytes(_conv()))
    assert conv.bytes == (6 * 6 * 3 + 6 * 6 * 4) * 4  # constants stay in the file


def test_too_large_for_the_machine(monkeypatch, tmp_path):
    monkeypatch.setattr(resources, "machine_available", lambda: (8 * 2**30, "test"))
    info = verify.verify_bytes(_add([1, 20000, 20000, 3]))
    with pytest.raises(verify.ModelError) as e:
        resources.check_fits(tmp_path / "big.tflite", info, "check", io_copies=3)
    msg = str(e.value)
    assert "big.tflite" in msg and "[1, 20000, 20000, 3]" in msg and "4.47 GiB" in msg and "8.00 GiB" in msg


def test_too_large_for_the_device(monkeypatch, tmp_path):
    monkeypatch.setattr(resources, "machine_available", lambda: (2**50, "test"))
    monkeypatch.setattr(resources, "device_memory", lambda options: (2**30, "Tiny GPU"))
    info = verify.verify_bytes(_add([1, 10000, 10000, 3]))
    with pytest.raises(verify.ModelError, match="'Tiny GPU' has 1.00 GiB"):
        resources.check_fits(tmp_path / "m.tflite", info, "check", delegate_options={})
    resources.check_fits(tmp_path / "m.tflite", info, "check", delegate_options=None)  # no delegate: fits
