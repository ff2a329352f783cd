/* DEPTHWISE_CONV_2D (depth multiplier 1) shaped for GPUs, alone and with
 * the 1x1 CONV_2D before it computed inside (pw_depthwise_gpu). Unlike
 * conv_gpu.cl's GEMM-shaped convolutions they stage no input tiles: a KxK
 * depthwise has too little arithmetic per value for a tile to pay for its
 * barrier. Each kernel takes its conv.cl sibling's arguments
 * (depthwise_conv2d_x4), with what it fuses inserted, so ops_conv.c's
 * set_conv_args sets them. FP32 accumulation in every precision.
 *
 * ============================ LAUNCH CONTRACT ============================
 * Notation: output shape (W, H, C, B) = dst_shape, S_out = ceil(C / 4),
 * ceil(a / b) = (a + b - 1) / b, round_up(a, b) = ceil(a, b) * b.
 * Every kernel has a fixed work-group size, declared with
 * reqd_work_group_size: launch with exactly the local size below. `total`
 * is ignored (pass anything, e.g. the number of output float4s); bounds
 * come from the shapes.
 *
 * depthwise_gpu   (args as depthwise_conv2d_x4; depth multiplier 1)
 *   Defines (defaults):
 *     DWG_TX = 2   output pixels per work-item along x
 *     DWG_LX = 8   work-group size along x
 *     DWG_LY = 8   work-group size along y
 *     DWG_LX * DWG_LY <= 256.
 *   Weights: as encode_depthwise packs them, [S][KH][KW] float4, bias [S]
 *     float4.
 *   work_dim 3:
 *     global = (round_up(ceil(W, DWG_TX), DWG_LX), round_up(H, DWG_LY),
 *               S_out * B)
 *     local  = (DWG_LX, DWG_LY, 1)
 *   No __local memory.
 *
 * pw_depthwise_gpu  a 1x1 CONV_2D whose output only a DEPTHWISE_CONV_2D
 *   (multiplier 1) reads, in one launch (fuse_pw_dw.c): args as
 *   depthwise_gpu with the 1x1's inserted after dst_shape and its
 *   activation after pad_dil:
 *     (src, dst, weights, bias, src_shape, dst_shape, pw_weights, pw_bias,
 *      geom, pad_dil, pw_act, act, alpha, residual, epi, res_slices, dw_out,
 *      total)
 *   src is the 1x1's source; weights / bias / geom / pad_dil / act the
 *   depthwise's; pw_weights [S_mid][S_in][4 in-lanes] float4 over the 4
 *   output lanes, pw_bias [S_mid] float4 (as fully_connected's). dw_out =
 *   (W, H, mean, 0): the depthwise's output size, and 1 where dst is its
 *   mean over H and W instead ([1, C], batch 1, one band, no epilogue).
 *   work_dim 2:
 *     global = (PWDW_WG * bands, S_out * B), local = (PWDW_WG, 1)
 *   a group per band of output rows, slice and batch item; a band's source
 *   rows times the source width fit PWDW_LOCAL (fuse_pw_dw.h
 *   pw_dw_band_rows; the kernel takes ceil(H / bands) rows, never more).
 *   __local memory: PWDW_LOCAL + PWDW_WG float4s (17 KiB).
 *
 * ========================================================================
 *
 * Epilogue of every kernel (as conv.cl): bias, sum, then common.cl's
 * convg_store: activate(act), the fused epilogue with the residual read at
 * its own index (a residual of fewer slices adds zero to the slices it
 * lacks), tail lanes zeroed. */

/* Tiles and default groups: kernel_abi.h. */
#if DWG_LX * DWG_LY > 256
#error "work-groups are limited to 256 work-items"
#endif
#if DWG_TX < 1
#error "tile sizes must be positive"
#endif

/* Depthwise, multiplier 1: a work-item computes DWG_TX pixels of one row of
 * one slice, at x = tile + lx + i * DWG_LX, so neighbouring work-items read
 * neighbouring float4s; a work-group shares (slice, batch), so its weight
 * and bias loads are uniform (one cached read serves them all). Each input
 * float4 is reused across taps from the cache, not from local memory: a
 * KxK depthwise has too little arithmetic per value for a staged tile to
 * pay for its barrier. No barriers, so out-of-range work-items return. */
#define DEPTHWISE_GPU_PARAMS \
  __global const storage_t* src, __global storage_t* dst, __global const float4* weights, __global const float4* bias, \
  int4 src_shape, int4 dst_shape, int4 geom, int4 pad_dil, int act, __global const float4* alpha, \
  __global const storage_t* residual, int4 epi, int res_slices, int total
#define DEPTHWISE_GPU_ARGS \
  src, dst, weights, bias, src_shape, dst_shape, geom, pad_dil, act, alpha, residual, epi, res_slices, total
