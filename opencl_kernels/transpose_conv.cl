/* TRANSPOSE_CONV and MediaPipe's Convolution2DTransposeBias, as a gather:
 * one work-item per output float4 sums the input pixels that the scatter
 * form (TFLite's reference kernel) would add into it. Output (oy, ox)
 * receives input (iy, ix) through tap (ky, kx) when
 * oy + pad_y - ky == iy * stride_y (and likewise for x).
 * Weights and bias use conv2d's packing ([S_out][KH][KW][S_in][4 in][4 out]
 * float4 blocks; bias [S_out] float4). geom: (kw, kh, stride_x, stride_y);
 * act: a fused activation (an activation node after it, fuse_epilogue.c). */
#define TRANSPOSE_CONV2D_PARAMS \
  __global const storage_t* src, __global storage_t* dst, int4 src_shape, int4 dst_shape, \
  __global const float4* weights, __global const float4* bias, int4 geom, int2 pad, int act, int total
#define TRANSPOSE_CONV2D_ARGS src, dst, src_shape, dst_shape, weights, bias, geom, pad, act, total
OUTLINED_KERNEL(transpose_conv2d, TRANSPOSE_CONV2D_PARAMS, TRANSPOSE_CONV2D_ARGS) {
  if (gid >= total) return;
  int4 p = split_gid(gid, dst_shape);
  int src_slices = SLICES(src_shape);
  int si_stride = src_shape.y * src_shape.x;
  float4 acc = bias[p.z];
  for (int ky = 0; ky < geom.y; ++ky) {
    int ty = p.y + pad.y - ky;
    if (ty < 0 || ty % geom.w != 0) continue;
    int sy = ty / geom.w;
    if (sy >= src_shape.y) continue;
    for (int kx = 0; kx < geom.x; ++kx) {
      int tx = p.x + pad.x - kx;
      if (tx < 0 || tx % geom.z != 0) continue;
      int sx = tx / geom.z;
      if (sx >= src_shape.x) continue;
      __global const float4* w = weights + ((p.z * geom.y + ky) * geom.x + kx) * src_slices * 4;
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
  STORE4(mask_tail(activate(acc, act), p.z, dst_shape.z), dst, gid);
}
