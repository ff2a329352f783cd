/* MediaPipe's MaxPoolingWithArgmax2D and MaxUnpooling2D
 * (mediapipe/util/tflite/operations/max_pool_argmax.cc, max_unpooling.cc).
 * geom: (kw, kh, stride_x, stride_y); pad: (pad_x, pad_y).
 *
 * The argmax is the tap's position inside its window, fy * kw + fx, stored
 * as a float plus 0.1 (so truncation gives it back exactly); ties keep the
 * first tap in scan order, like the CPU's strict '>'. */
#define MAX_POOL_WITH_ARGMAX_PARAMS \
  __global const storage_t* src, __global storage_t* dst, int4 src_shape, int4 dst_shape, __global storage_t* indices, \
  int4 geom, int2 pad, int act, int total
#define MAX_POOL_WITH_ARGMAX_ARGS src, dst, src_shape, dst_shape, indices, geom, pad, act, total
OUTLINED_KERNEL(max_pool_with_argmax, MAX_POOL_WITH_ARGMAX_PARAMS, MAX_POOL_WITH_ARGMAX_ARGS) {
  if (gid >= total) return;
  int4 p = split_gid(gid, dst_shape);
  int x0 = p.x * geom.z - pad.x;
  int y0 = p.y * geom.w - pad.y;
  int fx0 = max(0, -x0), fx1 = min(geom.x, src_shape.x - x0);
  int fy0 = max(0, -y0), fy1 = min(geom.y, src_shape.y - y0);
  float4 best = (float4)(-FLT_MAX);
  int4 arg = (int4)(0);
  for (int fy = fy0; fy < fy1; ++fy)
    for (int fx = fx0; fx < fx1; ++fx) {
      float4 v = LOAD4(src, idx4(src_shape, p.w, p.z, y0 + fy, x0 + fx));
      int4 gt = isgreater(v, best);
      best = select(best, v, gt);
      arg = select(arg, (int4)(fy * geom.x + fx), gt);
    }
  STORE4(mask_tail(activate(best, act), p.z, dst_shape.z), dst, gid);
  STORE4(mask_tail(convert_float4(arg) + 0.1f, p.z, dst_shape.z), indices, gid);
}

/* The inverse, as a gather: output (oy, ox) takes the value of the input
 * pixel whose window holds it at the recorded argmax, the last such pixel
 * in scan order winning (the CPU scatters in that order); else 0. An index
 * outside its window (only a hand-made indices tensor has one) matches no
 * output here, where the CPU writes it outside the window. */
#define MAX_UNPOOLING_PARAMS \
  __global const storage_t* src, __global storage_t* dst, int4 src_shape, int4 dst_shape, \
  __global const storage_t* indices, int4 geom, int2 pad, int total
#define MAX_UNPOOLING_ARGS src, dst, src_shape, dst_shape, indices, geom, pad, total
OUTLINED_KERNEL(max_unpooling, MAX_UNPOOLING_PARAMS, MAX_UNPOOLING_ARGS) {
  if (gid >= total) return;
  int4 p = split_gid(gid, dst_shape);
  int ty = p.y + pad.y, tx = p.x + pad.x;
  int lo_y = ty - geom.y + 1, lo_x = tx - geom.x + 1;
  int iy0 = lo_y <= 0 ? 0 : (lo_y + geom.w - 1) / geom.w;
  int ix0 = lo_x <= 0 ? 0 : (lo_x + geom.z - 1) / geom.z;
  int iy1 = min(ty / geom.w, src_shape.y - 1);
  int ix1 = min(tx / geom.z, src_shape.x - 1);
  float4 r = (float4)(0.0f);
  for (int iy = iy0; iy <= iy1; ++iy)
    for (int ix = ix0; ix <= ix1; ++ix) {
      int target = (ty - iy * geom.w) * geom.x + (tx - ix * geom.z);
      int i = idx4(src_shape, p.w, p.z, iy, ix);
      int4 got = convert_int4_sat_rtz(LOAD4(indices, i));
      r = select(r, LOAD4(src, i), got == (int4)(target));
    }
  STORE4(mask_tail(r, p.z, dst_shape.z), dst, gid);
}
