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
