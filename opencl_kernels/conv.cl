/* CONV_2D and DEPTHWISE_CONV_2D, FP32 accumulation in every precision.
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
#if GD_SELECTED(conv2d_1x1_scaled, 14)
OUTLINED_KERNEL(conv2d_1x1_scaled, CONV_1X1_SCALED_PARAMS, CONV_1X1_SCALED_ARGS) {
  CONV_1X1_SCALED_BODY()
}
#endif
#if GD_SELECTED(conv2d_1x1_scaled_add, 15)
OUTLINED_KERNEL(conv2d_1x1_scaled_add, CONV_1X1_SCALED_ADD_PARAMS, CONV_1X1_SCALED_ADD_ARGS) {
  CONV_1X1_SCALED_BODY(CONV_1X1_ADDEND_PASS)
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

/* The arguments of the two 4-pixel kernels (conv2d_x4, depthwise_conv2d_x4). */
#define X4_PARAMS                                                                                           \
  __global const storage_t* src, __global storage_t* dst, __global const float4* weights,                   \
   __global const float4* bias, int4 src_shape, int4 dst_shape, int4 geom, int4 pad_dil, int act,            \
   __global const float4* alpha, __global const storage_t* residual, int4 epi, int res_slices, int total
#define X4_ARGS src, dst, weights, bias, src_shape, dst_shape, geom, pad_dil, act, alpha, residual, epi, res_slices, total
/* conv2d for outputs of one slice (MediaPipe's 1-channel masks), where a
 * 16-channel block would be mostly padding: 4 horizontally adjacent pixels
 * x 4 channels per work-item, each weight float4 loaded once serving four
 * pixels. Weights in 1-slice
 * blocks [S_out][KH][KW][S_in][4 in][4 out]; `total` counts work-items over
 * (ceil(W/4), H, S_out, B). */
#if GD_SELECTED(conv2d_x4, 6)
OUTLINED_KERNEL(conv2d_x4, X4_PARAMS, X4_ARGS) {
  if (gid >= total) return;
  int4 tiles = (int4)((dst_shape.x + 3) >> 2, dst_shape.y, dst_shape.z, dst_shape.w);
  int4 p = split_gid(gid, tiles);
  int x = p.x * 4;
  int src_slices = SLICES(src_shape);
  float4 b = bias[p.z];
  float4 acc0 = b, acc1 = b, acc2 = b, acc3 = b;
  int x0 = x * geom.z - pad_dil.x;
  int y0 = p.y * geom.w - pad_dil.y;
  int plane = src_shape.y * src_shape.x;
  for (int ky = 0; ky < geom.y; ++ky) {
    int sy = y0 + ky * pad_dil.w;
    if (sy < 0 || sy >= src_shape.y) continue;
    for (int kx = 0; kx < geom.x; ++kx) {
      int sx0 = x0 + kx * pad_dil.z;
      int sx1 = sx0 + geom.z, sx2 = sx1 + geom.z, sx3 = sx2 + geom.z;
      bool v0 = sx0 >= 0 && sx0 < src_shape.x, v1 = sx1 >= 0 && sx1 < src_shape.x;
      bool v2 = sx2 >= 0 && sx2 < src_shape.x, v3 = sx3 >= 0 && sx3 < src_shape.x;
      int row = idx4(src_shape, p.w, 0, sy, 0);
      __global const float4* w = weights + ((p.z * geom.y + ky) * geom.x + kx) * src_slices * 4;
      for (int si = 0; si < src_slices; ++si) {
        int base = row + si * plane;
        float4 i0 = v0 ? LOAD4(src, base + sx0) : (float4)(0.0f);
        float4 i1 = v1 ? LOAD4(src, base + sx1) : (float4)(0.0f);
        float4 i2 = v2 ? LOAD4(src, base + sx2) : (float4)(0.0f);
        float4 i3 = v3 ? LOAD4(src, base + sx3) : (float4)(0.0f);
        X4_MADS
        w += 4;
      }
    }
  }
  X4_STORE
}
#endif

