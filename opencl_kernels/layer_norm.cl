/* The statistics of a layer norm over channels (fuse_layer_norm.c): per
 * pixel (b, y, x), mean = sum(x) / C and rstd = rsqrt(mean((x - mean)^2)
 * + eps), the five nodes MEAN, SQUARED_DIFFERENCE, MEAN, ADD and RSQRT in
 * one pass over the row. Two passes as the CPU's nodes compute it (no
 * E[x^2] - mean^2 cancellation); the padded lanes of the last slice are
 * zero in the input and masked out of the squared differences. Both
 * outputs have C = 1: (value, 0, 0, 0). */
#define NORM_STATS_PARAMS \
  __global const storage_t* src, __global storage_t* mean_dst, __global storage_t* rstd_dst, int4 shape, int total, \
  float eps
#define NORM_STATS_ARGS src, mean_dst, rstd_dst, shape, total, eps
OUTLINED_KERNEL(norm_stats, NORM_STATS_PARAMS, NORM_STATS_ARGS) {
  if (gid >= total) return;
  int slices = SLICES(shape);
  int stride = shape.y * shape.x;
  int base = pixel_base(gid, shape);
  float4 acc = (float4)(0.0f);
  for (int s = 0; s < slices; ++s) acc += LOAD4(src, base + s * stride);
  float mean = ((acc.x + acc.y) + (acc.z + acc.w)) / (float)shape.z;
  float4 sq = (float4)(0.0f);
  for (int s = 0; s < slices; ++s) {
    float4 d = mask_tail(LOAD4(src, base + s * stride) - mean, s, shape.z);
    sq += d * d;
  }
  float var = ((sq.x + sq.y) + (sq.z + sq.w)) / (float)shape.z;
  /* With one slice, pixel gid's index in the outputs is gid. */
  STORE4((float4)(mean, 0.0f, 0.0f, 0.0f), mean_dst, gid);
  STORE4((float4)(rsqrt(var + eps), 0.0f, 0.0f, 0.0f), rstd_dst, gid);
}
