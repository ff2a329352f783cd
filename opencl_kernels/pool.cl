/* MAX_POOL_2D / AVERAGE_POOL_2D. geom: (kw, kh, stride_x, stride_y);
 * pad: (pad_x, pad_y). Average divides by the number of in-bounds taps, as
 * TFLite does; max ignores out-of-bounds taps. */
#define POOL2D_PARAMS \
  __global const storage_t* src, __global storage_t* dst, int4 src_shape, int4 dst_shape, int4 geom, \
  int2 pad, int is_max, int act, int total
#define POOL2D_ARGS src, dst, src_shape, dst_shape, geom, pad, is_max, act, total
OUTLINED_KERNEL(pool2d, POOL2D_PARAMS, POOL2D_ARGS) {
  if (gid >= total) return;
  int4 p = split_gid(gid, dst_shape);
  int x0 = p.x * geom.z - pad.x;
  int y0 = p.y * geom.w - pad.y;
  float4 acc = is_max ? (float4)(-INFINITY) : (float4)(0.0f);
  int count = 0;
  for (int ky = 0; ky < geom.y; ++ky) {
    int sy = y0 + ky;
    if (sy < 0 || sy >= src_shape.y) continue;
    for (int kx = 0; kx < geom.x; ++kx) {
      int sx = x0 + kx;
      if (sx < 0 || sx >= src_shape.x) continue;
      float4 v = LOAD4(src, idx4(src_shape, p.w, p.z, sy, sx));
      acc = is_max ? fmax(acc, v) : acc + v;
      ++count;
    }
  }
  if (!is_max) acc = count > 0 ? acc / (float)count : (float4)(0.0f);
  if (count == 0) acc = (float4)(0.0f);
  acc = mask_tail(activate(acc, act), p.z, dst_shape.z);
  STORE4(acc, dst, gid);
}
