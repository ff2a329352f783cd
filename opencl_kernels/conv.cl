/* CONV_2D of the CPU kernel set (the GPU set's: conv_gpu.cl; DEPTHWISE_CONV_2D:
 * depthwise.cl), FP32 accumulation in every precision.
 *
 * Convolution is register tiled: a work-item computes GEMM_TILE (6) output
 * pixels x 16 output channels (4 slices) in float16 accumulators, so each
 * input value it loads meets 16 weights and each weight row serves 6
 * pixels (see conv2d_1x1 for the register budget).
 *
 * Weights (ops_conv.c, upload_dense_weights_blocked with 4 slices per
 * block): [G][KH][KW][S_in][4 in-lanes][16 out], G = ceil(S_out / 4), zero
 * padded; bias [G * 16]. A work-item covers pixels t*GEMM_TILE.. of the
 * output plane (H*W, row-major), one block g, one batch: work-items run over
 * (tiles, G, B) with tiles fastest, so a work-group shares its weights.
 * geom: (kw, kh, stride_x, stride_y); pad_dil: (pad_x, pad_y, dil_x, dil_y).
 * alpha / residual / epi: the fused epilogue (common.cl). */


/* The register-tiled convolutions come in two block widths: 16 channels
 * (4 slices, float16 accumulators) and 8 channels (2 slices, float8) for
 * outputs of 5-8 channels, where a 16-channel block would be half padding
 * (hand_recrop). Each helper and kernel below is defined once per width by
 * a macro; W is the width (16 or 8), BS its slices (4 or 2). */
#define PARTS_16(M) M(0, s0123) M(1, s4567) M(2, s89ab) M(3, scdef)
#define PARTS_8(M) M(0, s0123) M(1, s4567)
#define RESIDUAL_PART(j, lanes) r.lanes = LOAD4(residual, ro + (j) * plane);
#define STORE_PART(j, lanes) STORE4(acc.lanes, dst, o + (j) * plane);

/* One fused epilogue step (common.cl's epilogue_step) on a whole block:
 * alpha_v holds the block's PReLU alphas (or the QDQ grid in its first
 * lanes), r the residual's float4s.
 *
 * conv_storeW: activation, epilogue, tail mask and store of one pixel's
 * block. A block of full slices (with a residual that has them all, if one
 * is fused) whose steps are PRELU, ADD or QDQ (codes up to EPI_QDQ; other
 * steps go float4 by float4 through common.cl's epilogue) runs them W lanes
 * wide and stores plain float4s: per float4, the epilogue cost as much as
 * the multiply-adds of a 32-channel 1x1 conv. */
