/* DEPTHWISE_CONV_2D of the CPU kernel set (the GPU set's: depthwise_gpu.cl),
 * FP32 accumulation in every precision. Weights [S][KH][KW] float4 over
 * output channels, bias [S] (ops_conv.c upload_depthwise).
 * geom: (kw, kh, stride_x, stride_y); pad_dil: (pad_x, pad_y, dil_x, dil_y).
 * alpha / residual / epi: the fused epilogue (common.cl). */

/* Depthwise with any multiplier m: output channel c reads input channel
 * c / m. Weights [S][KH][KW] float4 over output channels, bias [S]. */
#define DEPTHWISE_CONV2D_MULTIPLIER_PARAMS \
  __global const storage_t* src, __global storage_t* dst, __global const float4* weights, __global const float4* bias, \
  int4 src_shape, int4 dst_shape, int4 geom, int4 pad_dil, int act, __global const float4* alpha, \
  __global const storage_t* residual, int4 epi, int res_slices, int multiplier, int total
#define DEPTHWISE_CONV2D_MULTIPLIER_ARGS \
  src, dst, weights, bias, src_shape, dst_shape, geom, pad_dil, act, alpha, residual, epi, res_slices, multiplier, \
  total
#if GD_SELECTED(depthwise_conv2d_multiplier, 0)
OUTLINED_KERNEL(depthwise_conv2d_multiplier, DEPTHWISE_CONV2D_MULTIPLIER_PARAMS, DEPTHWISE_CONV2D_MULTIPLIER_ARGS) {
  if (gid >= total) return;
  int4 p = split_gid(gid, dst_shape);
  float4 acc = bias[p.z];
  int x0 = p.x * geom.z - pad_dil.x;
  int y0 = p.y * geom.w - pad_dil.y;
  int c0 = p.z * 4;
  int4 ic = min((int4)(c0, c0 + 1, c0 + 2, c0 + 3), (int4)(dst_shape.z - 1)) / multiplier;
  __global const float4* w = weights + p.z * geom.y * geom.x;
  /* Multiplier 1: the tap's four channels are one float4 of the slice (the
   * same values as four scalar loads, in one load). */
  int one = multiplier == 1;
  for (int ky = 0; ky < geom.y; ++ky) {
    int sy = y0 + ky * pad_dil.w;
    if (sy < 0 || sy >= src_shape.y) continue;
    for (int kx = 0; kx < geom.x; ++kx) {
      int sx = x0 + kx * pad_dil.z;
      if (sx < 0 || sx >= src_shape.x) continue;
      float4 v = one ? LOAD4(src, idx4(src_shape, p.w, p.z, sy, sx))
                     : (float4)(LOAD1(src, idx1(src_shape, p.w, sy, sx, ic.x)), LOAD1(src, idx1(src_shape, p.w, sy, sx, ic.y)),
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
#if GD_SELECTED(depthwise_conv2d_x4, 1)
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
#if GD_SELECTED(depthwise_1x1_s1, 2)
DEPTHWISE_KERNEL(depthwise_1x1_s1, 1, 1)
#endif
#if GD_SELECTED(depthwise_3x3_s1, 3)
DEPTHWISE_KERNEL(depthwise_3x3_s1, 3, 1)
#endif
#if GD_SELECTED(depthwise_5x5_s1, 4)
DEPTHWISE_KERNEL(depthwise_5x5_s1, 5, 1)
#endif
#if GD_SELECTED(depthwise_3x3_s2, 5)
DEPTHWISE_KERNEL(depthwise_3x3_s2, 3, 2)
#endif
#if GD_SELECTED(depthwise_5x5_s2, 6)
DEPTHWISE_KERNEL(depthwise_5x5_s2, 5, 2)
#endif