/* conv2d_x4 for a 1x1, stride 1, unpadded conv whose source is multiplied
 * by a per-channel scale of each batch (and, in _add, has a same-shaped
 * addend added after it) where it is loaded: conv2d_1x1_scaled's fusion
 * for outputs of one slice and for the VM on a GPU (select_conv.c); its
 * weights (float4s, as conv2d_x4's) and bias passed as floats. */
/* Pixel J of the 4, scaled (and the addend added), where it lies in the row. */
#define X4_SCALED_PIXEL(J, ADDEND) (x + (J) < src_shape.x ? LOAD4(src, base + (J)) * k ADDEND(J) : (float4)(0.0f))
#define X4_NO_ADDEND(J)
#define X4_ADDEND(J) +LOAD4(addend, base + (J))
#define X4_SCALED_BODY(ADDEND)                                                                                  \
  if (gid >= total) return;                                                                                   \
  int4 p = split_gid(gid, (int4)((dst_shape.x + 3) >> 2, dst_shape.y, dst_shape.z, dst_shape.w));             \
  int x = p.x * 4, src_slices = SLICES(src_shape), plane = src_shape.y * src_shape.x;                         \
  float4 acc0 = vload4(p.z, bias), acc1 = acc0, acc2 = acc0, acc3 = acc0;                                     \
  int base = idx4(src_shape, p.w, 0, p.y, x);                                                                 \
  __global const float4* w = (__global const float4*)weights + p.z * src_slices * 4;                          \
  for (int si = 0; si < src_slices; ++si, base += plane, w += 4) {                                            \
    float4 k = LOAD4(scale, p.w * src_slices + si);                                                           \
    float4 i0 = X4_SCALED_PIXEL(0, ADDEND), i1 = X4_SCALED_PIXEL(1, ADDEND);                                  \
    float4 i2 = X4_SCALED_PIXEL(2, ADDEND), i3 = X4_SCALED_PIXEL(3, ADDEND);                                  \
    X4_MADS                                                                                                   \
  }                                                                                                           \
  X4_STORE
#if GD_SELECTED(conv2d_x4_scaled, 16)
OUTLINED_KERNEL(conv2d_x4_scaled, CONV_1X1_SCALED_PARAMS, CONV_1X1_SCALED_ARGS) {
  X4_SCALED_BODY(X4_NO_ADDEND)
}
#endif
#if GD_SELECTED(conv2d_x4_scaled_add, 17)
OUTLINED_KERNEL(conv2d_x4_scaled_add, CONV_1X1_SCALED_ADD_PARAMS, CONV_1X1_SCALED_ADD_ARGS) {
  X4_SCALED_BODY(X4_ADDEND)
}
#endif

/* Depthwise with any multiplier m: output channel c reads input channel
 * c / m. Weights [S][KH][KW] float4 over output channels, bias [S]. */
#define DEPTHWISE_CONV2D_MULTIPLIER_PARAMS \
  __global const storage_t* src, __global storage_t* dst, __global const float4* weights, __global const float4* bias, \
  int4 src_shape, int4 dst_shape, int4 geom, int4 pad_dil, int act, __global const float4* alpha, \
  __global const storage_t* residual, int4 epi, int res_slices, int multiplier, int total
#define DEPTHWISE_CONV2D_MULTIPLIER_ARGS \
  src, dst, weights, bias, src_shape, dst_shape, geom, pad_dil, act, alpha, residual, epi, res_slices, multiplier, \
  total
