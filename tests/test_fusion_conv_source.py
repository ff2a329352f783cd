"""1x1 CONV_2Ds that read their source through the op feeding it
(fuse_conv_source.c):

- a squeeze-and-excitation block's last MUL (x * a per-channel scale
  computed from x): the conv multiplies its source by the scale where it
  loads it, and adds a same-shaped tensor after it where an ADD follows the
  MUL. Every kernel set and execution mode: conv_gpu.cl's
  conv2d_1x1_scaled_gpu / _add_gpu in the GPU set; conv.cl's
  conv2d_1x1_scaled / _add (16-channel blocks) in the CPU set, and
  conv2d_x4_scaled / _add for the VM's fine bodies (persistent-fine:
  policy vm_fine=1, the bodies the VM runs on a GPU), where the fused
  MUL and ADD are phases fewer;
- a 2x RESIZE_BILINEAR (no align_corners): the conv interpolates the
  resize's input (conv2d_1x1_up2_gpu in the GPU set; conv.cl's
  conv2d_1x1_up2 and conv2d_x4_up2).

Every case runs with the fusion on and off (TFLITE_GPU_FUSE_CHANNEL_SCALE=0,
TFLITE_GPU_FUSE_UPSAMPLED_SOURCE=0) against the CPU interpreter on seeded
random data: fused, the results match and exactly the fused op's launch
goes; where the pattern does not hold, the same kernels launch.

Tolerance: FP32 1e-4 of the output's scale (reordered float sums of at most
40 terms after a product); FP16 storage 1e-2 relative L2 and of the scale
(half rounding of the stored activations, about 5e-4 each, through four
stored tensors)."""
import numpy as np
import pytest

from fusion_hooks import ALL_MODE_IDS, ALL_MODES, launches_saved, mode_options
from tflite_gpu.model_builder import ModelBuilder


