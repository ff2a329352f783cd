"""Real MediaPipe models through the delegate, against the CPU interpreter.

The models are fetched (sha256-checked) from the pinned mediapipe wheel on
first use; see tflite_gpu.models."""
import pytest

from tflite_gpu import models
from tflite_gpu.check import FP16_RTOL_L2, FP32_RTOL_L2, check_model

# Fully delegated since the foundation: every op these four use is in the
# op table, and their fp16 weights fold into the partition.
FULLY_DELEGATED = ["face_detection_short_range", "face_landmark", "iris_landmark", "hand_recrop"]


@pytest.fixture(scope="module")
def model_files():
    return models.fetch_models(FULLY_DELEGATED, progress=False)


@pytest.mark.parametrize("name", FULLY_DELEGATED)
def test_model_fully_delegated_fp32(name, model_files):
    r = check_model(model_files[name], {"log_level": "silent"}, seed=1)
    assert r.cpu_nodes == 0, f"{r.cpu_nodes} nodes left on the CPU"
    assert r.partitions == 1
    for o in r.outputs:
        assert o.rel_l2 <= FP32_RTOL_L2, f"{o.name}: relative L2 {o.rel_l2:.3g}"


@pytest.mark.parametrize("name", FULLY_DELEGATED)
def test_model_fp16_storage(name, model_files):
    r = check_model(model_files[name], {"log_level": "silent", "is_precision_loss_allowed": 1}, seed=2)
    assert r.device["precision"] == "fp16"
    assert r.cpu_nodes == 0
    for o in r.outputs:
        assert o.rel_l2 <= FP16_RTOL_L2, f"{o.name}: relative L2 {o.rel_l2:.3g}"