#if GD_SELECTED(depthwise_conv2d_multiplier, 7)
OUTLINED_KERNEL(depthwise_conv2d_multiplier, DEPTHWISE_CONV2D_MULTIPLIER_PARAMS, DEPTHWISE_CONV2D_MULTIPLIER_ARGS) {
  if (gid >= total) return;
  int4 p = split_gid(gid, dst_shape);
  float4 acc = bias[p.z];
  int x0 = p.x * geom.z - pad_dil.x;
  int y0 = p.y * geom.w - pad_dil.y;
  int c0 = p.z * 4;
  int4 ic = min((int4)(c0, c0 + 1, c0 + 2, c0 + 3), (int4)(dst_shape.z - 1)) / multiplier;
  __global const float4* w = weights + p.z * geom.y * geom.x;
  for (int ky = 0; ky < geom.y; ++ky) {
    int sy = y0 + ky * pad_dil.w;
    if (sy < 0 || sy >= src_shape.y) continue;
    for (int kx = 0; kx < geom.x; ++kx) {
      int sx = x0 + kx * pad_dil.z;
      if (sx < 0 || sx >= src_shape.x) continue;
      float4 v = (float4)(LOAD1(src, idx1(src_shape, p.w, sy, sx, ic.x)), LOAD1(src, idx1(src_shape, p.w, sy, sx, ic.y)),
                          LOAD1(src, idx1(src_shape, p.w, sy, sx, ic.z)), LOAD1(src, idx1(src_shape, p.w, sy, sx, ic.w)));
      acc = fma(v, w[ky * geom.x + kx], acc);
    }
  }
  int rid = residual_index(gid, p.w, p.z, SLICES(dst_shape), res_slices, dst_shape.x * dst_shape.y);
  acc = epilogue(activate(acc, act), epi, alpha, residual, p.z, rid);
  acc = mask_tail(acc, p.z, dst_shape.z);
  STORE4(acc, dst, gid);
}
#endif

/* depthwise_conv2d (multiplier 1) over 4 horizontally adjacent pixels. */
#if GD_SELECTED(depthwise_conv2d_x4, 8)
OUTLINED_KERNEL(depthwise_conv2d_x4, X4_PARAMS, X4_ARGS) {
  if (gid >= total) return;
  int4 tiles = (int4)((dst_shape.x + 3) >> 2, dst_shape.y, dst_shape.z, dst_shape.w);
  int4 p = split_gid(gid, tiles);
  int x = p.x * 4;
  float4 b = bias[p.z];
  float4 acc0 = b, acc1 = b, acc2 = b, acc3 = b;
  int x0 = x * geom.z - pad_dil.x;
  int y0 = p.y * geom.w - pad_dil.y;
  __global const float4* w = weights + p.z * geom.y * geom.x;
  for (int ky = 0; ky < geom.y; ++ky) {
    int sy = y0 + ky * pad_dil.w;
    if (sy < 0 || sy >= src_shape.y) continue;
    int row = idx4(src_shape, p.w, p.z, sy, 0);
    for (int kx = 0; kx < geom.x; ++kx) {
      int sx0 = x0 + kx * pad_dil.z;
      int sx1 = sx0 + geom.z, sx2 = sx1 + geom.z, sx3 = sx2 + geom.z;
      float4 wk = w[ky * geom.x + kx];
      if (sx0 >= 0 && sx0 < src_shape.x) acc0 = fma(LOAD4(src, row + sx0), wk, acc0);
      if (sx1 >= 0 && sx1 < src_shape.x) acc1 = fma(LOAD4(src, row + sx1), wk, acc1);
      if (sx2 >= 0 && sx2 < src_shape.x) acc2 = fma(LOAD4(src, row + sx2), wk, acc2);
      if (sx3 >= 0 && sx3 < src_shape.x) acc3 = fma(LOAD4(src, row + sx3), wk, acc3);
    }
  }
  X4_STORE
}
#endif

