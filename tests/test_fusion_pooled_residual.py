"""A residual ADD whose shortcut is a 2x2 stride-2 MAX_POOL_2D (BlazeBlock
stride-2 blocks) or a 2x RESIZE_BILINEAR (feature pyramids' top-down
path): the convolution reads the pool's or the resize's input through it
(common.cl conv_residual, fuse.c max2_pool_of, up2_resize_of) and the pool
or resize is never launched: in the GPU set (convg_store), the CPU set
(conv.cl's stores) and the VM's fine bodies (conv2d_x4), where it is a
phase fewer.
Every case runs with the fusion on and off
(TFLITE_GPU_FUSE_POOLED_RESIDUAL=0), against the CPU interpreter, on seeded
random data: the fused case must match and save exactly one launch; the
cases the kernel cannot read (VALID pooling of an odd size, a pool with
another reader or an activation, a 3x3 pool, align_corners, a 3x resize)
must launch the same kernels.

Tolerance: FP32 1e-4 relative to the output's scale (reordered float sums
of at most 3 * 3 * 17 terms); FP16 storage 1e-2 relative L2 and 1e-2 of the scale
per element, as check's FP16 tolerance (half rounding of each stored
activation, about 5e-4 relative, through three stored tensors)."""
import numpy as np
import pytest

from fusion_hooks import ALL_MODE_IDS, ALL_MODES, launches_saved, mode_options
from tflite_gpu.model_builder import ModelBuilder


