"""Two 1x1 CONV_2Ds on one pixel, the first read only by the second (a
squeeze-and-excitation block's excitation), in one launch with the GPU
kernel set (fuse_fc_pair.c, fc_gpu.cl's fc_pair_gpu). Every case runs with
the pass on and off (TFLITE_GPU_FUSE_FC_PAIR=0) against the CPU
interpreter on seeded random data (tests/fusion_hooks.py, whose tolerance
holds: the same products summed in another order, and in FP16 one rounding
fewer, of the hidden row): fused, exactly one launch goes; where the
pattern does not hold, the same kernels launch."""
import numpy as np
import pytest

from fusion_hooks import launches_saved
from tflite_gpu.model_builder import ModelBuilder
from conftest import set_policy


def _excite(b, c, m, n, act1="RELU", act2="NONE", logistic=True, h=5, w=7, plane=(1, 1), k1=1,
            hidden_output=False, seed=0):
    """x [b, h, w, c] -> MEAN over H, W (keep dims) [b, 1, 1, c] (or an
    AVERAGE_POOL to `plane`) -> CONV_2D k1 x k1 to m (act1) -> CONV_2D 1x1
    to n (act2) [-> LOGISTIC] -> output."""
    rng = np.random.default_rng(seed)
    mb = ModelBuilder()

    def const(shape, scale=1.0):
        return mb.add_tensor(shape, data=(rng.standard_normal(shape) * scale).astype(np.float32))

    x = mb.add_input([b, h, w, c])
    ph, pw = plane
    m0 = mb.add_tensor([b, ph, pw, c])
    if plane == (1, 1):
        axes = mb.add_tensor([2], dtype=np.int32, data=np.array([1, 2], np.int32))
        mb.add_op("MEAN", [x, axes], [m0], dict(keep_dims=True))
    else:
        mb.add_op("AVERAGE_POOL_2D", [x], [m0], dict(padding="VALID", stride_w=w // pw, stride_h=h // ph,
                                                      filter_w=w // pw, filter_h=h // ph))
    r = mb.add_tensor([b, ph, pw, m])
    mb.add_op("CONV_2D", [m0, const([m, k1, k1, c], 1 / np.sqrt(c)), const([m])], [r],
              dict(padding="SAME", stride_w=1, stride_h=1, fused_activation=act1))
    z = mb.add_tensor([b, ph, pw, n])
    mb.add_op("CONV_2D", [r, const([n, 1, 1, m], 1 / np.sqrt(m)), const([n])], [z],
              dict(padding="VALID", stride_w=1, stride_h=1, fused_activation=act2))
    out = z
    if logistic:
        out = mb.add_tensor([b, ph, pw, n])
        mb.add_op("LOGISTIC", [z], [out])
    mb.mark_output(out)
    if hidden_output:
        mb.mark_output(r)
    return mb.build(), [rng.standard_normal([b, h, w, c]).astype(np.float32)]


@pytest.mark.parametrize("fp16", [False, True], ids=["fp32", "fp16"])
@pytest.mark.parametrize("b,c,m,n,act1,act2,logistic", [
    (1, 16, 8, 16, "RELU", "NONE", True),   # selfie_segmentation's first block
    (2, 3, 5, 17, "RELU6", "NONE", False),  # odd widths, a batch of 2 (a group each)
    # The hidden row's padded lanes under a LOGISTIC (the second conv's
    # activation; after a RELU it would be an epilogue step of that conv,
    # fuse_epilogue.c, which this kernel does not take).
    (1, 40, 10, 40, "NONE", "NONE", True),
    (1, 1, 1, 1, "RELU", "NONE", True),
    (1, 300, 17, 5, "RELU", "NONE", False),  # more source slices than the group has work-items
])
def test_pixel_pair_is_one_launch(monkeypatch, b, c, m, n, act1, act2, logistic, fp16):
    model, inputs = _excite(b, c, m, n, act1, act2, logistic, seed=c * 10 + m + n)
    # An output a conv writes needs no conversion (output_direct.c) but
    # fc_pair_gpu's does: held off, so that only this pass differs.
    saved = launches_saved(monkeypatch, "TFLITE_GPU_FUSE_FC_PAIR", model, inputs, fp16=fp16,
                           keep_off=("TFLITE_GPU_BHWC_OUTPUT",), kernel_set="gpu")
    assert saved == 1, saved


@pytest.mark.parametrize("case", ["hidden_is_an_output", "two_pixels", "first_is_3x3", "too_wide", "cpu_set"])
def test_pairs_the_kernel_cannot_take_stay_launches(monkeypatch, case):
    kw = dict(hidden_output=case == "hidden_is_an_output", plane=(1, 2) if case == "two_pixels" else (1, 1),
              k1=3 if case == "first_is_3x3" else 1)
    c = 1028 if case == "too_wide" else 8  # 257 source slices: past FCP_MAX_SLICES
    model, inputs = _excite(1, c, 6, 8, h=4, w=6, seed=5, **kw)
    saved = launches_saved(monkeypatch, "TFLITE_GPU_FUSE_FC_PAIR", model, inputs, keep_off=("TFLITE_GPU_BHWC_OUTPUT",),
                           kernel_set="cpu" if case == "cpu_set" else "gpu")
    assert saved == 0, saved


@pytest.mark.parametrize("b,c,m,n", [(1, 16, 8, 16), (2, 300, 17, 5)], ids=["selfie", "wide-batch2"])
def test_pixel_pair_is_one_phase_in_the_vm_on_a_gpu(monkeypatch, b, c, m, n):
    """The VM on a GPU (policy vm_fine=1) runs fc_pair_gpu as a group
    body (test_vm_group_bodies.py): the pair is one phase."""
    set_policy(monkeypatch, vm_fine="1")
    model, inputs = _excite(b, c, m, n, seed=c + m)
    saved = launches_saved(monkeypatch, "TFLITE_GPU_FUSE_FC_PAIR", model, inputs, keep_off=("TFLITE_GPU_BHWC_OUTPUT",),
                           execution="persistent")
    assert saved == 1, saved