/* Depthwise, multiplier 1, no dilation, a K x K filter and stride S known
 * at compile time (the depthwise_KxK_sS kernels pass constants). A
 * work-item computes 2 * DW_PAIRS horizontally adjacent output pixels of one
 * slice as float8 pairs, so the multiply-adds run 8 lanes wide: at stride
 * 1, pixels x and x+1 read adjacent float4s and one vload8 feeds both.
 * The accumulators are named values (a0..a7), not an array: PoCL left an
 * array in memory, so every multiply-add also loaded and stored its
 * accumulator (2-4x slower, read from the generated assembly). Tiles whose
 * taps are all inside the input take unmasked loads; edge tiles check each
 * load. Work-items run over (ceil(W / T), H, S_slices * B), x-tiles fastest. */
#define DW_PAIRS (DW_TILE / 2) /* 8 pairs: DW_TILE = 16 output pixels per work-item */
/* The unroll pragma below is a hint that clang cannot honour in the 1x1
 * kernel's one-iteration loop; its note would reach every build log. */
#ifdef GD_POCL
#pragma clang diagnostic ignored "-Wpass-failed"
#endif
#ifdef FP16_STORAGE
#define LOAD8(p, i) vload_half8((i), (p))
#else
#define LOAD8(p, i) vload8((i), (p))
#endif
#define DW_EACH_PAIR(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7)

/* The float8 of output pair i at tap column kx: source columns lo and
 * lo + S, zero outside [0, width) when `check`. */
GD_INLINE float8 dw_pair(__global const storage_t* row, int lo, const int S, int width, bool check) {
  if (!check || (lo >= 0 && lo + S < width)) {
    if (S == 1) return LOAD8(row + 4 * lo, 0);
    return (float8)(LOAD4(row, lo), LOAD4(row, lo + S));
  }
  int hi = lo + S;
  bool ok0 = lo >= 0 && lo < width, ok1 = hi >= 0 && hi < width;
  return (float8)(ok0 ? LOAD4(row, ok0 ? lo : 0) : (float4)(0.0f), ok1 ? LOAD4(row, ok1 ? hi : 0) : (float4)(0.0f));
}