def _block(b, h, w, cin, cout, conv, pool_padding="SAME", act="NONE", prelu=False, pool_act="NONE",
           pool_filter=2, pool_output=False, conv_padding="SAME", slice_begin=0, seed=0):
    """x -> conv path (stride 2) -> ADD(., PAD_c(MAX_POOL(x))) [-> PRELU].
    conv: "dw+1x1" (depthwise then 1x1), "3x3" (one strided conv) or "1x1"
    (a 2x2 stride-2 pool of x feeding a 1x1, so the 1x1 is a GEMM). With
    cout < cin the shortcut is a STRIDED_SLICE of the pool's channels
    slice_begin .. slice_begin + cout instead of a PAD (hand_recrop)."""
    rng = np.random.default_rng(seed)
    mb = ModelBuilder()
    x = mb.add_input([b, h, w, cin])
    if pool_padding == "SAME":
        oh, ow = -(-h // 2), -(-w // 2)
    else:
        oh, ow = (h - pool_filter) // 2 + 1, (w - pool_filter) // 2 + 1
    pooled = mb.add_tensor([b, oh, ow, cin])
    mb.add_op("MAX_POOL_2D", [x], [pooled], dict(padding=pool_padding, stride_w=2, stride_h=2, filter_w=pool_filter,
                                                 filter_h=pool_filter, fused_activation=pool_act))
    shortcut = pooled
    if cout < cin:
        ints = [mb.add_tensor([4], dtype=np.int32, data=np.array(v, np.int32))
                for v in ([0, 0, 0, slice_begin], [b, oh, ow, slice_begin + cout], [1, 1, 1, 1])]
        shortcut = mb.add_tensor([b, oh, ow, cout])
        mb.add_op("STRIDED_SLICE", [pooled] + ints, [shortcut])
    elif cout != cin:
        paddings = mb.add_tensor([4, 2], dtype=np.int32,
                                 data=np.array([[0, 0], [0, 0], [0, 0], [0, cout - cin]], np.int32))
        shortcut = mb.add_tensor([b, oh, ow, cout])
        mb.add_op("PAD", [pooled, paddings], [shortcut])

    def weights(shape):
        return mb.add_tensor(shape, data=rng.standard_normal(shape).astype(np.float32))

    y = mb.add_tensor([b, oh, ow, cout])
    if conv == "3x3":
        mb.add_op("CONV_2D", [x, weights([cout, 3, 3, cin]), weights([cout])], [y],
                  dict(padding=conv_padding, stride_w=2, stride_h=2))
    else:
        src = x
        if conv == "dw+1x1":
            src = mb.add_tensor([b, oh, ow, cin])
            mb.add_op("DEPTHWISE_CONV_2D", [x, weights([1, 3, 3, cin]), weights([cin])], [src],
                      dict(padding=conv_padding, stride_w=2, stride_h=2, depth_multiplier=1))
        else:  # a second pool of x, so the conv is a 1x1 on the pooled plane
            src = mb.add_tensor([b, oh, ow, cin])
            mb.add_op("AVERAGE_POOL_2D", [x], [src], dict(padding=pool_padding, stride_w=2, stride_h=2,
                                                          filter_w=pool_filter, filter_h=pool_filter))
        mb.add_op("CONV_2D", [src, weights([cout, 1, 1, cin]), weights([cout])], [y],
                  dict(padding="VALID", stride_w=1, stride_h=1))
    z = mb.add_tensor([b, oh, ow, cout])
    mb.add_op("ADD", [y, shortcut], [z], dict(fused_activation=act))
    out = z
    if prelu:
        out = mb.add_tensor([b, oh, ow, cout])
        mb.add_op("PRELU", [z, mb.add_tensor([cout], data=rng.uniform(0.05, 0.5, [cout]).astype(np.float32))],
                  [out])
    mb.mark_output(out)
    if pool_output:
        mb.mark_output(pooled)
    inputs = [rng.standard_normal([b, h, w, cin]).astype(np.float32)]
    return mb.build(), inputs


FUSED = [
    # (b, h, w, cin, cout, conv, act, prelu): even sizes, odd W, odd H, both
    # odd (SAME: the last window holds fewer taps), channel PADs of 1 -> 3,
    # 3 -> 5, 5 -> 17, no PAD at 17, a batch of 2, each producer kernel.
    (1, 10, 12, 1, 3, "dw+1x1", "NONE", True),
    (1, 10, 13, 3, 5, "dw+1x1", "RELU", False),
    (1, 9, 8, 5, 17, "3x3", "NONE", True),
    (1, 7, 9, 17, 17, "1x1", "RELU6", False),
    (2, 11, 6, 3, 3, "dw+1x1", "NONE", True),
    (1, 6, 10, 5, 8, "3x3", "RELU", True),
]


def _saved(monkeypatch, model, inputs, mode="gpu", fp16=False):
    return launches_saved(monkeypatch, "TFLITE_GPU_FUSE_POOLED_RESIDUAL", model, inputs, fp16=fp16,
                          **mode_options(monkeypatch, mode))


@pytest.mark.parametrize("mode,fp16", ALL_MODES, ids=ALL_MODE_IDS)
@pytest.mark.parametrize("b,h,w,cin,cout,conv,act,prelu", FUSED)
def test_pooled_residual_is_fused(monkeypatch, b, h, w, cin, cout, conv, act, prelu, mode, fp16):
    model, inputs = _block(b, h, w, cin, cout, conv, act=act, prelu=prelu, seed=h * 100 + w * 10 + cin)
    assert _saved(monkeypatch, model, inputs, mode, fp16) == 1


# (b, h, w, cin, cout, conv, fp16): the shortcut is the pool's first cout
# channels (fuse.c channel_prefix_of); 17 of 40 ends inside a float4,
# whose lanes past 17 the store zeroes.
SLICED = [
    (1, 9, 8, 40, 17, "3x3", False),
    (1, 8, 8, 16, 8, "dw+1x1", False),
    (2, 7, 10, 20, 12, "dw+1x1", True),
]


@pytest.mark.parametrize("mode", ["gpu", "cpu", "persistent-fine"])
@pytest.mark.parametrize("b,h,w,cin,cout,conv,fp16", SLICED)
def test_sliced_pooled_residual_is_fused(monkeypatch, b, h, w, cin, cout, conv, fp16, mode):
    """The slice and the pool are both read through: two launches saved."""
    model, inputs = _block(b, h, w, cin, cout, conv, act="RELU", seed=cin * 10 + cout)
    assert _saved(monkeypatch, model, inputs, mode, fp16 and mode != "persistent-fine") == 2


def test_slice_not_from_channel_0_stays_a_launch(monkeypatch):
    """Channels 4 .. 12 are not at the index the output's slices read: the
    slice, and so the pool it reads, stay launches."""
    model, inputs = _block(1, 8, 8, 16, 8, "dw+1x1", slice_begin=4, seed=3)
    assert _saved(monkeypatch, model, inputs) == 0


@pytest.mark.parametrize("h,w", [(8, 12), (9, 9)])
def test_valid_pool_of_even_size_is_fused(monkeypatch, h, w):
    """VALID pooling reads the same windows as SAME where the size is even;
    an odd size skips the last row / column, which the kernel cannot
    express: that pool stays a launch."""
    # a VALID 3x3 stride-2 depthwise gives the odd size's pool shape
    model, inputs = _block(1, h, w, 5, 7, "dw+1x1", pool_padding="VALID",
                           conv_padding="SAME" if h % 2 == 0 else "VALID", seed=h + w)
    assert _saved(monkeypatch, model, inputs) == (1 if h % 2 == 0 and w % 2 == 0 else 0)


@pytest.mark.parametrize("case", ["pool_output", "pool_relu", "pool_3x3"])
def test_pools_the_kernel_cannot_read_stay_launches(monkeypatch, case):
    kw = dict(pool_output=case == "pool_output", pool_act="RELU" if case == "pool_relu" else "NONE",
              pool_filter=3 if case == "pool_3x3" else 2)
    model, inputs = _block(1, 10, 11, 3, 5, "dw+1x1", seed=7, **kw)
    assert _saved(monkeypatch, model, inputs) == 0


def _upsample_block(b, h, w, cin, cout, conv, half_pixel=False, align_corners=False, factor=2, seed=0):
    """Two inputs: z [b, h, w, cin] and x [b, h/f, w/f, cout];
    ADD(conv(z), RESIZE_BILINEAR(x) to h x w) -> RELU (the top-down step of a
    feature pyramid)."""
    rng = np.random.default_rng(seed)
    mb = ModelBuilder()
    z = mb.add_input([b, h, w, cin])
    x = mb.add_input([b, h // factor, w // factor, cout])
    size = mb.add_tensor([2], dtype=np.int32, data=np.array([h, w], np.int32))
    up = mb.add_tensor([b, h, w, cout])
    mb.add_op("RESIZE_BILINEAR", [x, size], [up], dict(align_corners=align_corners,
                                                        half_pixel_centers=half_pixel))

    def weights(shape):
        return mb.add_tensor(shape, data=rng.standard_normal(shape).astype(np.float32))

    y = mb.add_tensor([b, h, w, cout])
    src = z
    if conv == "dw+1x1":
        src = mb.add_tensor([b, h, w, cin])
        mb.add_op("DEPTHWISE_CONV_2D", [z, weights([1, 3, 3, cin]), weights([cin])], [src],
                  dict(padding="SAME", stride_w=1, stride_h=1, depth_multiplier=1))
    k = 3 if conv == "3x3" else 1
    mb.add_op("CONV_2D", [src, weights([cout, k, k, cin]), weights([cout])], [y],
              dict(padding="SAME", stride_w=1, stride_h=1))
    out = mb.add_tensor([b, h, w, cout])
    mb.add_op("ADD", [y, up], [out], dict(fused_activation="RELU"))
    mb.mark_output(out)
    inputs = [rng.standard_normal([b, h, w, cin]).astype(np.float32),
              rng.standard_normal([b, h // factor, w // factor, cout]).astype(np.float32)]
    return mb.build(), inputs


@pytest.mark.parametrize("mode,fp16", ALL_MODES, ids=ALL_MODE_IDS)
@pytest.mark.parametrize("b,h,w,cin,cout,conv,half_pixel", [
    (1, 6, 10, 3, 1, "1x1", False),
    (2, 8, 6, 5, 17, "3x3", True),
    (1, 12, 14, 17, 5, "dw+1x1", True),
    (1, 4, 4, 8, 3, "1x1", False),
])
def test_upsampled_residual_is_fused(monkeypatch, b, h, w, cin, cout, conv, half_pixel, mode, fp16):
    """EPI_ADD_UP2: the conv reads the resize's W/2 x H/2 input and
    interpolates it itself; the resize is never launched."""
    model, inputs = _upsample_block(b, h, w, cin, cout, conv, half_pixel=half_pixel, seed=h * w + cin)
    assert _saved(monkeypatch, model, inputs, mode, fp16) == 1


@pytest.mark.parametrize("case", ["align_corners", "factor_3"])
def test_resizes_the_kernel_cannot_read_stay_launches(monkeypatch, case):
    model, inputs = _upsample_block(1, 12, 6, 3, 5, "1x1", align_corners=case == "align_corners",
                                    factor=3 if case == "factor_3" else 2, seed=4)
    assert _saved(monkeypatch, model, inputs) == 0


def test_a_split_conv_reads_the_pooled_residual(monkeypatch):
    """A conv the VM splits over its reduction on a GPU (select_conv_split:
    few output tiles, 128 steps or more; TFLITE_GPU_COMPUTE_UNITS=132 sizes
    the grid as an H200's) reads the pooled residual in its sum phase
    (split_k.cl conv2d_x4_sum): the pool is a phase fewer there too."""
    import tflite_gpu
    from tflite_gpu import _capi, interpreters

    monkeypatch.setenv("TFLITE_GPU_COMPUTE_UNITS", "132")
    model, inputs = _block(1, 6, 6, 60, 60, "3x3", act="RELU", seed=5)  # 9 taps x 15 slices = 135 steps
    assert _saved(monkeypatch, model, inputs, "persistent-fine") == 1
    d = tflite_gpu.load_delegate(log_level="silent", execution="persistent")
    it = interpreters.make(model, delegate=d)
    kernels = [k for g in _capi.delegate_groups(d._get_native_delegate_pointer()) for k in g["kernels"]]
    del it
    assert "conv2d_x4_sum" in kernels and "max_pool" not in " ".join(kernels), kernels
