/* L2_NORMALIZATION over channels: x / max(sqrt(sum of x^2), 1e-6), TFLite's
 * epsilon, which bounds the norm rather than being added to it. One
 * work-item per pixel (b, y, x) walks its slices twice; the padded lanes
 * of the last slice are zero, so they add nothing to the sum. */
#define L2_NORM_PARAMS __global const storage_t* src, __global storage_t* dst, int4 shape, int total
#define L2_NORM_ARGS src, dst, shape, total
OUTLINED_KERNEL(l2_norm, L2_NORM_PARAMS, L2_NORM_ARGS) {
  if (gid >= total) return;
  int slices = SLICES(shape);
  int stride = shape.y * shape.x;
  int base = pixel_base(gid, shape);
  float4 sq = (float4)(0.0f);
  for (int s = 0; s < slices; ++s) {
    float4 v = LOAD4(src, base + s * stride);
    sq += v * v;
  }
  float norm = fmax(sqrt((sq.x + sq.y) + (sq.z + sq.w)), 1e-6f);
  for (int s = 0; s < slices; ++s)
    STORE4(mask_tail(LOAD4(src, base + s * stride) / norm, s, shape.z), dst, base + s * stride);
}