def _se_block(b, h, w, c, cout, seed=0, scale_first=False, mul_act="NONE", extra_reader=False, proj_k=1,
              const_scale=False, addend=None, add_act="NONE"):
    """x -> DEPTHWISE (RELU) = d; s = LOGISTIC(CONV_1x1(RELU(CONV_1x1(MEAN_hw(d))))) ([B, 1, 1, C]);
    MUL(d, s) -> CONV_2D (proj_k x proj_k) -> output. addend "after" /
    "before": an ADD of a second input r between the MUL and the conv,
    ADD(product, r) / ADD(r, product) (a decoder's attention gate)."""
    rng = np.random.default_rng(seed)
    mb = ModelBuilder()

    def const(shape, lo=None):
        v = rng.standard_normal(shape) if lo is None else rng.uniform(lo, 1.0, shape)
        return mb.add_tensor(shape, data=v.astype(np.float32))

    x = mb.add_input([b, h, w, c])
    d = mb.add_tensor([b, h, w, c])
    mb.add_op("DEPTHWISE_CONV_2D", [x, const([1, 3, 3, c]), const([c])], [d],
              dict(padding="SAME", stride_w=1, stride_h=1, depth_multiplier=1, fused_activation="RELU"))
    if const_scale:
        s = const([1, 1, 1, c], lo=0.1)
    else:
        axes = mb.add_tensor([2], dtype=np.int32, data=np.array([1, 2], np.int32))
        m = mb.add_tensor([b, 1, 1, c])
        mb.add_op("MEAN", [d, axes], [m], dict(keep_dims=True))
        mid = max(1, c // 2)
        r = mb.add_tensor([b, 1, 1, mid])
        mb.add_op("CONV_2D", [m, const([mid, 1, 1, c]), const([mid])], [r],
                  dict(padding="VALID", stride_w=1, stride_h=1, fused_activation="RELU"))
        z = mb.add_tensor([b, 1, 1, c])
        mb.add_op("CONV_2D", [r, const([c, 1, 1, mid]), const([c])], [z], dict(padding="VALID", stride_w=1,
                                                                                stride_h=1))
        s = mb.add_tensor([b, 1, 1, c])
        mb.add_op("LOGISTIC", [z], [s])
    p = mb.add_tensor([b, h, w, c])
    mb.add_op("MUL", [s, d] if scale_first else [d, s], [p], dict(fused_activation=mul_act))
    src = p
    inputs = [rng.standard_normal([b, h, w, c]).astype(np.float32)]
    if addend:
        r = mb.add_input([b, h, w, c])
        inputs.append(rng.standard_normal([b, h, w, c]).astype(np.float32))
        src = mb.add_tensor([b, h, w, c])
        mb.add_op("ADD", [p, r] if addend == "after" else [r, p], [src], dict(fused_activation=add_act))
    y = mb.add_tensor([b, h, w, cout])
    mb.add_op("CONV_2D", [src, const([cout, proj_k, proj_k, c]), const([cout])], [y],
              dict(padding="SAME", stride_w=1, stride_h=1))
    mb.mark_output(y)
    if extra_reader:
        mb.mark_output(src)
    return mb.build(), inputs


# The CPU set in FP16 too: its scaled kernels load half sources.
SCALE_MODES = ALL_MODES + [("cpu", True)]
SCALE_IDS = ALL_MODE_IDS + ["cpu-fp16"]


def _scale_saved(monkeypatch, model, inputs, mode, fp16):
    return launches_saved(monkeypatch, "TFLITE_GPU_FUSE_CHANNEL_SCALE", model, inputs, fp16=fp16,
                          **mode_options(monkeypatch, mode))


@pytest.mark.parametrize("mode,fp16", SCALE_MODES, ids=SCALE_IDS)
@pytest.mark.parametrize("b,h,w,c,cout,scale_first", [
    (1, 9, 7, 3, 5, False),     # 3 channels: the scale's padded lane
    (1, 6, 10, 5, 17, True),    # MUL(scale, x): either operand order
    (2, 5, 7, 17, 8, False),    # a batch of 2: each batch its own scales
    (1, 11, 13, 40, 24, False),  # 10 input slices: several K steps
])
def test_scale_is_fused_into_the_1x1(monkeypatch, b, h, w, c, cout, scale_first, mode, fp16):
    model, inputs = _se_block(b, h, w, c, cout, seed=h * w + c, scale_first=scale_first)
    assert _scale_saved(monkeypatch, model, inputs, mode, fp16) == 1


@pytest.mark.parametrize("mode,fp16", SCALE_MODES, ids=SCALE_IDS)
@pytest.mark.parametrize("b,h,w,c,cout,addend", [
    (1, 9, 7, 3, 5, "after"),
    (2, 6, 10, 17, 8, "before"),   # ADD(r, product), a batch of 2
    (1, 11, 13, 40, 24, "after"),  # several K steps
])
def test_scale_then_add_is_fused_into_the_1x1(monkeypatch, b, h, w, c, cout, addend, mode, fp16):
    """MUL -> ADD -> 1x1 (the _scaled_add kernels): both go."""
    model, inputs = _se_block(b, h, w, c, cout, seed=h * w + c + 1, addend=addend)
    assert _scale_saved(monkeypatch, model, inputs, mode, fp16) == 2


@pytest.mark.parametrize("case,saved_want", [("add_relu", 0), ("sum_is_an_output", 0), ("3x3_projection", 0)])
def test_scale_then_adds_the_conv_cannot_take_stay_launches(monkeypatch, case, saved_want):
    """An ADD with an activation, a sum read back, a 3x3 conv: the MUL's sole
    reader is the ADD, which the conv cannot take, so both stay."""
    model, inputs = _se_block(1, 7, 9, 5, 6, seed=10, addend="after", add_act="RELU" if case == "add_relu" else "NONE",
                              extra_reader=case == "sum_is_an_output", proj_k=3 if case == "3x3_projection" else 1)
    saved = launches_saved(monkeypatch, "TFLITE_GPU_FUSE_CHANNEL_SCALE", model, inputs, kernel_set="gpu")
    assert saved == saved_want, saved


@pytest.mark.parametrize("case", ["mul_relu", "product_is_an_output", "3x3_projection", "constant_scale"])
def test_scales_the_conv_cannot_take_stay_launches(monkeypatch, case):
    model, inputs = _se_block(1, 7, 9, 5, 6, seed=9, mul_act="RELU" if case == "mul_relu" else "NONE",
                              extra_reader=case == "product_is_an_output",
                              proj_k=3 if case == "3x3_projection" else 1, const_scale=case == "constant_scale")
    saved = launches_saved(monkeypatch, "TFLITE_GPU_FUSE_CHANNEL_SCALE", model, inputs, kernel_set="gpu")
    assert saved == 0, saved


def _up_block(b, h, w, c, cout, half_pixel=False, align_corners=False, factor=2, k=1, extra_reader=False, seed=0):
    """x [b, h/f, w/f, c] -> RESIZE_BILINEAR to h x w -> CONV_2D (k x k) ->
    output."""
    rng = np.random.default_rng(seed)
    mb = ModelBuilder()
    x = mb.add_input([b, h // factor, w // factor, c])
    size = mb.add_tensor([2], dtype=np.int32, data=np.array([h, w], np.int32))
    up = mb.add_tensor([b, h, w, c])
    mb.add_op("RESIZE_BILINEAR", [x, size], [up], dict(align_corners=align_corners, half_pixel_centers=half_pixel))
    wt = mb.add_tensor([cout, k, k, c], data=rng.standard_normal([cout, k, k, c]).astype(np.float32))
    bias = mb.add_tensor([cout], data=rng.standard_normal([cout]).astype(np.float32))
    y = mb.add_tensor([b, h, w, cout])
    mb.add_op("CONV_2D", [up, wt, bias], [y], dict(padding="SAME", stride_w=1, stride_h=1, fused_activation="RELU"))
    mb.mark_output(y)
    if extra_reader:
        mb.mark_output(up)
    inputs = [rng.standard_normal([b, h // factor, w // factor, c]).astype(np.float32)]
    return mb.build(), inputs


@pytest.mark.parametrize("mode,fp16", ALL_MODES, ids=ALL_MODE_IDS)
@pytest.mark.parametrize("b,h,w,c,cout,half_pixel", [
    (1, 6, 10, 3, 5, False),
    (2, 8, 4, 5, 17, True),      # a batch of 2
    (1, 2, 2, 17, 3, True),      # a 1 x 1 source
    (1, 12, 14, 40, 24, False),  # several K steps
])
def test_upsampling_is_fused_into_the_1x1(monkeypatch, b, h, w, c, cout, half_pixel, mode, fp16):
    model, inputs = _up_block(b, h, w, c, cout, half_pixel=half_pixel, seed=h * w + c)
    saved = launches_saved(monkeypatch, "TFLITE_GPU_FUSE_UPSAMPLED_SOURCE", model, inputs, fp16=fp16,
                           **mode_options(monkeypatch, mode))
    assert saved == 1, saved


@pytest.mark.parametrize("case", ["align_corners", "factor_3", "3x3_conv", "resize_is_an_output"])
def test_upsamplings_the_conv_cannot_take_stay_launches(monkeypatch, case):
    model, inputs = _up_block(1, 6, 12, 5, 3, align_corners=case == "align_corners",
                              factor=3 if case == "factor_3" else 2, k=3 if case == "3x3_conv" else 1,
                              extra_reader=case == "resize_is_an_output", seed=2)
    saved = launches_saved(monkeypatch, "TFLITE_GPU_FUSE_UPSAMPLED_SOURCE", model, inputs, kernel_set="gpu")
    assert saved == 0, saved
