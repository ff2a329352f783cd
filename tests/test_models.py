"""Real MediaPipe models through the delegate, against the CPU interpreter.

The models are fetched (sha256-checked) from the pinned mediapipe wheel on
first use; see tflite_gpu.models."""
import pathlib

import numpy as np
import pytest

import tflite_gpu
from tflite_gpu import _capi, interpreters, models
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
        # Relative L2 <= 1e-4, or <= NOISE_FACTOR (3) x the CPU's own XNNPACK-vs-builtin
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


def test_pose_landmark_full_fp16_with_guard(model_files):
    """Half storage alone loses its segmentation logits (0.025-0.09 relative
    L2, docs/troubleshooting.md); fp16_guard=on keeps that output's nodes on
    float and every output within the FP16 tolerance."""
    opts = {"log_level": "silent", "is_precision_loss_allowed": 1}
    plain = check_model(model_files["pose_landmark_full"], opts, seed=0)
    seg = next(o for o in plain.outputs if o.name == "Identity_2")
    assert seg.rel_l2 > FP16_RTOL_L2, "half storage alone was expected to lose the segmentation output"
    r = check_model(model_files["pose_landmark_full"], dict(opts, fp16_guard="on"), seed=0)
    assert r.device["precision"] == "fp16"
    for o in r.outputs:
        assert o.rel_l2 <= FP16_RTOL_L2 or o.max_abs <= 1e-7, f"{o.name}: relative L2 {o.rel_l2:.3g}"


# The three models with MediaPipe custom ops: the stock CPU interpreter has
# no kernels for those ops, so check_model compares the delegate in FP32
# with the delegate in FP16 storage (FP16 tolerance) and checks that two
# invokes give identical outputs.
CUSTOM_OP_MODELS = ["face_landmark_with_attention", "selfie_segmentation", "selfie_segmentation_landscape"]


@pytest.fixture(scope="module")
def custom_model_files():
    return models.fetch_models(CUSTOM_OP_MODELS, progress=False)


@pytest.mark.parametrize("name", CUSTOM_OP_MODELS)
def test_custom_op_model_fully_delegated(name, custom_model_files):
    r = check_model(custom_model_files[name], {"log_level": "silent"}, seed=1)
    assert r.reference == "delegate-fp16", "the CPU interpreter was expected to fail on the custom ops"
    assert "unresolved custom op" in r.cpu_error
    assert r.cpu_nodes == 0, f"{r.cpu_nodes} nodes left on the CPU"
    assert r.partitions == 1
    assert r.deterministic
    for o in r.outputs:
        assert np.isfinite(o.rel_l2) and np.isfinite(o.max_abs), f"{o.name}: non-finite outputs"
        if name == "face_landmark_with_attention":
            assert o.rel_l2 <= FP16_RTOL_L2, f"{o.name}: FP32 vs FP16 relative L2 {o.rel_l2:.3g}"
        else:
            # A sigmoid saturated near 0 on random inputs (at most ~2e-3): its
            # relative error is the logits' absolute error, |logit| (up to
            # tens) times FP16's ~1e-3, a few percent that moves with the
            # rounding pattern (5e-3 to 5e-2 between builds whose logits
            # agree with FP32 to 6e-4-8e-4). The logits are held to 1e-2
            # relative below (test_selfie_logits_fp16_agree); the mask to
            # 2^-8 absolute, a few times its largest value.
            assert o.passed or o.max_abs <= 2.0 ** -8, f"{o.name}: relative L2 {o.rel_l2:.3g}, max abs {o.max_abs:.3g}"


def _output_rebound(model_path, out_path):
    """A copy of the model whose graph output is the input of its last op
    (the selfie models' logits before the final LOGISTIC), patched in place."""
    import tflite

    buf = bytearray(pathlib.Path(model_path).read_bytes())
    sg = tflite.Model.GetRootAsModel(buf, 0).Subgraphs(0)
    last = sg.Operators(sg.OperatorsLength() - 1)
    assert sg.OutputsLength() == 1 and last.Outputs(0) == sg.Outputs(0)
    vec = sg._tab.Vector(sg._tab.Offset(8))  # SubGraph.outputs (field 2)
    buf[vec:vec + 4] = int(last.Inputs(0)).to_bytes(4, "little")
    out_path.write_bytes(bytes(buf))
    return out_path


@pytest.mark.parametrize("name", ["selfie_segmentation", "selfie_segmentation_landscape"])
def test_selfie_logits_fp16_agree(name, custom_model_files, tmp_path):
    """Before the sigmoid (the Convolution2DTransposeBias output), FP32 and
    FP16 storage agree within the FP16 tolerance with no absolute floor."""
    path = _output_rebound(custom_model_files[name], tmp_path / f"{name}_logits.tflite")
    r = check_model(path, {"log_level": "silent"}, seed=1)
    assert r.cpu_nodes == 0 and r.partitions == 1 and r.deterministic
    (o,) = r.outputs
    assert o.rel_l2 <= FP16_RTOL_L2, f"logits: FP32 vs FP16 relative L2 {o.rel_l2:.3g}"


# Launches per invoke with each kernel set (docs/how-it-works.md, "Launches
# per invoke"): the fusion passes' effect on real models, pinned so that a
# change that loses a fusion (or gains one) shows here. GPU set: the
# depthwise -> 1x1 pairs (fuse_dw_conv.c), the 1x1 -> depthwise pairs those
# leave (fuse_pw_dw.c, with hand_landmark's MEAN), its four fully connected
# heads in one launch (fuse_fc_heads.c), unary activations (on
# FULLY_CONNECTED too, in both sets: hand_landmark's heads) and residual
# ADDs whose shortcut is hoisted, or read through its max pool (fuse.c);
# inputs only convolutions read kept BHWC; outputs read back without a
# conversion where PHWC4 is BHWC, and outputs behind reshapes and
# concatenations assembled from their parts (executor.c: the detectors'
# heads, iris_landmark's reshaped outputs), and such parts stored as BHWC by
# the convs that make them (output_direct.c); the CPU set has no fused
# depthwise kernel nor BHWC source.
LAUNCHES = {"face_detection_short_range": {"gpu": 21, "cpu": 42},
            "pose_detection": {"gpu": 49, "cpu": 83},
            "iris_landmark": {"gpu": 55, "cpu": 82},
            "hand_landmark_full": {"gpu": 32, "cpu": 53}}


@pytest.mark.parametrize("kernel_set", ["gpu", "cpu"])
@pytest.mark.parametrize("name", list(LAUNCHES))
def test_model_launches(name, kernel_set, model_files):
    d = tflite_gpu.load_delegate(log_level="silent", kernel_set=kernel_set)
    interpreters.make(str(model_files[name]), delegate=d)
    stats = _capi.delegate_stats(d._get_native_delegate_pointer())
    assert stats["cpu_nodes"] == 0
    assert stats["dispatches"] == LAUNCHES[name][kernel_set], stats
