"""The library's surface: options, errors, partial delegation, no OpenCL."""
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import tflite_gpu
from conftest import assert_close, run_cpu, run_delegate
from tflite_gpu import _capi
from tflite_gpu.model_builder import ModelBuilder

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_defaults_match_upstream():
    d = _capi.default_options()
    assert d["is_precision_loss_allowed"] == -1
    assert d["inference_preference"] == 0  # FAST_SINGLE_ANSWER
    assert (d["inference_priority1"], d["inference_priority2"], d["inference_priority3"]) == (1, 0, 0)
    assert d["experimental_flags"] == 1  # ENABLE_QUANT
    assert d["max_delegated_partitions"] == 1
    assert d["serialization_dir"] is None and d["model_token"] is None


def test_every_option_key_is_accepted():
    values = {"is_precision_loss_allowed": "0", "gpu_precision_loss_allowed": "false",
              "inference_preference": "SUSTAINED_SPEED", "gpu_inference_for_sustained_speed": "true",
              "inference_priority1": "MIN_LATENCY", "inference_priority2": "MAX_PRECISION",
              "inference_priority3": "MIN_MEMORY_USAGE", "experimental_flags": "ENABLE_QUANT|CL_ONLY",
              "gpu_experimental_enable_quant": "true", "gpu_backend": "cl", "max_delegated_partitions": "2",
              "serialization_dir": "/tmp", "model_token": "tok", "device": "0", "log_level": "silent",
              "kernel_set": "gpu", "partition_policy": "measured", "fp16_guard": "on", "execution": "stepped",
              "policy": "vm_schedule=0", "tune": "auto", "tune_budget": "5"}
    schema = {o["key"] for o in _capi.options_schema()}
    assert schema == set(values), "test and option table disagree"
    tflite_gpu.load_delegate(**values)  # all together (the priorities must form a valid set)
    for key, value in values.items():
        if not key.startswith("inference_priority"):
            tflite_gpu.load_delegate(**{key: value, "log_level": "silent"})


@pytest.mark.parametrize("key,value", [
    ("no_such_option", "1"),
    ("is_precision_loss_allowed", "maybe"),
    ("inference_priority1", "FASTEST"),
    ("max_delegated_partitions", "-3"),
    ("max_delegated_partitions", "12abc"),
    ("gpu_backend", "gl"),
    ("device", "no-such-device-name"),
    ("device", "99"),
    ("log_level", "loud"),
    ("kernel_set", "fpga"),
    ("experimental_flags", "GL_ONLY"),
])
def test_bad_option_raises_value_error_naming_it(key, value):
    with pytest.raises(ValueError) as e:
        tflite_gpu.load_delegate(**{key: value})
    assert key in str(e.value) or value in str(e.value)


def test_invalid_priority_combination():
    with pytest.raises(ValueError, match="inference_priority"):
        tflite_gpu.load_delegate(inference_priority1="MIN_LATENCY", inference_priority2="MIN_LATENCY")
    with pytest.raises(ValueError, match="inference_priority"):
        tflite_gpu.load_delegate(inference_priority1="MIN_LATENCY", inference_priority3="MAX_PRECISION")


def _model_with_unsupported_op():
    """conv -> ROUND (not in the op table) -> add."""
    rng = np.random.default_rng(7)
    mb = ModelBuilder()
    x = mb.add_input([1, 9, 7, 5])
    w = mb.add_tensor([6, 3, 3, 5], data=rng.standard_normal([6, 3, 3, 5]).astype(np.float32))
    b = mb.add_tensor([6], data=rng.standard_normal([6]).astype(np.float32))
    c = mb.add_tensor([1, 9, 7, 6])
    mb.add_op("CONV_2D", [x, w, b], [c], dict(padding="SAME", stride_w=1, stride_h=1, fused_activation="RELU"))
    n = mb.add_tensor([1, 9, 7, 6])
    mb.add_op("ROUND", [c], [n])
    k = mb.add_tensor([1, 1, 1, 6], data=rng.standard_normal([1, 1, 1, 6]).astype(np.float32))
    y = mb.add_tensor([1, 9, 7, 6])
    mb.add_op("ADD", [n, k], [y], dict(fused_activation="NONE"))
    mb.mark_output(y)
    return mb.build(), [rng.standard_normal([1, 9, 7, 5]).astype(np.float32)]


def test_unsupported_op_falls_back_to_cpu_with_warning(capfd):
    model, inputs = _model_with_unsupported_op()
    expected = run_cpu(model, inputs)
    actual, report = run_delegate(model, inputs, log_level="warning", max_delegated_partitions=2)
    err = capfd.readouterr().err
    assert "Following operations are not supported by GPU delegate:" in err
    assert "ROUND: Operation is not supported." in err
    assert "2 operations will run on the GPU, and the remaining 1 operations will run on the CPU." in err
    assert report.cpu_nodes == 1 and report.delegated_nodes == 2 and report.partitions == 2
    assert_close(actual[0], expected[0], rtol_l2=1e-4, atol=1e-4)


