"""Real MediaPipe models through the delegate, against the CPU interpreter.

The models are fetched (sha256-checked) from the pinned mediapipe wheel on
first use; see tflite_gpu.models."""
import pytest

from tflite_gpu import models
from tflite_gpu.check import FP16_RTOL_L2, FP32_RTOL_L2, check_model

# Every MediaPipe model the CPU interpreter can run (the other three need
# MediaPipe's custom ops): all their ops are in the op table, and their fp16
# (and sparse) weights fold into the partition.
FULLY_DELEGATED = ["face_detection_short_range", "face_landmark", "iris_landmark", "hand_recrop",
                   "face_detection_full_range_sparse", "hand_landmark_full", "hand_landmark_lite",
                   "palm_detection_full", "palm_detection_lite", "pose_detection", "pose_landmark_full"]
# FP16 storage on a few, to keep the suite short.
FP16_MODELS = ["face_detection_short_range", "face_landmark", "iris_landmark", "hand_recrop", "pose_detection"]


@pytest.fixture(scope="module")
def model_files():
    return models.fetch_models(FULLY_DELEGATED, progress=False)


@pytest.mark.parametrize("name", FULLY_DELEGATED)
def test_model_fully_delegated_fp32(name, model_files):
    r = check_model(model_files[name], {"log_level": "silent"}, seed=1)
    assert r.cpu_nodes == 0, f"{r.cpu_nodes} nodes left on the CPU"
    assert r.partitions == 1
    for o in r.outputs:
        # Relative L2 <= 1e-4, or <= 2x the CPU's own XNNPACK-vs-builtin
        # disagreement where that is larger (see tflite_gpu.check).
        assert o.passed, f"{o.name}: relative L2 {o.rel_l2:.3g} > {o.tolerance:.3g}, max abs {o.max_abs:.3g}"
        assert o.tolerance == FP32_RTOL_L2 or name == "pose_landmark_full", "only pose_landmark_full is that noisy"


@pytest.mark.parametrize("name", FP16_MODELS)
def test_model_fp16_storage(name, model_files):
    r = check_model(model_files[name], {"log_level": "silent", "is_precision_loss_allowed": 1}, seed=2)
    assert r.device["precision"] == "fp16"
    assert r.cpu_nodes == 0
    for o in r.outputs:
        assert o.rel_l2 <= FP16_RTOL_L2 or o.max_abs <= 1e-7, f"{o.name}: relative L2 {o.rel_l2:.3g}"
