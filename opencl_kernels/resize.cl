/* RESIZE_BILINEAR, as TFLite's reference kernel computes it: the source
 * coordinate v = (o + 0.5) * scale - 0.5 with half-pixel centers, else
 * o * scale; lower index max(floor(v), 0), upper index min(ceil(v),
 * size - 1); weights from v minus the lower index, unclamped (so a
 * coordinate before the first pixel weighs that pixel 1 in total).
 * Separate multiplies and adds, like the CPU's C++. */
#pragma OPENCL FP_CONTRACT OFF

GD_INLINE float resize_coord(int o, float scale, int half_pixel) {
  return half_pixel ? ((float)o + 0.5f) * scale - 0.5f : (float)o * scale;
}

/* A work-item computes RESIZE_PIXELS output pixels along a row of one
 * slice: RESIZE_TILE in the CPU set, where the row arithmetic and index
 * split happen once per tile instead of per float4 (PoCL spent ~9 ns per
 * float4 on them), 1 in the GPU set. Work-items run over
 * (ceil(W / RESIZE_PIXELS), H, slices, B). */
#ifndef RESIZE_PIXELS
#define RESIZE_PIXELS RESIZE_TILE
#endif
#define RESIZE_BILINEAR_PARAMS \
  __global const storage_t* src, __global storage_t* dst, int4 src_shape, int4 dst_shape, \
  float scale_x, float scale_y, int half_pixel, int total
#define RESIZE_BILINEAR_ARGS src, dst, src_shape, dst_shape, scale_x, scale_y, half_pixel, total
OUTLINED_KERNEL(resize_bilinear, RESIZE_BILINEAR_PARAMS, RESIZE_BILINEAR_ARGS) {
  if (gid >= total) return;
  int4 tiles = (int4)((dst_shape.x + RESIZE_PIXELS - 1) / RESIZE_PIXELS, dst_shape.y, dst_shape.z, dst_shape.w);
  int4 p = split_gid(gid, tiles);
  float fy = resize_coord(p.y, scale_y, half_pixel);
  /* The lower index also stays inside the source, which TFLite's
   * arithmetic guarantees and rounding must not break. */
  int y0 = min(max((int)floor(fy), 0), src_shape.y - 1);
  int y1 = min((int)ceil(fy), src_shape.y - 1);
  float dy = fy - (float)y0;
  int row0 = idx4(src_shape, p.w, p.z, y0, 0), row1 = idx4(src_shape, p.w, p.z, y1, 0);
  int x = p.x * RESIZE_PIXELS;
  int o = idx4(dst_shape, p.w, p.z, p.y, x);
  int n = min(RESIZE_PIXELS, dst_shape.x - x);
  for (int i = 0; i < n; ++i) {
    float fx = resize_coord(x + i, scale_x, half_pixel);
    int x0 = min(max((int)floor(fx), 0), src_shape.x - 1);
    int x1 = min((int)ceil(fx), src_shape.x - 1);
    float dx = fx - (float)x0;
    float4 v00 = LOAD4(src, row0 + x0);
    float4 v10 = LOAD4(src, row1 + x0);
    float4 v01 = LOAD4(src, row0 + x1);
    float4 v11 = LOAD4(src, row1 + x1);
    float4 r = v00 * (1.0f - dy) * (1.0f - dx) + v10 * dy * (1.0f - dx) + v01 * (1.0f - dy) * dx + v11 * dy * dx;
    STORE4(mask_tail(r, p.z, dst_shape.z), dst, o + i);
  }
}

/* RESIZE_NEAREST_NEIGHBOR, as TFLite's reference kernel: source index
 * floor((o + offset) * scale), or round() with align_corners, offset 0.5
 * with half-pixel centers; clamped to size - 1 (and to 0 with half-pixel
 * centers). */
GD_INLINE int nearest_coord(int o, float scale, int size, int align_corners, int half_pixel) {
  float v = ((float)o + (half_pixel ? 0.5f : 0.0f)) * scale;
  int s = min(align_corners ? (int)round(v) : (int)floor(v), size - 1);
  return half_pixel ? max(s, 0) : s;
}

#define RESIZE_NEAREST_PARAMS \
  __global const storage_t* src, __global storage_t* dst, int4 src_shape, int4 dst_shape, float scale_x, \
  float scale_y, int align_corners, int half_pixel, int total
#define RESIZE_NEAREST_ARGS src, dst, src_shape, dst_shape, scale_x, scale_y, align_corners, half_pixel, total
OUTLINED_KERNEL(resize_nearest, RESIZE_NEAREST_PARAMS, RESIZE_NEAREST_ARGS) {
  if (gid >= total) return;
  int4 p = split_gid(gid, dst_shape);
  int sy = nearest_coord(p.y, scale_y, src_shape.y, align_corners, half_pixel);
  int sx = nearest_coord(p.x, scale_x, src_shape.x, align_corners, half_pixel);
  STORE4(LOAD4(src, idx4(src_shape, p.w, p.z, sy, sx)), dst, gid);
}
