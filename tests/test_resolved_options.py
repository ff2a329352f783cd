"""tflite_gpu.resolved: the options as the library resolves them, so that
check and bench never re-derive a setting from option spellings."""
import pytest

from tflite_gpu import bench, resolved


def test_defaults():
    r = resolved.options()
    assert r["precision"] == "fp32" and r["is_precision_loss_allowed"] == -1
    assert r["inference_priority1"] == "MAX_PRECISION" and r["serialization"] is False
    assert r["kernel_set"] == "auto" and r["log_level"] == "warning"


@pytest.mark.parametrize("opts, precision", [
    ({"inference_priority1": "MIN_LATENCY"}, "fp16"),
    ({"inference_priority1": "MIN_MEMORY_USAGE"}, "fp16"),
    ({"inference_priority1": "MIN_LATENCY", "is_precision_loss_allowed": "0"}, "fp32"),  # explicit wins
    ({"precision_loss_allowed": True}, "fp16"),  # an alias
    ({"gpu_precision_loss_allowed": "1", "is_precision_loss_allowed": "0"}, "fp32"),  # the last one wins
])
def test_precision(opts, precision):
    assert resolved.precision(opts) == precision


def test_aliases_resolve():
    r = resolved.options({"serialize_dir": "/tmp", "delegate_serialize_token": "t", "gpu_device": "0",
                          "log_level": "silent"})
    assert (r["serialization_dir"], r["model_token"], r["device"], r["serialization"]) == ("/tmp", "t", "0", True)
    assert r["log_level"] == "silent"


def test_rejected_options_raise():
    with pytest.raises(ValueError, match="unknown option 'nope'"):
        resolved.options({"nope": "1"})
    with pytest.raises(ValueError, match="invalid priorities"):
        resolved.options({"inference_priority1": "MIN_LATENCY", "inference_priority2": "MIN_LATENCY"})


@pytest.mark.parametrize("extra", [{}, {"precision_loss_allowed": "1"}, {"is_precision_loss_allowed": "1",
                                                                         "gpu_precision_loss_allowed": "1"},
                                   {"inference_priority1": "MIN_LATENCY"}])
def test_bench_configs_run_their_precision(extra):
    """bench's fp32 column is FP32 whatever precision spelling --opt adds."""
    assert resolved.precision(bench.delegate_options("fp32", extra)) == "fp32"
    assert resolved.precision(bench.delegate_options("fp16", extra)) == "fp16"