#define DEFINE_CONV_STORE(W, BS)                                                                                  \
  ALWAYS_INLINE float##W epilogue_step##W(float##W v, int op, int act, float##W alpha_v, float##W r) {          \
    if (op == EPI_PRELU) return select(v * alpha_v, v, isgreaterequal(v, (float##W)(0.0f)));                  \
    if (op == EPI_ADD) return activate##W(v + r, act);                                                          \
    if (op == EPI_QDQ) return (clamp(round(v / alpha_v.s0) + alpha_v.s1, alpha_v.s2, alpha_v.s3) - alpha_v.s1) * alpha_v.s0; \
    return v;                                                                                                   \
  }                                                                                                             \
  ALWAYS_INLINE void conv_store##W(float##W acc, __global storage_t* dst, int4 dst_shape, int b, int g, int p,   \
                                   int plane, int act, __global const float4* alpha,                            \
                                   __global const storage_t* residual, int4 epi, int res_slices) {              \
    int so = SLICES(dst_shape);                                                                                 \
    acc = activate##W(acc, act);                                                                                \
    int o = (b * so + g * BS) * plane + p;                                                                      \
    if (g * BS + BS <= so && dst_shape.z >= so * 4 && epi.x <= EPI_QDQ && epi.z <= EPI_QDQ &&                   \
        (epi.x != EPI_ADD && epi.z != EPI_ADD || g * BS + BS <= res_slices)) {                                  \
      if (epi.x != EPI_NONE) {                                                                                  \
        float##W alpha_v = (float##W)(0.0f), r = (float##W)(0.0f);                                              \
        if (epi.x == EPI_PRELU || epi.z == EPI_PRELU) alpha_v = vload##W(g, (__global const float*)alpha);     \
        if (epi.x == EPI_QDQ || epi.z == EPI_QDQ) alpha_v.s0123 = alpha[0];                                     \
        if (epi.x == EPI_ADD || epi.z == EPI_ADD) {                                                             \
          int ro = o - b * (so - res_slices) * plane;                                                           \
          PARTS_##W(RESIDUAL_PART)                                                                              \
        }                                                                                                       \
        acc = epilogue_step##W(acc, epi.x, epi.y, alpha_v, r);                                                  \
        acc = epilogue_step##W(acc, epi.z, epi.w, alpha_v, r);                                                  \
      }                                                                                                         \
      PARTS_##W(STORE_PART)                                                                                     \
      return;                                                                                                   \
    }                                                                                                           \
    float a[W];                                                                                                 \
    vstore##W(acc, 0, a);                                                                                       \
    for (int j = 0; j < BS; ++j, o += plane) {                                                                  \
      int s = g * BS + j;                                                                                       \
      if (s >= so) return;                                                                                      \
      float4 r = conv_residual(residual, epi, dst_shape, b, s, p, res_slices);                                  \
      float4 v = epilogue_r(vload4(j, a), epi, alpha, r, s);                                                    \
      STORE4(mask_tail(v, s, dst_shape.z), dst, o);                                                             \
    }                                                                                                           \
  }
DEFINE_CONV_STORE(16, 4)
DEFINE_CONV_STORE(8, 2)

/* The micro-kernel is the classic AVX2 shape: GEMM_TILE = 6 pixels x 16
 * channels in 12 registers, per input channel one weight row (2 registers)
 * and 6 scalar loads broadcast to all lanes, so nothing else competes for
 * the 16 ymm registers. The accumulators are named values: PoCL kept an
 * array of them in memory. On PoCL this ran 110-135 GFLOP/s on the
 * MediaPipe 1x1 shapes against 55-105 for 8 pixels held in an array.
 * LANES input channels of each slice are read: 4, or 3 for a 3-channel
 * source (the first layers), which skips the zero lane's multiply-adds. */
#define GEMM_EACH(M) M(0) M(1) M(2) M(3) M(4) M(5)
/* The stores run in a loop that is kept rolled: the store helper, with its
 * inlined activations (tanh and sigmoid 16 lanes wide) and epilogue, is
 * large, and six unrolled copies made LLVM's compile of one kernel 1-2 s. */
#define GEMM_STORES(W)                                                                                       \
  float##W acc[GEMM_TILE] = {a0, a1, a2, a3, a4, a5};                                                        \
  _Pragma("unroll 1") for (int i = 0; i < GEMM_TILE && p0 + i < plane; ++i)                                  \
      STORE_FN(acc[i], dst, dst_shape, b, g, p0 + i, plane, act, alpha, residual, epi, res_slices);

/* Work-item layout shared by both kernels: pixels p0.. of the output plane
 * (H*W, row-major), one block g, one batch; work-items run over (tiles, G,
 * B) with tiles fastest, so a work-group shares its weights. */
#define GEMM_PROLOGUE(W, BS)                                  \
  if (gid >= total) return;                                   \
  int plane = dst_shape.x * dst_shape.y;                      \
  int tiles = (plane + GEMM_TILE - 1) / GEMM_TILE;            \
  int groups = (SLICES(dst_shape) + BS - 1) / BS;             \
  int t = gid % tiles, r = gid / tiles;                       \
  int g = r % groups, b = r / groups;                         \
  int src_slices = SLICES(src_shape);                         \
  int p0 = t * GEMM_TILE;                                     \
  float##W bv = vload##W(g, bias);

/* How a pixel's value for input lane J reaches the multiply-adds. FP32: a
 * scalar load that the compiler turns into a broadcast from memory. FP16:
 * vload_half of one value is a slow call on PoCL, so each pixel's half4 is
 * converted once per slice (GEMM_PIXEL) into a private scratch row that
 * the lanes are broadcast from (1.4x faster than broadcasting from the
 * float4 registers). _EDGE: pixels whose tap lies outside the input read 0. */
#ifdef FP16_STORAGE
#define GEMM_SCRATCH float px[4 * GEMM_TILE];
#define GEMM_PIXEL(i) vstore4(LOAD4(s, q##i >> 2), i, px);
#define GEMM_PIXEL_EDGE(i) vstore4(ok##i ? LOAD4(s, q##i >> 2) : (float4)(0.0f), i, px);
#define GEMM_VALUE(i, J) px[4 * i + J]
#define GEMM_VALUE_EDGE(i, J) px[4 * i + J]
#else
#define GEMM_SCRATCH
#define GEMM_PIXEL(i)
#define GEMM_PIXEL_EDGE(i)
#define GEMM_VALUE(i, J) LOAD1(s, q##i + J)
#define GEMM_VALUE_EDGE(i, J) (ok##i ? LOAD1(s, q##i + J) : 0.0f)
#endif

/* Input lane J of one source slice: a weight row and a multiply-add per
 * pixel. */
#define GEMM_LANE(W, J, VALUE, K)                    \
  {                                                  \
    float##W wj = vload##W(J, w) * (K);              \
    a0 = fma((float##W)(VALUE(0, J)), wj, a0);       \
    a1 = fma((float##W)(VALUE(1, J)), wj, a1);       \
    a2 = fma((float##W)(VALUE(2, J)), wj, a2);       \
    a3 = fma((float##W)(VALUE(3, J)), wj, a3);       \
    a4 = fma((float##W)(VALUE(4, J)), wj, a4);       \
    a5 = fma((float##W)(VALUE(5, J)), wj, a5);       \
  }

/* One source slice: its LANES (4, or 3) channels, each lane's weight row
 * times lane K of a float4 (ONE4 but in conv2d_1x1_scaled: the compiler
 * folds the product by 1). */
#define ONE4 ((float4)(1.0f))
#define GEMM_SLICE_K(W, LANES, PIXEL, VALUE, K) \
  GEMM_SCRATCH                                  \
  GEMM_EACH(PIXEL)                              \
  GEMM_LANE(W, 0, VALUE, (K).x)                 \
  GEMM_LANE(W, 1, VALUE, (K).y)                 \
  GEMM_LANE(W, 2, VALUE, (K).z)                 \
  if (LANES == 4) GEMM_LANE(W, 3, VALUE, (K).w) \
  w += 4 * W;
#define GEMM_SLICE(W, LANES, PIXEL, VALUE) GEMM_SLICE_K(W, LANES, PIXEL, VALUE, ONE4)

/* 1x1, stride 1, no padding: a GEMM of the pixel plane (P x C_in) by the
 * weights (C_in x C_out); pixel p reads input pixel p. */
#define CONV_1X1_PARAMS                                                                                    \
  __global const storage_t* src, __global storage_t* dst, __global const float* weights,                     \
   __global const float* bias, int4 src_shape, int4 dst_shape, int act, __global const float4* alpha,         \
   __global const storage_t* residual, int4 epi, int res_slices, int total
#define CONV_1X1_ARGS src, dst, weights, bias, src_shape, dst_shape, act, alpha, residual, epi, res_slices, total
#define DEFINE_CONV_1X1(NAME, W, BS)                                                                              \
  OUTLINED_KERNEL(NAME, CONV_1X1_PARAMS, CONV_1X1_ARGS) {                                                       \
    GEMM_PROLOGUE(W, BS)                                                                                        \
    /* Scalar offsets of the tile's pixels; the tail recomputes the last pixel and drops it. */                 \
    GEMM_EACH(GEMM_INIT_##W)                                                                                    \
    __global const storage_t* s = src + (size_t)b * src_slices * plane * 4;                                     \
    __global const float* w = weights + (size_t)g * src_slices * 4 * W;                                         \
    for (int si = 0; si < src_slices; ++si) {                                                                   \
      GEMM_SLICE(W, 4, GEMM_PIXEL, GEMM_VALUE)                                                                        \
      s += plane * 4;                                                                                           \
    }                                                                                                           \
    GEMM_STORES(W)                                                                                              \
  }
#define GEMM_INIT_16(i) float16 a##i = bv; int q##i = 4 * min(p0 + (i), plane - 1);
#define GEMM_INIT_8(i) float8 a##i = bv; int q##i = 4 * min(p0 + (i), plane - 1);
#define STORE_FN conv_store16
#if GD_SELECTED(conv2d_1x1, 0)
DEFINE_CONV_1X1(conv2d_1x1, 16, 4)
#endif
#undef STORE_FN
#define STORE_FN conv_store8
#if GD_SELECTED(conv2d_1x1_b8, 1)
DEFINE_CONV_1X1(conv2d_1x1_b8, 8, 2)
#endif
#undef STORE_FN

/* conv2d_1x1 whose source is multiplied by a per-channel scale of each
 * batch (scale: [B, 1, 1, C_in] PHWC4, float4 b * S_in + si) and, in
 * _add, has a same-shaped addend added after it (as src): the MUL (and
 * ADD) before a squeeze-and-excitation block's projection, fused
 * (fuse_conv_source.c; conv_gpu.cl's _scaled_gpu kernels are the GPU
 * set's). The scale multiplies each slice's weight rows, not every pixel:
 * sum_c (x_c s_c) w_c = sum_c x_c (s_c w_c); the addend is a second pass
 * over the same rows, unscaled. 16-channel blocks only. */
#define CONV_1X1_SCALED_PARAMS                                                                              \
  __global const storage_t* src, __global storage_t* dst, __global const float* weights,                     \
   __global const float* bias, int4 src_shape, int4 dst_shape, __global const storage_t* scale, int act,      \
   __global const float4* alpha, __global const storage_t* residual, int4 epi, int res_slices, int total
#define CONV_1X1_SCALED_ARGS \
  src, dst, weights, bias, src_shape, dst_shape, scale, act, alpha, residual, epi, res_slices, total
#define CONV_1X1_SCALED_ADD_PARAMS                                                                          \
  __global const storage_t* src, __global storage_t* dst, __global const float* weights,                     \
   __global const float* bias, int4 src_shape, int4 dst_shape, __global const storage_t* scale,               \
   __global const storage_t* addend, int act, __global const float4* alpha, __global const storage_t* residual, \
   int4 epi, int res_slices, int total
#define CONV_1X1_SCALED_ADD_ARGS \
  src, dst, weights, bias, src_shape, dst_shape, scale, addend, act, alpha, residual, epi, res_slices, total
#define CONV_1X1_SCALED_BODY(ADDEND_PASS)                                                                     \
  GEMM_PROLOGUE(16, 4)                                                                                        \
  GEMM_EACH(GEMM_INIT_16)                                                                                     \
  size_t at = (size_t)b * src_slices * plane * 4;                                                             \
  __global const float* w = weights + (size_t)g * src_slices * 4 * 16;                                        \
  for (int si = 0; si < src_slices; ++si, at += (size_t)plane * 4) {                                          \
    __global const float* rows = w;                                                                           \
    float4 k = LOAD4(scale, b * src_slices + si);                                                             \
    {                                                                                                         \
      __global const storage_t* s = src + at;                                                                 \
      GEMM_SLICE_K(16, 4, GEMM_PIXEL, GEMM_VALUE, k)                                                          \
    }                                                                                                         \
    ADDEND_PASS                                                                                               \
  }                                                                                                           \
  GEMM_STORES(16)
#define CONV_1X1_ADDEND_PASS \
  { __global const storage_t* s = addend + at; w = rows; GEMM_SLICE(16, 4, GEMM_PIXEL, GEMM_VALUE) }
#define STORE_FN conv_store16
#if GD_SELECTED(conv2d_1x1_scaled, 7)
OUTLINED_KERNEL(conv2d_1x1_scaled, CONV_1X1_SCALED_PARAMS, CONV_1X1_SCALED_ARGS) {
  CONV_1X1_SCALED_BODY()
}
#endif
#if GD_SELECTED(conv2d_1x1_scaled_add, 8)
OUTLINED_KERNEL(conv2d_1x1_scaled_add, CONV_1X1_SCALED_ADD_PARAMS, CONV_1X1_SCALED_ADD_ARGS) {
  CONV_1X1_SCALED_BODY(CONV_1X1_ADDEND_PASS)
}
#endif
/* conv2d_1x1 whose source is a 2x bilinear upsampling of src (src_shape is
 * the W/2 x H/2 source's): the RESIZE_BILINEAR before the 1x1, fused
 * (fuse_conv_source.c; conv_gpu.cl's conv2d_1x1_up2_gpu in the GPU set).
 * Each pixel's taps and weights (common.cl up2_taps) are found once, before
 * the slice loop; per slice its four float4s are mixed into a private row.
 * Found per slice, they made this kernel 6-10x the time of the resize and
 * the 1x1 it replaces on PoCL (palm_detection_full, pose_detection). */
#define CONV_1X1_UP2_PARAMS                                                                                 \
  __global const storage_t* src, __global storage_t* dst, __global const float* weights,                     \
   __global const float* bias, int4 src_shape, int4 dst_shape, int src_code, int act,                        \
   __global const float4* alpha, __global const storage_t* residual, int4 epi, int res_slices, int total
#define CONV_1X1_UP2_ARGS \
  src, dst, weights, bias, src_shape, dst_shape, src_code, act, alpha, residual, epi, res_slices, total
#define UP2_INIT(i)                                                                          \
  float16 a##i = bv;                                                                         \
  float4 k##i;                                                                               \
  int4 o##i = up2_taps(src_code, dst_shape, min(p0 + (i), plane - 1) % dst_shape.x,          \
                       min(p0 + (i), plane - 1) / dst_shape.x, &k##i);
#define UP2_PIXEL(i) vstore4(up2_mix(src, base, o##i, k##i), i, px);
#define UP2_VALUE(i, J) px[4 * (i) + (J)]
#if GD_SELECTED(conv2d_1x1_up2, 11)
OUTLINED_KERNEL(conv2d_1x1_up2, CONV_1X1_UP2_PARAMS, CONV_1X1_UP2_ARGS) {
  GEMM_PROLOGUE(16, 4)
  GEMM_EACH(UP2_INIT)
  __global const float* w = weights + (size_t)g * src_slices * 4 * 16;
  int src_plane = (dst_shape.x / 2) * (dst_shape.y / 2);
  for (int si = 0, base = b * src_slices * src_plane; si < src_slices; ++si, base += src_plane) {
    float px[4 * GEMM_TILE];
    GEMM_EACH(UP2_PIXEL)
    GEMM_LANE(16, 0, UP2_VALUE, 1.0f)
    GEMM_LANE(16, 1, UP2_VALUE, 1.0f)
    GEMM_LANE(16, 2, UP2_VALUE, 1.0f)
    GEMM_LANE(16, 3, UP2_VALUE, 1.0f)
    w += 4 * 16;
  }
  GEMM_STORES(16)
}
#endif
#undef STORE_FN

/* Any filter, stride, dilation and padding: the same micro-kernel per
 * filter tap. Each pixel's source offset is computed once per tap and
 * reused over the input slices; tiles whose every tap is inside the input
 * (most of them) skip the per-pixel bounds checks. */
#define TILED_ORIGIN(i)                                                                       \
  int x##i, y##i;                                                                             \
  {                                                                                           \
    int p = min(p0 + (i), plane - 1);                                                         \
    x##i = (p % dst_shape.x) * geom.z - pad_dil.x;                                            \
    y##i = (p / dst_shape.x) * geom.w - pad_dil.y;                                            \
  }                                                                                           \
  inner = inner && x##i >= 0 && x##i + (geom.x - 1) * pad_dil.z < src_shape.x && y##i >= 0 && \
          y##i + (geom.y - 1) * pad_dil.w < src_shape.y;
#define TILED_INNER_OFFSET(i) int q##i = 4 * ((y##i + ky * pad_dil.w) * src_shape.x + x##i + kx * pad_dil.z);
#define TILED_EDGE_OFFSET(i)                                                         \
  int q##i;                                                                          \
  bool ok##i;                                                                        \
  {                                                                                  \
    int sy = y##i + ky * pad_dil.w, sx = x##i + kx * pad_dil.z;                      \
    ok##i = sy >= 0 && sy < src_shape.y && sx >= 0 && sx < src_shape.x;             \
    q##i = ok##i ? 4 * (sy * src_shape.x + sx) : 0;                                  \
  }
#define TILED_ACC_16(i) float16 a##i = bv;
#define TILED_ACC_8(i) float8 a##i = bv;
#define CONV_TILED_PARAMS                                                                                  \
  __global const storage_t* src, __global storage_t* dst, __global const float* weights,                     \
   __global const float* bias, int4 src_shape, int4 dst_shape, int4 geom, int4 pad_dil, int act,              \
   __global const float4* alpha, __global const storage_t* residual, int4 epi, int res_slices, int total
#define CONV_TILED_ARGS \
  src, dst, weights, bias, src_shape, dst_shape, geom, pad_dil, act, alpha, residual, epi, res_slices, total
#define DEFINE_CONV_TILED(NAME, W, BS, LANES)                                                                   \
  OUTLINED_KERNEL(NAME, CONV_TILED_PARAMS, CONV_TILED_ARGS) {                                                   \
    GEMM_PROLOGUE(W, BS)                                                                                        \
    int splane = src_shape.x * src_shape.y;                                                                     \
    bool inner = true;                                                                                          \
    GEMM_EACH(TILED_ORIGIN)                                                                                     \
    GEMM_EACH(TILED_ACC_##W)                                                                                    \
    __global const storage_t* sb = src + (size_t)b * src_slices * splane * 4;                                   \
    __global const float* w = weights + (size_t)g * geom.x * geom.y * src_slices * 4 * W;                       \
    for (int ky = 0; ky < geom.y; ++ky) {                                                                       \
      for (int kx = 0; kx < geom.x; ++kx) {                                                                     \
        __global const storage_t* s = sb;                                                                       \
        if (inner) {                                                                                            \
          GEMM_EACH(TILED_INNER_OFFSET)                                                                         \
          for (int si = 0; si < src_slices; ++si) {                                                             \
            GEMM_SLICE(W, LANES, GEMM_PIXEL, GEMM_VALUE)                                                              \
            s += splane * 4;                                                                                    \
          }                                                                                                     \
          continue;                                                                                             \
        }                                                                                                       \
        GEMM_EACH(TILED_EDGE_OFFSET)                                                                            \
        for (int si = 0; si < src_slices; ++si) {                                                               \
          GEMM_SLICE(W, LANES, GEMM_PIXEL_EDGE, GEMM_VALUE_EDGE)                                                          \
          s += splane * 4;                                                                                      \
        }                                                                                                       \
      }                                                                                                         \
    }                                                                                                           \
    GEMM_STORES(W)                                                                                              \
  }
#define STORE_FN conv_store16
#if GD_SELECTED(conv2d_tiled, 2)
DEFINE_CONV_TILED(conv2d_tiled, 16, 4, 4)
#endif
#if GD_SELECTED(conv2d_tiled_c3, 3)
DEFINE_CONV_TILED(conv2d_tiled_c3, 16, 4, 3)
#endif
#undef STORE_FN
#define STORE_FN conv_store8
#if GD_SELECTED(conv2d_tiled_b8, 4)
DEFINE_CONV_TILED(conv2d_tiled_b8, 8, 2, 4)
#endif
#if GD_SELECTED(conv2d_tiled_b8_c3, 5)
DEFINE_CONV_TILED(conv2d_tiled_b8_c3, 8, 2, 3)
#endif
#undef STORE_FN

/* conv2d for outputs of one slice (MediaPipe's 1-channel masks), where a
 * 16-channel block would be mostly padding: 4 horizontally adjacent pixels
 * x 4 channels per work-item, each weight float4 loaded once serving four
 * pixels. Weights in 1-slice
 * blocks [S_out][KH][KW][S_in][4 in][4 out]; `total` counts work-items over
 * (ceil(W/4), H, S_out, B). SETUP runs per input slice si; SRC(at) is the
 * source float4 at `at`. */
#define X4_BODY(SETUP, SRC)                                                                                   \
  if (gid >= total) return;                                                                                   \
  int4 tiles = (int4)((dst_shape.x + 3) >> 2, dst_shape.y, dst_shape.z, dst_shape.w);                         \
  int4 p = split_gid(gid, tiles);                                                                             \
  int x = p.x * 4;                                                                                            \
  int src_slices = SLICES(src_shape);                                                                         \
  float4 b = bias[p.z];                                                                                       \
  float4 acc0 = b, acc1 = b, acc2 = b, acc3 = b;                                                              \
  int x0 = x * geom.z - pad_dil.x;                                                                            \
  int y0 = p.y * geom.w - pad_dil.y;                                                                          \
  int plane = src_shape.y * src_shape.x;                                                                      \
  for (int ky = 0; ky < geom.y; ++ky) {                                                                       \
    int sy = y0 + ky * pad_dil.w;                                                                             \
    if (sy < 0 || sy >= src_shape.y) continue;                                                                \
    for (int kx = 0; kx < geom.x; ++kx) {                                                                     \
      int sx0 = x0 + kx * pad_dil.z;                                                                          \
      int sx1 = sx0 + geom.z, sx2 = sx1 + geom.z, sx3 = sx2 + geom.z;                                         \
      bool v0 = sx0 >= 0 && sx0 < src_shape.x, v1 = sx1 >= 0 && sx1 < src_shape.x;                            \
      bool v2 = sx2 >= 0 && sx2 < src_shape.x, v3 = sx3 >= 0 && sx3 < src_shape.x;                            \
      int row = idx4(src_shape, p.w, 0, sy, 0);                                                               \
      __global const float4* w = weights + ((p.z * geom.y + ky) * geom.x + kx) * src_slices * 4;              \
      for (int si = 0; si < src_slices; ++si) {                                                               \
        int base = row + si * plane;                                                                          \
        SETUP                                                                                                 \
        float4 i0 = v0 ? SRC(base + sx0) : (float4)(0.0f);                                                    \
        float4 i1 = v1 ? SRC(base + sx1) : (float4)(0.0f);                                                    \
        float4 i2 = v2 ? SRC(base + sx2) : (float4)(0.0f);                                                    \
        float4 i3 = v3 ? SRC(base + sx3) : (float4)(0.0f);                                                    \
        X4_MADS                                                                                               \
        w += 4;                                                                                               \
      }                                                                                                       \
    }                                                                                                         \
  }                                                                                                           \
  X4_STORE
#define X4_LOAD(at) LOAD4(src, at)
#if GD_SELECTED(conv2d_x4, 6)
OUTLINED_KERNEL(conv2d_x4, X4_PARAMS, X4_ARGS) {
  X4_BODY(, X4_LOAD)
}
#endif

/* conv2d_x4 reading its source through a PRELU of per-channel alpha
 * (src_alpha, a float4 per input slice) that only this conv reads
 * (fuse_prelu_source.c), for the VM's fine bodies on a GPU: the PRELU is
 * no phase of its own. A padded tap stays 0 (prelu(0) = 0). */
#define X4_PRELU_PARAMS X4_PARAMS, __global const float4* src_alpha
#define X4_PRELU_ARGS X4_ARGS, src_alpha
#define X4_ALPHA_OF_SLICE float4 k = src_alpha[si];
#define X4_PRELU(at) prelu_src(LOAD4(src, at), k)
GD_INLINE float4 prelu_src(float4 v, float4 k) { return select(v * k, v, isgreaterequal(v, (float4)(0.0f))); }
#if GD_SELECTED(conv2d_x4_prelu, 14)
OUTLINED_KERNEL(conv2d_x4_prelu, X4_PRELU_PARAMS, X4_PRELU_ARGS) {
  X4_BODY(X4_ALPHA_OF_SLICE, X4_PRELU)
}
#endif

/* conv2d_x4 for a 1x1, stride 1, unpadded conv that reads its source
 * through the op before it (fuse_conv_source.c), for outputs of one slice
 * and for the VM on a GPU (select_conv.c): _scaled multiplies it by a
 * per-channel scale of each batch (and _scaled_add then adds a same-shaped
 * addend), _up2 interpolates a 2x bilinear upsampling of it (src_shape is
 * the W/2 x H/2 source's; common.cl conv_up2). Weights float4s as
 * conv2d_x4's, weights and bias passed as floats. SETUP runs per input
 * slice si; PIXEL(J) is pixel x + J's input float4. */
#define X4_1X1_BODY(SETUP, PIXEL)                                                                            \
  if (gid >= total) return;                                                                                   \
  int4 p = split_gid(gid, (int4)((dst_shape.x + 3) >> 2, dst_shape.y, dst_shape.z, dst_shape.w));             \
  int x = p.x * 4, src_slices = SLICES(src_shape), plane = src_shape.y * src_shape.x;                         \
  float4 acc0 = vload4(p.z, bias), acc1 = acc0, acc2 = acc0, acc3 = acc0;                                     \
  int base = idx4(src_shape, p.w, 0, min(p.y, src_shape.y - 1), x);                                           \
  __global const float4* w = (__global const float4*)weights + p.z * src_slices * 4;                          \
  for (int si = 0; si < src_slices; ++si, base += plane, w += 4) {                                            \
    SETUP                                                                                                     \
    float4 i0 = PIXEL(0), i1 = PIXEL(1), i2 = PIXEL(2), i3 = PIXEL(3);                                        \
    X4_MADS                                                                                                   \
  }                                                                                                           \
  X4_STORE
#define X4_SCALE_OF_SLICE float4 k = LOAD4(scale, p.w * src_slices + si);
#define X4_IN_ROW(J) (x + (J) < dst_shape.x)
#define X4_SCALED(J) (X4_IN_ROW(J) ? LOAD4(src, base + (J)) * k : (float4)(0.0f))
#define X4_SCALED_ADD(J) (X4_IN_ROW(J) ? LOAD4(src, base + (J)) * k + LOAD4(addend, base + (J)) : (float4)(0.0f))
#define X4_UP2(J) \
  (X4_IN_ROW(J) ? conv_up2(src, src_code, dst_shape, p.w * src_slices + si, x + (J), p.y) : (float4)(0.0f))
#if GD_SELECTED(conv2d_x4_scaled, 9)
OUTLINED_KERNEL(conv2d_x4_scaled, CONV_1X1_SCALED_PARAMS, CONV_1X1_SCALED_ARGS) {
  X4_1X1_BODY(X4_SCALE_OF_SLICE, X4_SCALED)
}
#endif
#if GD_SELECTED(conv2d_x4_scaled_add, 10)
OUTLINED_KERNEL(conv2d_x4_scaled_add, CONV_1X1_SCALED_ADD_PARAMS, CONV_1X1_SCALED_ADD_ARGS) {
  X4_1X1_BODY(X4_SCALE_OF_SLICE, X4_SCALED_ADD)
}
#endif
#if GD_SELECTED(conv2d_x4_up2, 12)
OUTLINED_KERNEL(conv2d_x4_up2, CONV_1X1_UP2_PARAMS, CONV_1X1_UP2_ARGS) {
  X4_1X1_BODY(, X4_UP2)
}
#endif

/* A depthwise (multiplier 1) fused into the 1x1 that alone reads it
 * (fuse_dw_conv.c), for the VM on a GPU: conv2d_x4 whose source float4s
 * are the depthwise's outputs, computed where it would load them
 * (common.cl dw_value), so the pair is one phase with no grid barrier and
 * no tensor between. Each depthwise value is computed once per output
 * slice: K * K multiply-adds per input float4 against the 1x1's 16.
 * Arguments as conv_gpu.cl's dw_conv2d_1x1_gpu: src and src_shape are the
 * depthwise's input, dw_weights [S][KH][KW] and dw_bias [S] float4s, geom
 * and pad_dil its geometry, dw_act its activation. */
#define CONV_1X1_DW_PARAMS                                                                                         \
  __global const storage_t* src, __global storage_t* dst, __global const float* weights, __global const float* bias, \
   int4 src_shape, int4 dst_shape, __global const float4* dw_weights, __global const float4* dw_bias, int4 geom,    \
   int4 pad_dil, int dw_act, int act, __global const float4* alpha, __global const storage_t* residual, int4 epi,    \
   int res_slices, int total
#define CONV_1X1_DW_ARGS                                                                                              \
  src, dst, weights, bias, src_shape, dst_shape, dw_weights, dw_bias, geom, pad_dil, dw_act, act, alpha, residual, epi, \
      res_slices, total
#define X4_DW(J)                                                                                                  \
  (X4_IN_ROW(J) ? dw_value(src, src_shape, dw_weights, dw_bias, geom, pad_dil, dw_act, p.w, si,                 \
                           (x + (J)) * geom.z - pad_dil.x, p.y * geom.w - pad_dil.y)                            \
                : (float4)(0.0f))
#if GD_SELECTED(conv2d_x4_dw, 13)
OUTLINED_KERNEL(conv2d_x4_dw, CONV_1X1_DW_PARAMS, CONV_1X1_DW_ARGS) {
  X4_1X1_BODY(, X4_DW)
}
#endif