def test_max_delegated_partitions_keeps_the_largest(capfd):
    model, inputs = _model_with_unsupported_op()
    expected = run_cpu(model, inputs)
    actual, report = run_delegate(model, inputs)  # default: 1 partition
    assert report.partitions == 1 and report.delegated_nodes == 1 and report.cpu_nodes == 2
    assert_close(actual[0], expected[0], rtol_l2=1e-4, atol=1e-4)


def test_op_above_its_version_limit_falls_back_to_cpu(capfd):
    """SOFTMAX v3 (int16 in the schema, but the version alone decides, as
    upstream's limit is 2) between two delegated ops: it runs on the CPU
    with upstream's reason, the rest on the GPU, and the result is right."""
    rng = np.random.default_rng(11)
    mb = ModelBuilder()
    x = mb.add_input([2, 5, 7, 3])
    w = mb.add_tensor([5, 3, 3, 3], data=rng.standard_normal([5, 3, 3, 3]).astype(np.float32))
    b = mb.add_tensor([5], data=rng.standard_normal([5]).astype(np.float32))
    c = mb.add_tensor([2, 5, 7, 5])
    mb.add_op("CONV_2D", [x, w, b], [c], dict(padding="SAME"))
    s = mb.add_tensor([2, 5, 7, 5])
    mb.add_op("SOFTMAX", [c], [s], dict(beta=1.0), version=3)
    y = mb.add_tensor([2, 5, 7, 5])
    mb.add_op("MUL", [s, c], [y], dict(fused_activation="NONE"))
    mb.mark_output(y)
    inputs = [rng.standard_normal([2, 5, 7, 3]).astype(np.float32)]
    model = mb.build()
    expected = run_cpu(model, inputs)
    actual, report = run_delegate(model, inputs, log_level="warning", max_delegated_partitions=2)
    err = capfd.readouterr().err
    assert "SOFTMAX: Max version supported: 2. Requested version 3." in err
    assert report.cpu_nodes == 1 and report.delegated_nodes == 2 and report.partitions == 2
    assert_close(actual[0], expected[0], rtol_l2=1e-4, atol=1e-4 * max(1.0, float(np.abs(expected[0]).max())))


def _run_python(code, env_extra):
    env = dict(os.environ, **env_extra)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)


def test_no_opencl_platform_is_a_value_error(tmp_path):
    # The ICD loader reads its vendor list from OCL_ICD_VENDORS: an empty
    # directory means no platform at all.
    code = ("import tflite_gpu\n"
            "try:\n    tflite_gpu.load_delegate()\nexcept ValueError as e:\n    print('VALUE_ERROR', e)\n")
    r = _run_python(code, {"OCL_ICD_VENDORS": str(tmp_path)})
    assert "VALUE_ERROR" in r.stdout, r.stdout + r.stderr
    assert "no OpenCL platform" in r.stdout


def test_no_opencl_library_is_a_value_error():
    code = ("import tflite_gpu\n"
            "try:\n    tflite_gpu.load_delegate()\nexcept ValueError as e:\n    print('VALUE_ERROR', e)\n")
    r = _run_python(code, {"TFLITE_GPU_OPENCL_LIBRARY": "/nonexistent/libOpenCL.so"})
    # The override is tried first; the system loader may still be found
    # after it, so only a clean outcome is required: success or ValueError.
    assert r.returncode == 0, r.stderr


def test_plugin_destroy_accepts_null():
    import ctypes
    lib = ctypes.CDLL(tflite_gpu.library_path())
    lib.tflite_plugin_destroy_delegate(None)
    lib.TfLiteGpuDelegateV2Delete(None)


def test_c_api_create_and_delete():
    lib = _capi.lib()
    opts = lib.TfLiteGpuDelegateOptionsV2Default()
    d = lib.TfLiteGpuDelegateV2Create(_capi.ffi.new("TfLiteGpuDelegateOptionsV2*", opts))
    assert d != _capi.ffi.NULL
    lib.TfLiteGpuDelegateV2Delete(d)
    bad = _capi.ffi.new("TfLiteGpuDelegateOptionsV2*", opts)
    bad.inference_priority1 = 0  # AUTO first is invalid
    assert lib.TfLiteGpuDelegateV2Create(bad) == _capi.ffi.NULL


def test_ops_listing_matches_docs_ops():
    from tflite_gpu.cli_info import ops_markdown
    readme = (ROOT / "docs" / "ops.md").read_text()
    start, end = "<!-- ops:begin -->", "<!-- ops:end -->"
    assert start in readme and end in readme
    table = readme.split(start, 1)[1].split(end, 1)[0].strip()
    assert table == ops_markdown().strip(), "docs/ops.md is stale: run python tools/gen_docs.py"


@pytest.mark.parametrize("requested", ["auto", "cpu", "gpu"])
def test_kernel_set_is_resolved_and_reported(requested):
    """kernel_set picks the kernel family on any device; `auto` follows the
    device type (device_caps.h), and the delegate reports what it resolved."""
    d = tflite_gpu.load_delegate(kernel_set=requested, log_level="silent")
    info = _capi.delegate_device(d._get_native_delegate_pointer())
    auto = _capi.devices()[0]["kernel_set_auto"]
    assert info["kernel_set"] == (auto if requested == "auto" else requested)
