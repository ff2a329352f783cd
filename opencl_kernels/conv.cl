/* CONV_2D and DEPTHWISE_CONV_2D. One work-item per output float4 (4 output
 * channels of one pixel), FP32 accumulation in every precision.
 *
 * conv2d weights: float4 blocks [S_out][KH][KW][S_in][4 in-lanes], each
 * block holding 4 output channels for one input channel, so one input
 * float4 meets 4 weight float4s. Bias: [S_out] float4 (zero padded).
 * geom: (kw, kh, stride_x, stride_y); pad_dil: (pad_x, pad_y, dil_x, dil_y).
 * alpha / residual / epi: the fused epilogue (common.cl). */
__kernel void conv2d(__global const storage_t* src, __global storage_t* dst, __global const float4* weights,
                     __global const float4* bias, int4 src_shape, int4 dst_shape, int4 geom, int4 pad_dil, int act,
                     __global const float4* alpha, __global const storage_t* residual, int4 epi, int total) {
  int gid = get_global_id(0);
  if (gid >= total) return;
  int4 p = split_gid(gid, dst_shape);
  int src_slices = SLICES(src_shape);
  float4 acc = bias[p.z];
  int x0 = p.x * geom.z - pad_dil.x;
  int y0 = p.y * geom.w - pad_dil.y;
  for (int ky = 0; ky < geom.y; ++ky) {
    int sy = y0 + ky * pad_dil.w;
    if (sy < 0 || sy >= src_shape.y) continue;
    for (int kx = 0; kx < geom.x; ++kx) {
      int sx = x0 + kx * pad_dil.z;
      if (sx < 0 || sx >= src_shape.x) continue;
      __global const float4* w = weights + ((p.z * geom.y + ky) * geom.x + kx) * src_slices * 4;
      int si_stride = src_shape.y * src_shape.x;
      int sidx = idx4(src_shape, p.w, 0, sy, sx);
      for (int si = 0; si < src_slices; ++si) {
        float4 v = LOAD4(src, sidx + si * si_stride);
        acc = fma((float4)(v.x), w[0], acc);
        acc = fma((float4)(v.y), w[1], acc);
        acc = fma((float4)(v.z), w[2], acc);
        acc = fma((float4)(v.w), w[3], acc);
        w += 4;
      }
    }
  }
  acc = epilogue(activate(acc, act), epi, alpha, residual, p.z, gid);
  acc = mask_tail(acc, p.z, dst_shape.z);
  STORE4(acc, dst, gid);
}

/* Depthwise with multiplier 1: weights [S][KH][KW] float4, bias [S]. */
__kernel void depthwise_conv2d(__global const storage_t* src, __global storage_t* dst, __global const float4* weights,
                               __global const float4* bias, int4 src_shape, int4 dst_shape, int4 geom, int4 pad_dil,
                               int act, __global const float4* alpha, __global const storage_t* residual,
                               int4 epi, int total) {
  int gid = get_global_id(0);
  if (gid >= total) return;
  int4 p = split_gid(gid, dst_shape);
  float4 acc = bias[p.z];
  int x0 = p.x * geom.z - pad_dil.x;
  int y0 = p.y * geom.w - pad_dil.y;
  __global const float4* w = weights + p.z * geom.y * geom.x;
  for (int ky = 0; ky < geom.y; ++ky) {
    int sy = y0 + ky * pad_dil.w;
    if (sy < 0 || sy >= src_shape.y) continue;
    for (int kx = 0; kx < geom.x; ++kx) {
      int sx = x0 + kx * pad_dil.z;
      if (sx < 0 || sx >= src_shape.x) continue;
      acc = fma(LOAD4(src, idx4(src_shape, p.w, p.z, sy, sx)), w[ky * geom.x + kx], acc);
    }
  }
  acc = epilogue(activate(acc, act), epi, alpha, residual, p.z, gid);
  acc = mask_tail(acc, p.z, dst_shape.z);
  STORE4(acc, dst, gid);
}

/* Depthwise with any multiplier m: output channel c reads input channel
 * c / m. Same weight layout as above over output channels. */
__kernel void depthwise_conv2d_multiplier(__global const storage_t* src, __global storage_t* dst,
                                          __global const float4* weights, __global const float4* bias,
                                          int4 src_shape, int4 dst_shape, int4 geom, int4 pad_dil, int act,
                                          __global const float4* alpha, __global const storage_t* residual,
                                          int4 epi, int multiplier, int total) {
  int gid = get_global_id(0);
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
  acc = epilogue(activate(acc, act), epi, alpha, residual, p.z, gid);
  acc = mask_tail(acc, p.z, dst_shape.z);
  STORE4(acc, dst, gid);
}

/* conv2d computing 4 horizontally adjacent output pixels per work-item:
 * each weight float4 loaded once serves four pixels. Same arguments as
 * conv2d; `total` counts work-items over (ceil(W/4), H, S_out, B). */
__kernel void conv2d_x4(__global const storage_t* src, __global storage_t* dst, __global const float4* weights,
                        __global const float4* bias, int4 src_shape, int4 dst_shape, int4 geom, int4 pad_dil, int act,
                        __global const float4* alpha, __global const storage_t* residual, int4 epi, int total) {
  int gid = get_global_id(0);
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
        float4 w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3];
        acc0 = fma((float4)(i0.x), w0, fma((float4)(i0.y), w1, fma((float4)(i0.z), w2, fma((float4)(i0.w), w3, acc0))));
        acc1 = fma((float4)(i1.x), w0, fma((float4)(i1.y), w1, fma((float4)(i1.z), w2, fma((float4)(i1.w), w3, acc1))));
        acc2 = fma((float4)(i2.x), w0, fma((float4)(i2.y), w1, fma((float4)(i2.z), w2, fma((float4)(i2.w), w3, acc2))));
        acc3 = fma((float4)(i3.x), w0, fma((float4)(i3.y), w1, fma((float4)(i3.z), w2, fma((float4)(i3.w), w3, acc3))));
        w += 4;
      }
    }
  }
  float4 accs[4] = {acc0, acc1, acc2, acc3};
  for (int i = 0; i < 4 && x + i < dst_shape.x; ++i) {
    int o = idx4(dst_shape, p.w, p.z, p.y, x + i);
    float4 r = epilogue(activate(accs[i], act), epi, alpha, residual, p.z, o);
    STORE4(mask_tail(r, p.z, dst_shape.z), dst, o);
  }
}

/* depthwise_conv2d (multiplier 1) over 4 horizontally adjacent pixels. */
__kernel void depthwise_conv2d_x4(__global const storage_t* src, __global storage_t* dst,
                                  __global const float4* weights, __global const float4* bias, int4 src_shape,
                                  int4 dst_shape, int4 geom, int4 pad_dil, int act, __global const float4* alpha,
                                  __global const storage_t* residual, int4 epi, int total) {
  int gid = get_global_id(0);
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
  float4 accs[4] = {acc0, acc1, acc2, acc3};
  for (int i = 0; i < 4 && x + i < dst_shape.x; ++i) {
    int o = idx4(dst_shape, p.w, p.z, p.y, x + i);
    float4 r = epilogue(activate(accs[i], act), epi, alpha, residual, p.z, o);
    STORE4(mask_tail(r, p.z, dst_shape.z), dst, o);
  }
}