ALWAYS_INLINE void depthwise_tiled(const int K, const int S, int gid, __global const storage_t* src,
                                   __global storage_t* dst, __global const float4* weights,
                                   __global const float4* bias, int4 src_shape, int4 dst_shape, int2 pad, int act,
                                   __global const float4* alpha, __global const storage_t* residual, int4 epi,
                                   int res_slices, int total) {
  const int T = DW_TILE;
  if (gid >= total) return;
  int tiles = (dst_shape.x + T - 1) / T;
  int xt = gid % tiles, r = gid / tiles;
  int y = r % dst_shape.y, sb = r / dst_shape.y; /* sb = b * S_slices + s */
  int s = sb % SLICES(dst_shape);
  int x = xt * T;
  float4 b4 = bias[s];
#define DW_INIT(i) float8 a##i = (float8)(b4, b4);
  DW_EACH_PAIR(DW_INIT)
  int x0 = x * S - pad.x, y0 = y * S - pad.y;
  __global const float4* w = weights + s * K * K;
  __global const storage_t* plane = src + (size_t)sb * src_shape.x * src_shape.y * 4;
  bool edge = x0 < 0 || x0 + (T - 1) * S + K - 1 >= src_shape.x;
  if (!edge) {
    /* Loads at constant offsets from one pointer per row. */
    __global const storage_t* base = plane + (size_t)x0 * 4;
    for (int ky = 0; ky < K; ++ky) {
      int sy = y0 + ky;
      if (sy < 0 || sy >= src_shape.y) continue;
      __global const storage_t* row = base + sy * src_shape.x * 4;
#define DW_FMA_IN(i) a##i = fma(dw_pair(row, 2 * (i) * S + kx, S, 0, false), w8, a##i);
#ifdef GD_POCL
/* K is a constant once PoCL has forced this function inline; elsewhere the
 * compiler may keep it a call, where no unroll can be honoured (clang then
 * warns: Oclgrind's build log). */
#pragma unroll
#endif
      for (int kx = 0; kx < K; ++kx) {
        float4 wk = w[ky * K + kx];
        float8 w8 = (float8)(wk, wk);
        DW_EACH_PAIR(DW_FMA_IN)
      }
    }
  } else {
    for (int ky = 0; ky < K; ++ky) {
      int sy = y0 + ky;
      if (sy < 0 || sy >= src_shape.y) continue;
      __global const storage_t* row = plane + sy * src_shape.x * 4;
#define DW_FMA(i) a##i = fma(dw_pair(row, x0 + 2 * (i) * S + kx, S, src_shape.x, true), w8, a##i);
      for (int kx = 0; kx < K; ++kx) {
        float4 wk = w[ky * K + kx];
        float8 w8 = (float8)(wk, wk);
        DW_EACH_PAIR(DW_FMA)
      }
    }
  }
  int o = (sb * dst_shape.y + y) * dst_shape.x + x;
  /* One rolled loop applies the activation: unrolled, its eight inlined
   * copies doubled the kernel's compile time. */
  float8 acc[DW_PAIRS] = {a0, a1, a2, a3, a4, a5, a6, a7};
#pragma unroll 1
  for (int i = 0; i < DW_PAIRS; ++i) acc[i] = activate8(acc[i], act);
  if (epi.x == EPI_NONE && (s + 1) * 4 <= dst_shape.z && x + T <= dst_shape.x) {
    /* Nothing fused, no channel tail, a whole tile: plain stores. */
    for (int i = 0; i < DW_PAIRS; ++i) {
      STORE4(acc[i].lo, dst, o + 2 * i);
      STORE4(acc[i].hi, dst, o + 2 * i + 1);
    }
    return;
  }
  for (int i = 0; i < T && x + i < dst_shape.x; ++i) {
    float4 v = (i & 1) ? acc[i / 2].hi : acc[i / 2].lo;
    int rid = residual_index(o + i, sb / SLICES(dst_shape), s, SLICES(dst_shape), res_slices,
                             dst_shape.x * dst_shape.y);
    STORE4(mask_tail(epilogue(v, epi, alpha, residual, s, rid), s, dst_shape.z), dst, o + i);
  }
}

#define DEPTHWISE_PARAMS                                                                                   \
  __global const storage_t* src, __global storage_t* dst, __global const float4* weights,                    \
   __global const float4* bias, int4 src_shape, int4 dst_shape, int2 pad, int act, __global const float4* alpha, \
   __global const storage_t* residual, int4 epi, int res_slices, int total
#define DEPTHWISE_ARGS src, dst, weights, bias, src_shape, dst_shape, pad, act, alpha, residual, epi, res_slices, total
#define DEPTHWISE_KERNEL(name, K, S)                                                                               \
  OUTLINED_KERNEL(name, DEPTHWISE_PARAMS, DEPTHWISE_ARGS) {                                                     \
    depthwise_tiled(K, S, gid, src, dst, weights, bias, src_shape, dst_shape, pad, act, alpha, residual, epi,     \
                    res_slices, total);                                                                          \
  }
#if GD_SELECTED(depthwise_1x1_s1, 9)
DEPTHWISE_KERNEL(depthwise_1x1_s1, 1, 1)
#endif
#if GD_SELECTED(depthwise_3x3_s1, 10)
DEPTHWISE_KERNEL(depthwise_3x3_s1, 3, 1)
#endif
#if GD_SELECTED(depthwise_5x5_s1, 11)
DEPTHWISE_KERNEL(depthwise_5x5_s1, 5, 1)
#endif
#if GD_SELECTED(depthwise_3x3_s2, 12)
DEPTHWISE_KERNEL(depthwise_3x3_s2, 3, 2)
#endif
#if GD_SELECTED(depthwise_5x5_s2, 13)
DEPTHWISE_KERNEL(depthwise_5x5_s2, 5, 2)
#endif