#if GD_SELECTED(depthwise_gpu, 0)
GROUP_KERNEL(depthwise_gpu, DWG_LX, DWG_LY, 1, DEPTHWISE_GPU_PARAMS, DEPTHWISE_GPU_ARGS) {
  int so = SLICES(dst_shape);
  int y = grp.y * DWG_LY + loc.y, z = grp.z;
  int b = z / so, s = z - b * so;
  int x0 = grp.x * (DWG_LX * DWG_TX) + loc.x;
  if (y >= dst_shape.y || x0 >= dst_shape.x) return;
  float4 acc[DWG_TX];
  float4 bv = bias[s];
#pragma unroll
  for (int i = 0; i < DWG_TX; ++i) acc[i] = bv;
  int sy0 = y * geom.w - pad_dil.y;
  int sx0 = x0 * geom.z - pad_dil.x, step = DWG_LX * geom.z; /* source x of pixel i: sx0 + i * step */
  __global const float4* w = weights + s * geom.y * geom.x;
  int chan = (b * SLICES(src_shape) + s) * src_shape.y;
  for (int ky = 0; ky < geom.y; ++ky) {
    int sy = sy0 + ky * pad_dil.w;
    if (sy < 0 || sy >= src_shape.y) continue;
    int row = (chan + sy) * src_shape.x;
    for (int kx = 0; kx < geom.x; ++kx) {
      float4 wk = w[ky * geom.x + kx];
      int sx = sx0 + kx * pad_dil.z;
#pragma unroll
      for (int i = 0; i < DWG_TX; ++i) {
        int xi = sx + i * step;
        /* Pixels past the output row may read inside the input; they are
         * not stored. */
        if (xi >= 0 && xi < src_shape.x) acc[i] = fma(LOAD4(src, row + xi), wk, acc[i]);
      }
    }
  }
#pragma unroll
  for (int i = 0; i < DWG_TX; ++i) {
    int x = x0 + i * DWG_LX;
    if (x < dst_shape.x) convg_store(acc[i], dst, dst_shape, b, s, y * dst_shape.x + x, act, alpha, residual, epi,
                                     res_slices, total);
  }
}
#endif

/* A 1x1 and the depthwise that alone reads it in one launch (fuse_pw_dw.h):
 * a work-group makes the 1x1's slice s over the source rows its band of
 * output rows reads, into __local memory (work-item i: values i, i + WG,
 * ..., each a dot product over the source slices, whose weights every
 * work-item reads at once), then the depthwise of slice s over the band
 * from there. Only rows shared by neighbouring bands are computed twice;
 * the expanded tensor is never written. */
#define PW_DEPTHWISE_GPU_PARAMS \
  __global const storage_t* src, __global storage_t* dst, __global const float4* weights, __global const float4* bias, \
  int4 src_shape, int4 dst_shape, __global const float4* pw_weights, __global const float4* pw_bias, int4 geom, \
  int4 pad_dil, int pw_act, int act, __global const float4* alpha, __global const storage_t* residual, int4 epi, \
  int res_slices, int4 dw_out, int total
#define PW_DEPTHWISE_GPU_ARGS \
  src, dst, weights, bias, src_shape, dst_shape, pw_weights, pw_bias, geom, pad_dil, pw_act, act, alpha, residual, \
  epi, res_slices, dw_out, total
#if GD_SELECTED(pw_depthwise_gpu, 1)
GROUP_KERNEL(pw_depthwise_gpu, PWDW_WG, 1, PWDW_LOCAL + PWDW_WG, PW_DEPTHWISE_GPU_PARAMS, PW_DEPTHWISE_GPU_ARGS) {
  __local float4* mid = lmem;                /* PWDW_LOCAL */
  __local float4* part = lmem + PWDW_LOCAL;  /* PWDW_WG */
  int lid = loc.x, bands = ngrp.x;
  int so = SLICES(dst_shape), si = SLICES(src_shape);
  int z = grp.y, b = z / so, s = z - b * so;
  int rows = (dw_out.y + bands - 1) / bands;
  int oy0 = grp.x * rows, oy1 = min(oy0 + rows, dw_out.y);
  /* Source rows [lo, hi) that the band's taps reach inside the tensor. */
  int lo = max(oy0 * geom.w - pad_dil.y, 0);
  int hi = min((oy1 - 1) * geom.w - pad_dil.y + (geom.y - 1) * pad_dil.w + 1, src_shape.y);
  int w = src_shape.x, plane = w * src_shape.y, n = (hi - lo) * w;
  __global const float4* pw = pw_weights + s * si * 4;
  float4 pb = pw_bias[s];
  int base = b * si * plane + lo * w;
  for (int i = lid; i < n; i += PWDW_WG) {
    float4 acc = pb;
    for (int c = 0; c < si; ++c) {
      float4 x = LOAD4(src, base + c * plane + i);
      acc = fma((float4)(x.x), pw[4 * c],
                fma((float4)(x.y), pw[4 * c + 1], fma((float4)(x.z), pw[4 * c + 2], fma((float4)(x.w), pw[4 * c + 3], acc))));
    }
    mid[i] = activate(acc, pw_act);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  __global const float4* wk = weights + s * geom.y * geom.x;
  float4 bv = bias[s];
  int ow = dw_out.x, m = (oy1 - oy0) * ow;
  float4 sum = (float4)(0.0f);
  for (int i = lid; i < m; i += PWDW_WG) {
    int r = i / ow, ox = i - r * ow, oy = oy0 + r;
    int sy0 = oy * geom.w - pad_dil.y, sx0 = ox * geom.z - pad_dil.x;
    float4 acc = bv;
    for (int ky = 0; ky < geom.y; ++ky) {
      int sy = sy0 + ky * pad_dil.w;
      if (sy < 0 || sy >= src_shape.y) continue;
      int row = (sy - lo) * w;
      for (int kx = 0; kx < geom.x; ++kx) {
        int sx = sx0 + kx * pad_dil.z;
        if (sx >= 0 && sx < w) acc = fma(mid[row + sx], wk[ky * geom.x + kx], acc);
      }
    }
    if (dw_out.z)
      sum += activate(acc, act);
    else
      convg_store(acc, dst, dst_shape, b, s, oy * ow + ox, act, alpha, residual, epi, res_slices, total);
  }
  if (!dw_out.z) return;
  /* The mean: partial sums through a __local tree (barriers in every
   * work-item: dw_out.z is the same for the whole launch). */
  part[lid] = sum;
  for (int off = PWDW_WG / 2; off > 0; off >>= 1) {
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < off) part[lid] += part[lid + off];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid == 0) STORE4(mask_tail(part[0] / (float)(dw_out.x * dw_out.y), s, dst_shape.z), dst, s);
}
#endif
