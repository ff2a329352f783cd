/* ARG_MAX / ARG_MIN along one axis (0 x, 1 y, 2 c, 3 b). dst has the
 * source's shape with that axis at size 1; it holds the index as a float.
 * As TFLite's kernel: the first element is the start and only a strictly
 * better one replaces it, so ties keep the first index (and a NaN never
 * wins after the first position). One work-item per output float4. */
#define ARG_MINMAX_PARAMS \
  __global const storage_t* src, __global storage_t* dst, int4 src_shape, int4 dst_shape, int axis, int is_min, \
  int total
#define ARG_MINMAX_ARGS src, dst, src_shape, dst_shape, axis, is_min, total
OUTLINED_KERNEL(arg_minmax, ARG_MINMAX_PARAMS, ARG_MINMAX_ARGS) {
  if (gid >= total) return;
  int4 p = split_gid(gid, dst_shape);
  int plane = src_shape.y * src_shape.x;
  if (axis == 2) {
    /* Over channels: one pixel's slices, lane by lane (dst has 1 channel). */
    int base = idx4(src_shape, p.w, 0, p.y, p.x);
    float best = LOAD4(src, base).x;
    int at = 0;
    for (int s = 0; s < SLICES(src_shape); ++s) {
      float4 v4 = LOAD4(src, base + s * plane);
      float v[4] = {v4.x, v4.y, v4.z, v4.w};
      for (int lane = 0; lane < 4; ++lane) {
        int c = s * 4 + lane;
        if (c >= src_shape.z) break;
        int better = is_min ? v[lane] < best : v[lane] > best;
        if (better) best = v[lane], at = c;
      }
    }
    STORE4((float4)((float)at, 0.0f, 0.0f, 0.0f), dst, gid);
    return;
  }
  /* Along x, y or b: four channels at once, one float4 per step. */
  int start, step, n;
  if (axis == 0) {
    start = idx4(src_shape, p.w, p.z, p.y, 0), step = 1, n = src_shape.x;
  } else if (axis == 1) {
    start = idx4(src_shape, p.w, p.z, 0, p.x), step = src_shape.x, n = src_shape.y;
  } else {
    start = idx4(src_shape, 0, p.z, p.y, p.x), step = SLICES(src_shape) * plane, n = src_shape.w;
  }
  float4 best = LOAD4(src, start);
  int4 at = (int4)(0);
  for (int i = 1; i < n; ++i) {
    float4 v = LOAD4(src, start + i * step);
    int4 better = is_min ? isless(v, best) : isgreater(v, best);
    best = select(best, v, better);
    at = select(at, (int4)(i), better);
  }
  STORE4(mask_tail(convert_float4(at), p.z, dst_shape.z), dst, gid);
}
